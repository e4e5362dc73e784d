// Every folder under tests/golden holds a spec (cluster.yaml), optionally the public key ddl would
// render with (public_key), and under expected/ exactly the files `ddl render` writes for it, byte for
// byte - except the OpenStack module's own .tf files, which OpenstackRenderTest compares with
// src/targets/openstack/terraform/. UPDATE_GOLDEN=1 rewrites expected/ (stale files removed); review it as a
// diff.
#include "render/Renderer.hpp"
#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>

using namespace ddl;
namespace fs = std::filesystem;

namespace {
Spec load(const fs::path& file) {
    auto r = load_spec_file(file.string());
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}
} // namespace

TEST_CASE("every golden case renders exactly its expected files, the same bytes every time") {
    const fs::path root = fs::path(DDL_SOURCE_DIR) / "tests" / "golden";
    const bool update = std::getenv("UPDATE_GOLDEN") != nullptr;
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory()) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    REQUIRE(cases.size() >= 9);
    for (const auto& dir : cases) {
        INFO("case " << dir.filename().string());
        auto spec = load(dir / "cluster.yaml");
        RenderInputs in;
        if (auto key = read_file((dir / "public_key").string())) in.public_key = *key;
        auto files = render_spec(spec, in);
        REQUIRE(files.ok());
        auto again = render_spec(spec, in);
        REQUIRE(again.ok());
        CHECK(*files == *again);
        // The module's own files are checked against src/targets/openstack/terraform above, not copied here.
        std::map<std::string, std::string> got;
        for (const auto& [rel, text] : *files)
            if (fs::path(rel).extension() != ".tf") got[rel] = text;
        const fs::path expected_dir = dir / "expected";
        if (update) {
            fs::remove_all(expected_dir);
            for (const auto& [rel, text] : got) {
                REQUIRE(make_dirs((expected_dir / rel).parent_path().string(), 0755).ok());
                REQUIRE(write_file_atomic((expected_dir / rel).string(), text, 0644).ok());
            }
            continue;
        }
        std::map<std::string, std::string> want;
        for (const auto& e : fs::recursive_directory_iterator(expected_dir)) {
            if (!e.is_regular_file()) continue;
            auto text = read_file(e.path().string());
            REQUIRE(text.ok());
            want[fs::relative(e.path(), expected_dir).string()] = *text;
        }
        CHECK(got.size() == want.size());
        for (const auto& [rel, text] : want) {
            INFO(rel);
            REQUIRE(got.count(rel) == 1);
            CHECK(got.at(rel) == text);
        }
    }
}
