#include "targets/local/LocalNames.hpp"

#include "targets/Kinds.hpp"
#include "targets/local/LocalPlan.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

Spec named(const std::string& name) {
    auto r = load_spec_string("apiVersion: ddl/v1\nname: " + name + "\ntarget: local\nlocal:\n  nodes: 2\n",
                              "c.yaml");
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

// The record a deploy of `spec` writes, as far as the allocation reads it.
RegistryRecord record_of(const Spec& spec, std::uint32_t salt = 0) {
    return {local_registry_id(spec.name, "/srv/state/" + spec.name),
            {{"cluster", spec.name}, {"plan", LocalPlan::from_spec(spec, salt).to_json()}}};
}

} // namespace

TEST_CASE("rt-c6481 and rt-c15740 hash to one link tag, so the tag alone cannot keep them apart") {
    CHECK(link_tag("rt-c6481", 0) == "1a8e26");
    CHECK(link_tag("rt-c15740", 0) == "1a8e26");
    CHECK(LocalPlan::from_spec(named("rt-c6481")).bridge == LocalPlan::from_spec(named("rt-c15740")).bridge);
}

TEST_CASE("a cluster whose tag another cluster's record carries gets the next free one for all its links") {
    const Spec first = named("rt-c6481"), second = named("rt-c15740");
    const auto salt = allocate_tag_salt(second.name, local_registry_id(second.name, "/home/b/.ddl/rt-c15740"),
                                        {record_of(first)}, {});
    REQUIRE(salt);
    CHECK(*salt == 1);
    const auto a = LocalPlan::from_spec(first), b = LocalPlan::from_spec(second, *salt);
    CHECK(b.bridge != a.bridge);
    CHECK(b.bridge.size() <= 15); // IFNAMSIZ - 1
    for (std::size_t i = 0; i < a.nodes.size(); ++i) {
        CHECK(b.nodes[i].veth_host != a.nodes[i].veth_host);
        CHECK(b.nodes[i].veth_node != a.nodes[i].veth_node);
        CHECK(tag_of_link(b.nodes[i].veth_host) == tag_of_link(b.bridge));
    }
    // Only the links' names move: the subnet and the namespaces still follow from the name.
    CHECK(b.subnet == LocalPlan::from_spec(second).subnet);
    CHECK(b.nodes[0].netns == "ddl-rt-c15740-master");
    // Recorded in the plan, so destroy and re-deploys use the names provision made.
    CHECK(LocalPlan::from_json(b.to_json()).bridge == b.bridge);
    CHECK(LocalPlan::from_json(b.to_json()).tag_salt == 1);
}

TEST_CASE("a tag on a link of this machine that no record names is taken too") {
    const auto salt = allocate_tag_salt("rt-c6481", "rt-c6481.00000000", {}, {"eth0", "ddl1a8e26h0"});
    REQUIRE(salt);
    CHECK(*salt != 0);
    CHECK(link_tag("rt-c6481", *salt) != "1a8e26");
}

TEST_CASE("a cluster's own record and unrelated links leave it its tag from the name") {
    const Spec first = named("rt-c6481");
    const auto own = record_of(first);
    CHECK(allocate_tag_salt(first.name, own.id, {own}, {"lo", "eth0", "docker0", "ddl-x"}) == 0u);
}

TEST_CASE("a plan whose tag comes from the name alone records no salt, as plans before allocation did") {
    CHECK_FALSE(LocalPlan::from_spec(named("demo")).to_json().contains("tag_salt"));
    CHECK(LocalPlan::from_json(LocalPlan::from_spec(named("demo")).to_json()).tag_salt == 0);
}

TEST_CASE("a link's tag is read from the local target's link names only") {
    CHECK(tag_of_link("ddlbr-1a8e26") == "1a8e26");
    CHECK(tag_of_link("ddlpb-00ff00") == "00ff00");
    CHECK(tag_of_link("ddl1a8e26h0") == "1a8e26");
    CHECK(tag_of_link("ddl1a8e26q12") == "1a8e26");
    CHECK(tag_of_link("ddlbr-1A8E26").empty());
    CHECK(tag_of_link("ddl1a8e26x0").empty());
    CHECK(tag_of_link("eth0").empty());
    CHECK(tag_of_link("ddl-demo-master").empty());
}

TEST_CASE("the links a recorded plan names are its bridges and the host ends of its veths") {
    const auto links = plan_links(LocalPlan::from_spec(named("rt-c6481")).to_json());
    CHECK(links == std::vector<std::string>{"ddlbr-1a8e26", "ddl1a8e26h0", "ddl1a8e26h1"});
}

TEST_CASE("a state folder moved while its record stays is followed to where it was deployed from") {
    TempDir dir;
    const std::string users = dir.path() + "/users", was = dir.path() + "/old/.ddl/c1",
                      now = dir.path() + "/new/c1";
    REQUIRE(make_dirs(users, 0700).ok());
    REQUIRE(make_dirs(now, 0700).ok());
    REQUIRE(write_file_atomic(now + "/state.json", "{}").ok());
    // Without the record its nodes are gone: nothing to follow.
    CHECK_FALSE(moved_state_folder("c1", was, now, users));
    REQUIRE(write_file_atomic(users + "/" + local_registry_id("c1", was), "{}").ok());
    CHECK(moved_state_folder("c1", was, now, users) == was);
    // Not moved: the same folder, or nothing recorded (a state from before the folder was recorded).
    CHECK_FALSE(moved_state_folder("c1", now, now, users));
    CHECK_FALSE(moved_state_folder("c1", "", now, users));
    // Copied, not moved: the original still has its state and manages the nodes.
    REQUIRE(make_dirs(was, 0700).ok());
    REQUIRE(write_file_atomic(was + "/state.json", "{}").ok());
    CHECK_FALSE(moved_state_folder("c1", was, now, users));
}
