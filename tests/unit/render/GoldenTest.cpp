// Every folder under tests/golden holds a spec (cluster.yaml) and, under expected/, every file
// `ddl render` writes for it, byte for byte. UPDATE_GOLDEN=1 rewrites expected/; review it as a diff.
#include "render/Renderer.hpp"
#include "spec/SpecLoader.hpp"
#include "util/Files.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

using namespace ddl;
namespace fs = std::filesystem;

namespace {
RenderedFiles read_tree(const fs::path& root) {
    RenderedFiles files;
    if (!fs::exists(root)) return files;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (!e.is_regular_file()) continue;
        auto text = read_file(e.path().string());
        REQUIRE(text.ok());
        files[fs::relative(e.path(), root).generic_string()] = *text;
    }
    return files;
}
} // namespace

TEST_CASE("every golden case renders exactly its expected files") {
    const fs::path root = fs::path(DDL_SOURCE_DIR) / "tests" / "golden";
    const bool update = std::getenv("UPDATE_GOLDEN") != nullptr;
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory()) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    REQUIRE_FALSE(cases.empty());
    for (const auto& dir : cases) {
        INFO("case " << dir.filename().string());
        auto text = read_file((dir / "cluster.yaml").string());
        REQUIRE(text.ok());
        auto loaded = SpecLoader::load_string(*text, "cluster.yaml");
        INFO(loaded.diagnostics.format_text());
        REQUIRE(loaded.spec.has_value());
        auto files = render_spec(*loaded.spec);
        REQUIRE(files.ok());
        if (update) {
            fs::remove_all(dir / "expected");
            for (const auto& [rel, content] : *files) {
                REQUIRE(make_dirs((dir / "expected" / rel).parent_path().string(), 0755).ok());
                REQUIRE(write_file_atomic((dir / "expected" / rel).string(), content, 0644).ok());
            }
            continue;
        }
        auto expected = read_tree(dir / "expected");
        std::vector<std::string> got_names, want_names;
        for (const auto& [rel, _] : *files)
            got_names.push_back(rel);
        for (const auto& [rel, _] : expected)
            want_names.push_back(rel);
        CHECK(got_names == want_names);
        for (const auto& [rel, content] : *files) {
            INFO("file " << rel);
            if (expected.count(rel)) CHECK(content == expected.at(rel));
        }
    }
}
