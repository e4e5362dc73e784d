#include "provision/RuntimeArchive.hpp"

#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sys/stat.h>

using namespace ddl;

namespace {

ProcessResult tar(const std::vector<std::string>& args) {
    SystemProcessRunner proc;
    Command c{.argv = {"tar"}};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    auto r = proc.run(c);
    REQUIRE(r.ok());
    return *r;
}

} // namespace

TEST_CASE("the runtime archive holds dist's files and links as GNU tar reads them, and nothing else") {
    TempDir dir;
    std::string dist = dir.path() + "/dist", archive = dir.path() + "/runtime.tar";
    REQUIRE(make_dirs(dist + "/bin").ok());
    REQUIRE(make_dirs(dist + "/lib").ok());
    REQUIRE(make_dirs(dist + "/python/pkg/__pycache__").ok());
    REQUIRE(write_file_atomic(dist + "/bin/prog", "#!/bin/sh\necho hi\n", 0755).ok());
    REQUIRE(write_file_atomic(dist + "/lib/libx.so.0.1", std::string(1000, 'x'), 0644).ok());
    std::filesystem::create_symlink("libx.so.0.1", dist + "/lib/libx.so.0");
    REQUIRE(write_file_atomic(dist + "/python/pkg/__init__.py", "", 0644).ok());
    REQUIRE(write_file_atomic(dist + "/python/pkg/__pycache__/x.pyc", "c", 0644).ok());
    // A path past ustar's 100-byte name field goes through its 155-byte prefix.
    std::string deep = "/python/" + std::string(90, 'd');
    REQUIRE(make_dirs(dist + deep).ok());
    REQUIRE(write_file_atomic(dist + deep + "/module_with_a_long_name.py", "pass\n", 0644).ok());

    auto packed = pack_runtime(dist);
    REQUIRE(packed.ok());
    REQUIRE(write_file_atomic(archive, *packed, 0600).ok());

    auto list = tar({"--list", "--file", archive});
    REQUIRE(list.exit_code == 0);
    CHECK(list.out == "./bin/prog\n./lib/libx.so.0\n./lib/libx.so.0.1\n./python/" + std::string(90, 'd') +
                          "/module_with_a_long_name.py\n./python/pkg/__init__.py\n");
    auto verbose = tar({"--list", "--verbose", "--numeric-owner", "--file", archive});
    CHECK(verbose.out.find("-rwxr-xr-x 0/0") != std::string::npos);
    CHECK(verbose.out.find("./lib/libx.so.0 -> libx.so.0.1") != std::string::npos);

    // What a node does: compare, unpack, compare again.
    std::string node = dir.path() + "/node";
    REQUIRE(make_dirs(node).ok());
    CHECK(tar({"--compare", "--file", archive, "--directory", node}).exit_code != 0);
    REQUIRE(tar({"--extract", "--file", archive, "--directory", node}).exit_code == 0);
    CHECK(tar({"--compare", "--file", archive, "--directory", node}).exit_code == 0);
    CHECK(read_file(node + "/lib/libx.so.0").value() == std::string(1000, 'x'));
    // The source folder itself compares equal: modes and times are the files' own.
    CHECK(tar({"--compare", "--file", archive, "--directory", dist}).exit_code == 0);
    // A file edited on the node is found.
    REQUIRE(write_file_atomic(node + "/bin/prog", "#!/bin/sh\necho changed\n", 0755).ok());
    CHECK(tar({"--compare", "--file", archive, "--directory", node}).exit_code != 0);
}

TEST_CASE("a missing or empty runtime folder is an error that says to build ddl") {
    TempDir dir;
    auto missing = pack_runtime(dir.path() + "/nope");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message.find("build ddl first") != std::string::npos);
    REQUIRE(make_dirs(dir.path() + "/empty/bin").ok());
    auto empty = pack_runtime(dir.path() + "/empty");
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.error().message.find("is empty") != std::string::npos);
}
