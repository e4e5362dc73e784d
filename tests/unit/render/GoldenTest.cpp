// Every folder under tests/golden holds a spec (cluster.yaml) and, under expected/, exactly the files
// `ddl render` must write for it, byte for byte. UPDATE_GOLDEN=1 rewrites expected/ (stale files removed);
// review the change as a diff.
#include "render/Renderer.hpp"
#include "spec/SpecLoader.hpp"
#include "util/Files.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <set>

using namespace ddl;
namespace fs = std::filesystem;

TEST_CASE("every golden case renders exactly its expected files") {
    const fs::path root = fs::path(DDL_SOURCE_DIR) / "tests" / "golden";
    const bool update = std::getenv("UPDATE_GOLDEN") != nullptr;
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory()) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    REQUIRE(cases.size() >= 4);
    for (const auto& dir : cases) {
        INFO("case " << dir.filename().string());
        auto loaded = SpecLoader::load_file((dir / "cluster.yaml").string());
        INFO(loaded.diagnostics.format_text());
        REQUIRE(loaded.spec.has_value());
        auto files = render_spec(*loaded.spec);
        REQUIRE(files.ok());
        const fs::path expected_dir = dir / "expected";
        if (update) {
            fs::remove_all(expected_dir);
            for (const auto& [rel, content] : *files) {
                fs::create_directories((expected_dir / rel).parent_path());
                REQUIRE(write_file_atomic((expected_dir / rel).string(), content, 0644).ok());
            }
            continue;
        }
        std::set<std::string> on_disk;
        for (const auto& e : fs::recursive_directory_iterator(expected_dir))
            if (e.is_regular_file()) on_disk.insert(fs::relative(e.path(), expected_dir).string());
        std::set<std::string> rendered;
        for (const auto& [rel, content] : *files) {
            rendered.insert(rel);
            INFO("file " << rel);
            auto want = read_file((expected_dir / rel).string());
            REQUIRE(want.ok());
            CHECK(content == *want);
        }
        CHECK(rendered == on_disk);
    }
}
