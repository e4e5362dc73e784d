#include "cli/StarterSpecs.hpp"

#include "targets/Registry.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("the starter spec of every target validates as written") {
    for (const auto& target : target_names()) {
        auto text = cli::starter_spec(target, "my-cluster");
        REQUIRE(text.ok());
        auto r = load_spec_string(*text, target + ".yaml");
        INFO(target << "\n" << *text << "\n" << r.diagnostics.format_text());
        CHECK(r.spec.has_value());
        CHECK(r.spec->name == "my-cluster");
        CHECK(r.spec->target == target);
    }
}

TEST_CASE("an unknown target has no starter spec") {
    CHECK_FALSE(cli::starter_spec("azure", "x").ok());
}
