// Every folder under tests/diag holds a bad spec (cluster.yaml) and the exact diagnostics ddl must
// print for it (expected.txt). UPDATE_GOLDEN=1 rewrites the expectations; review them as a diff.
#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

using namespace ddl;
namespace fs = std::filesystem;

TEST_CASE("every bad-spec case in tests/diag gives exactly its expected diagnostics") {
    const fs::path root = fs::path(DDL_SOURCE_DIR) / "tests" / "diag";
    const bool update = std::getenv("UPDATE_GOLDEN") != nullptr;
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory()) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    REQUIRE(cases.size() >= 40);
    for (const auto& dir : cases) {
        auto text = read_file((dir / "cluster.yaml").string());
        REQUIRE(text.ok());
        auto result = load_spec_string(*text, "cluster.yaml");
        std::string got = result.diagnostics.format_text();
        std::string expected_path = (dir / "expected.txt").string();
        if (update) {
            REQUIRE(write_file_atomic(expected_path, got, 0644).ok());
            continue;
        }
        auto expected = read_file(expected_path);
        INFO("case " << dir.filename().string());
        REQUIRE(expected.ok());
        CHECK(got == *expected);
        // A case that names an error must fail validation; one that expects nothing must pass.
        CHECK(result.spec.has_value() == expected->empty());
    }
}

TEST_CASE("a 10 MB spec is refused before parsing, without a crash") {
    std::string huge = "apiVersion: ddl/v1\nname: demo\ntarget: local\n";
    huge += "# " + std::string(10 * 1024 * 1024, 'x') + "\n";
    auto r = load_spec_string(huge, "big.yaml");
    REQUIRE_FALSE(r.spec.has_value());
    REQUIRE(r.diagnostics.all().size() == 1);
    CHECK(r.diagnostics.all()[0].message.find("at most 1024 KiB") != std::string::npos);
}

TEST_CASE("load_file refuses a file over the size limit with the reason") {
    TempDir dir;
    std::string p = dir.path() + "/big.yaml";
    REQUIRE(write_file_atomic(p, std::string(2 * 1024 * 1024, '#')).ok());
    auto r = load_spec_file(p);
    REQUIRE_FALSE(r.spec.has_value());
    CHECK(r.diagnostics.format_text().find("larger than 1 MiB") != std::string::npos);
}

TEST_CASE("a missing spec file is reported with a hint") {
    auto r = load_spec_file("/nonexistent/cluster.yaml");
    REQUIRE_FALSE(r.spec.has_value());
    CHECK(r.diagnostics.format_text().find("hint: check the path") != std::string::npos);
}
