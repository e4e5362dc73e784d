#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace ddl;
namespace fs = std::filesystem;

TEST_CASE("every example in configs/ validates") {
    std::size_t count = 0;
    for (const auto& e : fs::directory_iterator(fs::path(DDL_SOURCE_DIR) / "configs")) {
        if (e.path().extension() != ".yaml") continue;
        ++count;
        auto r = load_spec_file(e.path().string());
        INFO(e.path().string() << "\n" << r.diagnostics.format_text());
        CHECK(r.spec.has_value());
        CHECK(r.diagnostics.all().empty());
    }
    CHECK(count >= 6);
}
