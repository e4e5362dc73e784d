#include "cli/DataManifest.hpp"

#include "cli/Datasets.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace ddl;
using namespace ddl::cli;
namespace fs = std::filesystem;

namespace {
const std::string k_a(64, 'a'), k_b(64, 'b');

void put(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
}

Manifest manifest_of(const std::string& dir, const std::string& cache, bool all) {
    SystemProcessRunner proc;
    auto r = proc.run({.argv = manifest_argv(dir, cache, all)});
    REQUIRE(r);
    INFO(r->err);
    REQUIRE(r->success());
    auto m = parse_manifest(r->out);
    INFO((m ? "" : m.error().message));
    REQUIRE(m);
    return *m;
}

Manifest of(std::vector<ManifestEntry> files) {
    return Manifest{.files = std::move(files)};
}
} // namespace

TEST_CASE(
    "manifest: the program's lines are read, sorted by path; a bad line or a cut-off output is refused") {
    auto m = parse_manifest(k_b + " 7 z/b c.jpg\n" + k_a + " 0 a\n# hashed 1\n");
    REQUIRE(m);
    REQUIRE(m->files.size() == 2);
    CHECK(m->files[0] == ManifestEntry{"a", 0, k_a});
    CHECK(m->files[1] == ManifestEntry{"z/b c.jpg", 7, k_b});
    CHECK(m->hashed == 1);
    CHECK(m->bytes() == 7);
    auto bad = parse_manifest("xyz 7 a\n# hashed 0\n");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("manifest line 1 is not \"SHA256 SIZE PATH\"") != std::string::npos);
    CHECK_FALSE(parse_manifest(k_a + " 1 a\n"));
}

TEST_CASE("manifest diff: missing, changed by size or hash, extra, and equal manifests differ in nothing") {
    const auto src = of({{"a", 1, k_a}, {"b", 1, k_a}, {"c", 1, k_a}, {"d", 1, k_a}});
    const auto copy = of({{"b", 2, k_a}, {"c", 1, k_b}, {"d", 1, k_a}, {"e", 1, k_a}});
    const auto d = diff_manifests(src, copy);
    CHECK(d.missing == std::vector<std::string>{"a"});
    CHECK(d.changed == std::vector<std::string>{"b", "c"});
    CHECK(d.extra == std::vector<std::string>{"e"});
    CHECK(d.to_send() == std::vector<std::string>{"a", "b", "c"});
    CHECK(diff_manifests(src, src).empty());
    CHECK(diff_manifests(of({}), of({})).empty());
    CHECK(src.digest() != copy.digest());
    CHECK(src.digest() == of(src.files).digest());
}

TEST_CASE(
    "manifest program: SHA-256 per file, hashed again only when a file was written or all are asked for") {
    TempDir t;
    const std::string dir = t.path() + "/set", cache = t.path() + "/set.manifest";
    put(dir + "/one.txt", "abc");
    put(dir + "/sub dir/two.bin", "");
    put(dir + "/.ddl-partial/one.txt", "partial"); // rsync's partial file: not part of the data
    auto first = manifest_of(dir, cache, false);
    REQUIRE(first.files.size() == 2);
    CHECK(first.files[0] ==
          ManifestEntry{"one.txt", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"});
    CHECK(first.files[1] ==
          ManifestEntry{"sub dir/two.bin", 0,
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"});
    CHECK(first.hashed == 2);
    auto again = manifest_of(dir, cache, false);
    CHECK(again.hashed == 0);
    CHECK(again.files == first.files);
    // The same size, written in place: its ctime changed, so it is hashed again and the change is seen.
    put(dir + "/one.txt", "abd");
    auto changed = manifest_of(dir, cache, false);
    CHECK(changed.hashed == 1);
    CHECK(diff_manifests(first, changed).changed == std::vector<std::string>{"one.txt"});
    CHECK(manifest_of(dir, cache, true).hashed == 2);
}

TEST_CASE("manifest program: a folder that is not there fails") {
    TempDir t;
    SystemProcessRunner proc;
    auto r = proc.run({.argv = manifest_argv(t.path() + "/gone", t.path() + "/c", false)});
    REQUIRE(r);
    CHECK_FALSE(r->success());
    CHECK(r->err.find("no folder " + t.path() + "/gone") != std::string::npos);
}

TEST_CASE("dataset paths: the shared folder's ddl-data or each node's /var/lib/ddl/data; DDL_DATA_<NAME>") {
    Spec spec;
    spec.services.nfs_mount = "/mnt/team";
    spec.datasets = {{.name = "imgs_1k", .to_shared = true}, {.name = "val"}};
    CHECK(dataset_path(spec, spec.datasets[0]) == "/mnt/team/ddl-data/imgs_1k");
    CHECK(dataset_path(spec, spec.datasets[1]) == "/var/lib/ddl/data/val");
    CHECK(dataset_env(spec) ==
          std::map<std::string, std::string>{{"DDL_DATA_IMGS_1K", "/mnt/team/ddl-data/imgs_1k"},
                                             {"DDL_DATA_VAL", "/var/lib/ddl/data/val"}});
    CHECK(find_dataset(spec, "val") == &spec.datasets[1]);
    CHECK(find_dataset(spec, "nope") == nullptr);
}
