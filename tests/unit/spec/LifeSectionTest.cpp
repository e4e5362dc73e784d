#include "targets/Registry.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {
const std::string k_head = "apiVersion: ddl/v1\nname: demo\ntarget: local\n";
// Container nodes: their master runs the idle clock that autostop needs.
const std::string k_containers = k_head + "local: {nodes_as: containers}\n";
} // namespace

TEST_CASE("spans are read as seconds with s, m, h or d") {
    CHECK(parse_duration_s("90m") == 5400);
    CHECK(parse_duration_s("12h") == 43200);
    CHECK(parse_duration_s("7d") == 604800);
    CHECK(parse_duration_s("45s") == 45);
    CHECK_FALSE(parse_duration_s("12"));
    CHECK_FALSE(parse_duration_s("h"));
    CHECK_FALSE(parse_duration_s("-5m"));
    CHECK_FALSE(parse_duration_s("5w"));
    CHECK_FALSE(parse_duration_s("99999999999d"));
}

TEST_CASE("lifetime and cost are read, and stay out of the normalized spec") {
    auto r = load_spec_string(
        k_head + "lifetime: 12h\ncost: {per_node_hour: 1.2, per_gpu_hour: 2.5, currency: EUR}\n", "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec);
    CHECK(r.spec->life.lifetime_s == 43200);
    CHECK(r.spec->life.cost.per_node_hour == 1.2);
    CHECK(r.spec->life.cost.per_gpu_hour == 2.5);
    CHECK(r.spec->life.cost.currency == "EUR");
    CHECK(r.spec->life.cost.hourly(3, 4) == Approx(13.6));
    auto plain = load_spec_string(k_head, "c.yaml");
    REQUIRE(plain.spec);
    CHECK(plain.spec->life.lifetime_s == 0);
    CHECK_FALSE(plain.spec->life.cost.set());
    // A changed lifetime or price redeploys nothing: the normalized spec is the same.
    CHECK(r.spec->to_json() == plain.spec->to_json());
}

TEST_CASE("a bad lifetime is reported at its value with a hint") {
    for (const std::string bad : {"12", "soon", "30s", "0m"}) {
        auto r = load_spec_string(k_head + "lifetime: " + bad + "\n", "c.yaml");
        INFO(bad);
        REQUIRE(r.diagnostics.all().size() == 1);
        const auto& d = r.diagnostics.all()[0];
        CHECK(d.pos.line == 4);
        CHECK(d.pos.column == 11);
        CHECK(d.message.find("lifetime must be a span of at least a minute") != std::string::npos);
        CHECK(d.hint.find("lifetime: 12h") != std::string::npos);
    }
}

TEST_CASE("a bad price table is reported key by key") {
    auto r = load_spec_string(k_head + "cost:\n  per_node_hour: -1\n  per_gpu_hour: cheap\n  curency: EUR\n",
                              "c.yaml");
    const auto text = r.diagnostics.format_text();
    INFO(text);
    CHECK(r.diagnostics.all().size() == 4);
    CHECK(text.find("c.yaml:5:18: error: cost.per_node_hour must be a number from 0 to 1000000") !=
          std::string::npos);
    CHECK(text.find("c.yaml:6:17: error: cost.per_gpu_hour must be a number") != std::string::npos);
    CHECK(text.find("did you mean \"currency\"") != std::string::npos);
    CHECK(text.find("missing required key \"currency\"") != std::string::npos);
    auto notmap = load_spec_string(k_head + "cost: 3\n", "c.yaml");
    CHECK(notmap.diagnostics.format_text().find("cost must be a map") != std::string::npos);
}

TEST_CASE("autostop is read with its default action") {
    auto r = load_spec_string(k_containers + "autostop: {idle_minutes: 30}\n", "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec);
    CHECK(r.spec->life.autostop.set());
    CHECK(r.spec->life.autostop.idle_minutes == 30);
    CHECK(r.spec->life.autostop.action == "destroy");
    auto plain = load_spec_string(k_containers, "c.yaml");
    REQUIRE(plain.spec);
    CHECK_FALSE(plain.spec->life.autostop.set());
    CHECK(r.spec->to_json() == plain.spec->to_json());
}

TEST_CASE(
    "autostop on local namespace nodes, where no idle clock runs, is refused at the key with the way out") {
    auto r = load_spec_string(k_head + "autostop: {idle_minutes: 30}\n", "c.yaml");
    const auto text = r.diagnostics.format_text();
    INFO(text);
    CHECK_FALSE(r.spec);
    CHECK(text.find("c.yaml:4:11: error: autostop cannot work on local namespace nodes") !=
          std::string::npos);
    CHECK(text.find("hint: set local.nodes_as: containers") != std::string::npos);
}

TEST_CASE("a bad autostop is reported at its value with a hint") {
    auto r =
        load_spec_string(k_head + "autostop:\n  idle_minutes: 0\n  action: pause\n  idle: 3\n", "c.yaml");
    const auto text = r.diagnostics.format_text();
    INFO(text);
    CHECK(r.diagnostics.all().size() == 3);
    CHECK(text.find("c.yaml:5:17: error: autostop.idle_minutes must be") != std::string::npos);
    CHECK(text.find("c.yaml:6:11: error: autostop.action") != std::string::npos);
    CHECK(text.find("\"idle\"") != std::string::npos);
    auto missing = load_spec_string(k_head + "autostop: {action: destroy}\n", "c.yaml");
    CHECK(missing.diagnostics.format_text().find("autostop needs idle_minutes") != std::string::npos);
}

TEST_CASE("autostop.action: stop is accepted on openstack and aws, refused elsewhere with the reason") {
    for (const auto& target : target_names()) {
        auto r = load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: " + target +
                                      "\nautostop: {idle_minutes: 5, action: stop}\n",
                                  "c.yaml");
        const auto text = r.diagnostics.format_text();
        INFO(target << "\n" << text);
        const bool refused = text.find("autostop.action: stop is not available on target " + target + ": ") !=
                             std::string::npos;
        const bool stops = target == "openstack" || target == "aws";
        CHECK(refused == !stops);
        CHECK((text.find("c.yaml:4:37: error: autostop.action: stop") != std::string::npos) == !stops);
        if (!stops) CHECK(text.find("use action: destroy") != std::string::npos);
    }
}

TEST_CASE("autostop.node_credential is read on openstack and aws, refused elsewhere with the reason") {
    for (const auto& target : target_names()) {
        auto r = load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: " + target +
                                      "\nautostop: {idle_minutes: 5, node_credential: true}\n",
                                  "c.yaml");
        const auto text = r.diagnostics.format_text();
        INFO(target << "\n" << text);
        const bool offered = target == "openstack" || target == "aws";
        CHECK((text.find("c.yaml:4:46: error: autostop.node_credential is not") != std::string::npos) ==
              !offered);
        if (offered && r.spec) CHECK(r.spec->life.autostop.node_credential);
    }
    auto off =
        load_spec_string(k_containers + "autostop: {idle_minutes: 5, node_credential: false}\n", "c.yaml");
    CHECK(off.diagnostics.format_text().find("node_credential") == std::string::npos);
    REQUIRE(off.spec);
    CHECK_FALSE(off.spec->life.autostop.node_credential);
    auto bad = load_spec_string(k_head + "autostop: {idle_minutes: 5, node_credential: sure}\n", "c.yaml");
    CHECK(bad.diagnostics.format_text().find("c.yaml:4:46: error: autostop.node_credential") !=
          std::string::npos);
}

TEST_CASE("autostop.action: stop is refused with one-time Spot Instances on aws") {
    const std::string head =
        "apiVersion: ddl/v1\nname: demo\ntarget: aws\naws: {region: us-east-1, spot: true}\n";
    auto r = load_spec_string(head + "autostop: {idle_minutes: 5, action: stop}\n", "c.yaml");
    const auto text = r.diagnostics.format_text();
    INFO(text);
    CHECK(text.find("c.yaml:5:37: error: autostop.action: stop is not available with aws.spot") !=
          std::string::npos);
    auto destroy = load_spec_string(head + "autostop: {idle_minutes: 5, action: destroy}\n", "c.yaml");
    CHECK(destroy.diagnostics.format_text().find("aws.spot") == std::string::npos);
}

TEST_CASE("prices by flavor and GPU model are read, and a bad one is reported at its value") {
    auto r = load_spec_string(k_head + "cost:\n  per_node_hour: 1\n  per_flavor: {g1.xlarge: 3.2}\n"
                                       "  per_gpu_model: {A100: 2.9, V100: 1.1}\n  currency: EUR\n",
                              "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec);
    CHECK(r.spec->life.cost.per_flavor.at("g1.xlarge") == 3.2);
    CHECK(r.spec->life.cost.per_gpu_model.size() == 2);
    auto bad = load_spec_string(
        k_head + "cost:\n  per_flavor: {g1.xlarge: lots}\n  per_gpu_model: [A100]\n  currency: EUR\n",
        "c.yaml");
    const auto text = bad.diagnostics.format_text();
    INFO(text);
    CHECK(bad.diagnostics.all().size() == 2);
    CHECK(text.find("c.yaml:5:27: error: cost.per_flavor.g1.xlarge must be a number from 0 to 1000000") !=
          std::string::npos);
    CHECK(text.find("c.yaml:6:18: error: cost.per_gpu_model must be a map") != std::string::npos);
}
