#include "spec/SpecLoader.hpp"
#include "targets/Kinds.hpp"
#include "targets/virtualwall/SlicesCli.hpp"
#include "targets/virtualwall/VirtualwallSection.hpp"
#include "targets/virtualwall/VirtualwallSlices.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

SpecLoadResult load(const std::string& virtualwall) {
    return load_spec_string("apiVersion: ddl/v1\nname: sl\ntarget: virtualwall\nnodes:\n  master: {gpus: 1}\n"
                            "virtualwall:\n" +
                                virtualwall,
                            "c.yaml");
}

// A listing as the CLI prints it (rich table rules).
const char* const k_flavors = "Flavors of be-gent1-bi-baremetal1\n"
                              "\u2503 Name            \u2503 Description           \u2503\n"
                              "\u2502 pcgen08-gpu6000 \u2502 Generation 8 with GPU \u2502\n"
                              "\u2502 pc              \u2502 Any baremetal pc      \u2502\n";

} // namespace

TEST_CASE("SLICES durations are a number and one of m h d w") {
    CHECK(slices_duration_seconds("90m") == 5400);
    CHECK(slices_duration_seconds("3h") == 10800);
    CHECK(slices_duration_seconds("2d") == 172800);
    CHECK(slices_duration_seconds("1w") == 604800);
    for (const char* bad : {"", "h", "3", "0h", "-1h", "3x", "1.5h", "h3"}) {
        INFO(bad);
        CHECK_FALSE(slices_duration_seconds(bad).has_value());
    }
    CHECK(slices_duration_hours(30) == "30h");
}

TEST_CASE("bi list --format json: names, addresses, the login and its jump host") {
    auto rs = parse_slices_resources(R"([{"id": "r_be-gent1-bi-vm1_01kz", "friendly_name": "ddl-c-master",
        "status": "up", "public_ipv4": null, "private_ipv4": "10.10.217.148",
        "ssh_logins": [{"host": "10.10.217.148", "port": 22, "username": "ubuntu",
                        "jump_proxy": {"host": "bastion2.slices-be.eu", "port": 22, "username": "proxy"}}],
        "created_at": "2026-08-02T15:51:00Z", "expires_at": "2026-08-02T18:51:00Z", "failure_reason": null},
       {"friendly_name": "ddl-c-w", "status": "booting", "ssh_logins": []}])");
    REQUIRE(rs.ok());
    REQUIRE(rs->size() == 2);
    const auto& m = (*rs)[0];
    CHECK(m.name == "ddl-c-master");
    CHECK(m.user == "ubuntu");
    CHECK(m.host == "10.10.217.148");
    CHECK(m.jump == "proxy@bastion2.slices-be.eu:22");
    CHECK(m.expires_at == "2026-08-02T18:51:00Z");
    CHECK(m.failure_reason.empty());
    CHECK((*rs)[1].status == "booting");
    CHECK((*rs)[1].jump.empty());
    CHECK_FALSE(parse_slices_resources("{}").ok());
    CHECK_FALSE(parse_slices_resources("[{\"status\": \"up\"}]").ok());
    CHECK_FALSE(parse_slices_resources("not json").ok());
}

TEST_CASE("a flavor or image is offered only where a cell of the listing is exactly its name") {
    CHECK(slices_listing_has(k_flavors, "pcgen08-gpu6000"));
    CHECK(slices_listing_has(k_flavors, "pc"));
    CHECK_FALSE(slices_listing_has(k_flavors, "pcgen08"));
    CHECK_FALSE(slices_listing_has(k_flavors, "Generation"));
    CHECK(slices_listing_has("| Ubuntu 22.04.5 | be-gent1-bi-vm1 |\n", "Ubuntu 22.04.5"));
    CHECK_FALSE(slices_listing_has("| Ubuntu 22.04.5 | be-gent1-bi-vm1 |\n", "Ubuntu 22.04"));
    CHECK_FALSE(slices_listing_has(k_flavors, ""));
}

TEST_CASE("resource names map to ddl's nodes, whichever way the CLI numbers --count") {
    CHECK(slices_node_of("c", "ddl-c-master") == "master");
    CHECK(slices_node_of("c", "ddl-c-master0") == "master");
    CHECK(slices_node_of("c", "ddl-c-w") == "worker1");
    CHECK(slices_node_of("c", "ddl-c-w0") == "worker1");
    CHECK(slices_node_of("c", "ddl-c-w3") == "worker4");
    CHECK_FALSE(slices_node_of("c", "ddl-c-wx").has_value());
    CHECK_FALSE(slices_node_of("c", "ddl-c-w01").has_value());
    CHECK_FALSE(slices_node_of("c", "ddl-other-master").has_value());
    CHECK_FALSE(slices_node_of("c", "master").has_value());
}

TEST_CASE("the CLI's group options go before the verb") {
    auto argv = slices_bi_create_argv("slices", {.site = "be-gent1-bi-vm1",
                                                 .name = "ddl-c-w",
                                                 .experiment = "ddl-c",
                                                 .image = "Ubuntu 22.04.5",
                                                 .flavor = "medium",
                                                 .duration = "3h",
                                                 .count = 2,
                                                 .ssh_key_file = "/k.pub"});
    CHECK(argv == std::vector<std::string>{"slices", "bi", "--infra", "be-gent1-bi-vm1", "create", "ddl-c-w",
                                           "--experiment", "ddl-c", "--image", "Ubuntu 22.04.5", "--flavor",
                                           "medium", "--duration", "3h", "--count", "2", "--wait",
                                           "--ssh-key-file", "/k.pub"});
    CHECK(slices_bi_destroy_argv("slices", "s", "e", {"a", "b"}) ==
          std::vector<std::string>{"slices", "bi", "--infra", "s", "destroy", "a", "b", "--experiment", "e",
                                   "--force"});
}

TEST_CASE("a virtualwall spec without GENI keys is a SLICES one; the two paths' keys do not mix") {
    auto slices = load("  project: p\n  site: be-gent1-bi-vm1\n  duration: 3h\n");
    INFO(slices.diagnostics.format_text());
    REQUIRE(slices.spec.has_value());
    const auto& v = slices.spec->target_section<VirtualwallSpec>();
    CHECK(v.client == "slices");
    CHECK(v.experiment_name("sl") == "ddl-sl");
    CHECK(v.ansible_vars()["ddl_enable_nat"] == false);
    auto geni = load("  project: p\n  testbed: wall2\n");
    REQUIRE(geni.spec.has_value());
    CHECK(geni.spec->target_section<VirtualwallSpec>().client == "geni");

    auto shaped = load("  project: p\n  link_capacity: 1gbit\n");
    CHECK(shaped.diagnostics.format_text().find("link_capacity cannot be honoured on SLICES") !=
          std::string::npos);
    auto longer = load("  duration: 90d\n");
    CHECK(longer.diagnostics.format_text().find("89d at most") != std::string::npos);
    auto odd = load("  duration: 3 hours\n");
    CHECK(odd.diagnostics.format_text().find("virtualwall.duration must be a number and a unit") !=
          std::string::npos);
    auto mixed = load("  client: slices\n  hardware_type: gpunode\n");
    CHECK(mixed.diagnostics.format_text().find("virtualwall.hardware_type is for client: geni") !=
          std::string::npos);
    auto other = load("  client: geni\n  project: p\n  site: x\n");
    CHECK(other.diagnostics.format_text().find("virtualwall.site is for client: slices, not geni") !=
          std::string::npos);
}

TEST_CASE("ddl init --target virtualwall writes a SLICES spec that validates") {
    auto r = load_spec_string(
        "apiVersion: ddl/v1\nname: starter\ntarget: virtualwall\n" + virtualwall_starter_body(), "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    CHECK(r.spec->target_section<VirtualwallSpec>().client == "slices");
}
