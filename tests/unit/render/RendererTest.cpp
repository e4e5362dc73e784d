#include "render/Renderer.hpp"

#include "render/LocalPlan.hpp"
#include "spec/SpecLoader.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {
Spec local_spec(const std::string& name, const std::string& extra = "") {
    auto r = SpecLoader::load_string(
        "apiVersion: ddl/v1\nname: " + name + "\ntarget: local\nlocal:\n  nodes: 4\n" + extra, "c.yaml");
    REQUIRE(r.spec.has_value());
    return *r.spec;
}
} // namespace

TEST_CASE("rendering the same spec twice gives identical bytes") {
    auto a = render_spec(local_spec("demo"));
    auto b = render_spec(local_spec("demo"));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(*a == *b);
    CHECK(a->count("local/plan.json") == 1);
    CHECK(a->count("spec.json") == 1);
    for (const auto& [path, content] : *a)
        CHECK(content.find("/work/") == std::string::npos);
}

TEST_CASE("two local clusters with different names get different subnets and bridges") {
    auto a = LocalPlan::from_spec(local_spec("alpha"));
    auto b = LocalPlan::from_spec(local_spec("beta"));
    CHECK(a.subnet != b.subnet);
    CHECK(a.bridge != b.bridge);
    CHECK(a.nodes[0].netns != b.nodes[0].netns);
    CHECK(a.bridge.size() <= 15);
    CHECK(a.nodes[3].veth_host.size() <= 15);
}

TEST_CASE("a local plan uses the spec's subnet and numbers nodes from .11") {
    auto p = LocalPlan::from_spec(local_spec("demo", "  subnet: 10.231.0.0/24\n"));
    CHECK(p.bridge_address == "10.231.0.1");
    REQUIRE(p.nodes.size() == 4);
    CHECK(p.nodes[0].name == "master");
    CHECK(p.nodes[0].address == "10.231.0.11");
    CHECK(p.nodes[3].name == "worker3");
    CHECK(p.nodes[3].address == "10.231.0.14");
    CHECK(LocalPlan::from_json(p.to_json()).to_json() == p.to_json());
}

TEST_CASE("targets without a renderer say so instead of pretending") {
    auto r = SpecLoader::load_string("apiVersion: ddl/v1\nname: s\ntarget: slurm\nslurm: {partition: gpu}\n",
                                     "c.yaml");
    REQUIRE(r.spec.has_value());
    auto files = render_spec(*r.spec);
    REQUIRE_FALSE(files.ok());
    CHECK(files.error().message.find("not available") != std::string::npos);
}
