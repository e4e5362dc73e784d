#include "core/Log.hpp"

#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>

using namespace ddl;

TEST_CASE("a registered secret never reaches the log file, also inside logged command lines") {
    TempDir dir;
    std::string path = dir.path() + "/ddl.log";
    log::init(log::Level::verbose);
    log::add_file(path);
    const std::string secret = "s3cr3t-Marker-0x5eed";
    log::register_secret(secret);
    log::info("password is " + secret + " and again " + secret + ".");
    log::error(secret);
    // The process observer logs every argv before it runs.
    SystemProcessRunner proc;
    auto r = proc.run({.argv = {"true", "--token=" + secret}});
    REQUIRE(r.ok());
    log::close_file();
    auto text = read_file(path);
    REQUIRE(text.ok());
    CHECK(text->find(secret) == std::string::npos);
    CHECK(text->find("password is *** and again ***.") != std::string::npos);
    CHECK(text->find("--token=***") != std::string::npos);
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("redaction leaves text without secrets alone and ignores secrets too short to be safe") {
    log::register_secret("abc"); // would mangle ordinary words
    CHECK(log::redact("abcdef and more") == "abcdef and more");
    log::register_secret("overlapping-secret");
    CHECK(log::redact("xoverlapping-secretoverlapping-secrety") == "x******y");
}
