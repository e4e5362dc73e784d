#include "spec/DataSection.hpp"

#include "targets/Registry.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace ddl;

namespace {
const std::string k_head = "apiVersion: ddl/v1\nname: demo\ntarget: local\n";

SpecLoadResult load_in(const TempDir& dir, const std::string& body) {
    return load_spec_string(k_head + body, dir.path() + "/cluster.yaml");
}

bool says(const SpecLoadResult& r, const std::string& text) {
    return r.diagnostics.format_text().find(text) != std::string::npos;
}
} // namespace

TEST_CASE("datasets: a folder from the spec's folder, a shared path and a URL, in order") {
    TempDir dir;
    std::filesystem::create_directory(dir.path() + "/imgs");
    auto r = load_in(dir, "datasets:\n"
                          "  - {name: imgs, source: ./imgs/, to: local, format: files}\n"
                          "  - {name: shards_1, source: \"shared:sets/shards/\", to: local, format: shards}\n"
                          "  - {name: web, source: \"https://example.org/d.tar.gz?x=1\", to: shared}\n");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec);
    const auto& d = r.spec->datasets;
    REQUIRE(d.size() == 3);
    CHECK(d[0] == DatasetSpec{.name = "imgs",
                              .source = "./imgs/",
                              .kind = DatasetSpec::Source::folder,
                              .location = dir.path() + "/imgs",
                              .format = "files"});
    CHECK(d[1].kind == DatasetSpec::Source::shared);
    CHECK(d[1].location == "sets/shards");
    CHECK_FALSE(d[1].to_shared);
    CHECK(d[2].kind == DatasetSpec::Source::url);
    CHECK(d[2].to_shared);
    CHECK(d[2].format.empty());
    CHECK_FALSE(r.spec->to_json().contains("datasets"));
}

TEST_CASE("datasets: a bad name, a name given twice and an unknown to are reported at their place") {
    TempDir dir;
    auto r = load_in(dir, "datasets:\n"
                          "  - {name: Imgs, source: \"shared:a\", to: local}\n"
                          "  - {name: a, source: \"shared:a\", to: local}\n"
                          "  - {name: a, source: \"shared:b\", to: lokal}\n");
    CHECK_FALSE(r.spec);
    CHECK(says(r, "cluster.yaml:5:12: error: datasets[0].name must be a dataset name (got \"Imgs\")"));
    CHECK(says(r, "DDL_DATA_<NAME uppercased>"));
    CHECK(says(r, "cluster.yaml:7:12: error: dataset \"a\" is given twice"));
    CHECK(says(r, "cluster.yaml:7:39: error: datasets[2].to must be one of local, shared"));
    CHECK(says(r, "did you mean \"local\"?"));
}

TEST_CASE("datasets: a missing source or to, a folder that is not there, a URL of no archive") {
    TempDir dir;
    auto r = load_in(dir, "datasets:\n"
                          "  - {name: a, to: local}\n"
                          "  - {name: b, source: ./gone, to: local}\n"
                          "  - {name: c, source: \"https://example.org/data\", to: local}\n"
                          "  - {name: d, source: \"shared:../etc\"}\n");
    CHECK_FALSE(r.spec);
    CHECK(says(r, "cluster.yaml:5:5: error: missing required key \"source\" in datasets[0]"));
    CHECK(says(r, "datasets[1].source ./gone is not a folder (" + dir.path() + "/gone)"));
    CHECK(says(r, "datasets[2].source must name a .tar, .tar.gz, .tgz or .zip archive"));
    CHECK(says(r, "datasets[3].source shared:../etc must name a folder inside the shared folder"));
    CHECK(says(r, "missing required key \"to\" in datasets[3]"));
}

TEST_CASE("datasets: to: shared and shared: sources need the cluster's shared folder") {
    TempDir dir;
    auto r = load_in(dir, "services: {nfs: {enabled: false}}\n"
                          "datasets:\n"
                          "  - {name: a, source: \"shared:x\", to: local}\n"
                          "  - {name: b, source: \"http://127.0.0.1:8000/b.zip\", to: shared}\n");
    CHECK_FALSE(r.spec);
    CHECK(says(
        r,
        "cluster.yaml:6:23: error: datasets[0].source reads the cluster's shared folder, and it has none"));
    CHECK(says(r, "cluster.yaml:7:58: error: datasets[1].to: shared needs the cluster's shared folder"));
    CHECK(says(r, "stage it to every node with \"to: local\""));
}

TEST_CASE("datasets: a stored spec's relative folder is not looked for on this machine") {
    auto r = load_spec_string(k_head + "datasets: [{name: a, source: gone, to: local}]\n",
                              "demo (stored spec)", SpecOrigin::stored);
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec);
    CHECK(r.spec->datasets.at(0).location == "gone");
}

TEST_CASE("dataset names: lowercase, digits and _, starting with a letter") {
    CHECK(is_dataset_name("imagenet_1k"));
    CHECK_FALSE(is_dataset_name("1k"));
    CHECK_FALSE(is_dataset_name("a-b"));
    CHECK_FALSE(is_dataset_name(std::string(41, 'a')));
    CHECK_FALSE(is_dataset_name("dir"));
}
