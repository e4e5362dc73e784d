// TerraformStream: Terraform's -json UI messages into per-resource progress and failures.
#include "terraform/TerraformStream.hpp"

#include <catch2/catch.hpp>
#include <random>

using namespace ddl;

namespace {
std::string hook(const std::string& type, const std::string& addr, const std::string& action, int secs = 0) {
    return R"({"@level":"info","@message":"m","@module":"terraform.ui","type":")" + type +
           R"(","hook":{"resource":{"addr":")" + addr + R"(","resource_type":"t"},"action":")" + action +
           R"(","elapsed_seconds":)" + std::to_string(secs) + R"(,"id_key":"id","id_value":"abc"}})";
}
std::string diagnostic(const std::string& severity, const std::string& summary, const std::string& detail,
                       const std::string& addr) {
    return R"({"@level":"error","@message":"Error: x","type":"diagnostic","diagnostic":{"severity":")" +
           severity + R"(","summary":")" + summary + R"(","detail":")" + detail + R"(")" +
           (addr.empty() ? "" : R"(,"address":")" + addr + R"(")") + "}}";
}
} // namespace

TEST_CASE("a successful apply stream gives each resource's state, action and time") {
    TerraformStream s;
    auto v = s.feed_line(
        R"({"@level":"info","@message":"Terraform 1.7.5","type":"version","terraform":"1.7.5","ui":"1.2"})");
    REQUIRE(v);
    CHECK(v->kind == TerraformEvent::Kind::version);
    CHECK(v->tool_version == "1.7.5");
    s.feed_line(hook("apply_start", "openstack_compute_instance_v2.master", "create"));
    s.feed_line(hook("apply_progress", "openstack_compute_instance_v2.master", "create", 10));
    CHECK(s.resources().at("openstack_compute_instance_v2.master").state ==
          TerraformResourceProgress::State::running);
    s.feed_line(hook("apply_complete", "openstack_compute_instance_v2.master", "create", 42));
    auto summary = s.feed_line(
        R"({"type":"change_summary","changes":{"add":3,"change":1,"import":0,"remove":2,"operation":"apply"}})");
    const auto& r = s.resources().at("openstack_compute_instance_v2.master");
    CHECK(r.state == TerraformResourceProgress::State::done);
    CHECK(r.action == "create");
    CHECK(r.elapsed_s == 42);
    CHECK(r.id == "abc");
    REQUIRE(s.last_summary());
    CHECK(s.last_summary()->add == 3);
    CHECK(s.last_summary()->remove == 2);
    CHECK(s.last_summary()->operation == "apply");
    CHECK(s.failures().empty());
}

TEST_CASE("a failed resource is reported with the provider's message from the diagnostic naming it") {
    TerraformStream s;
    s.feed_line(hook("apply_start", "openstack_compute_instance_v2.worker[0]", "create"));
    s.feed_line(hook("apply_errored", "openstack_compute_instance_v2.worker[0]", "create", 5));
    s.feed_line(diagnostic("error", "Error creating OpenStack server",
                           "Quota exceeded for instances\\nRequested 1",
                           "openstack_compute_instance_v2.worker[0]"));
    s.feed_line(diagnostic("warning", "Deprecated", "use x", ""));
    auto f = s.failures();
    REQUIRE(f.size() == 1);
    CHECK(f[0].resource == "openstack_compute_instance_v2.worker[0]");
    CHECK(f[0].action == "create");
    CHECK(f[0].message == "Error creating OpenStack server: Quota exceeded for instances Requested 1");
    CHECK(s.failure_text() ==
          "openstack_compute_instance_v2.worker[0] (create): Error creating OpenStack server: Quota exceeded "
          "for instances Requested 1");
    CHECK(s.warnings() == std::vector<std::string>{"Deprecated: use x"});
    CHECK(s.resources().at("openstack_compute_instance_v2.worker[0]").state ==
          TerraformResourceProgress::State::failed);
}

TEST_CASE("a diagnostic that arrives before apply_errored is still matched to its resource") {
    TerraformStream s;
    s.feed_line(diagnostic("error", "Error deleting", "in use", "openstack_networking_secgroup_v2.cluster"));
    s.feed_line(hook("apply_errored", "openstack_networking_secgroup_v2.cluster", "delete"));
    auto f = s.failures();
    REQUIRE(f.size() == 1);
    CHECK(f[0].message == "Error deleting: in use");
    CHECK(f[0].action == "delete");
}

TEST_CASE("errors tied to no resource (configuration, variables) are failures too") {
    TerraformStream s;
    s.feed_line(diagnostic("error", "No value for required variable",
                           "The root module input variable \\\"cloud\\\" is not set", ""));
    auto f = s.failures();
    REQUIRE(f.size() == 1);
    CHECK(f[0].resource.empty());
    CHECK(s.failure_text() ==
          "No value for required variable: The root module input variable \"cloud\" is not set");
}

TEST_CASE("an errored resource without any diagnostic still names the resource") {
    TerraformStream s;
    s.feed_line(hook("apply_errored", "openstack_networking_port_v2.master", "create"));
    REQUIRE(s.failures().size() == 1);
    CHECK(s.failures()[0].message == "failed (no message from the provider)");
}

TEST_CASE("planned changes record the action for each resource") {
    TerraformStream s;
    auto e =
        s.feed_line(R"({"type":"planned_change","change":{"resource":{"addr":"a.b"},"action":"delete"}})");
    REQUIRE(e);
    CHECK(e->kind == TerraformEvent::Kind::planned_change);
    CHECK(s.resources().at("a.b").action == "delete");
    CHECK(s.resources().at("a.b").state == TerraformResourceProgress::State::planned);
}

TEST_CASE("lines that are not UI messages are kept as plain output, unknown types are 'other'") {
    TerraformStream s;
    CHECK_FALSE(s.feed_line("Initializing the backend..."));
    CHECK_FALSE(s.feed_line("[1,2]"));
    CHECK_FALSE(s.feed_line("   "));
    auto e = s.feed_line(R"({"type":"refresh_start","hook":{"resource":{"addr":"x.y"}}})");
    REQUIRE(e);
    CHECK(e->kind == TerraformEvent::Kind::other);
    CHECK(s.plain_lines() == std::vector<std::string>{"Initializing the backend...", "[1,2]"});
}

TEST_CASE("an unsupported UI major version is a failure, as the format's contract asks") {
    TerraformStream s;
    s.feed_line(R"({"type":"version","terraform":"9.0.0","ui":"2.0"})");
    REQUIRE(s.failures().size() == 1);
    CHECK(s.failures()[0].message.find("unsupported machine-readable UI version 2.0") != std::string::npos);
}

TEST_CASE("fields of the wrong type or missing never throw") {
    TerraformStream s;
    for (const char* line :
         {R"({"type":"apply_start","hook":"x"})", R"({"type":"apply_errored","hook":{"resource":[]}})",
          R"({"type":"diagnostic","diagnostic":{"severity":1,"summary":null}})",
          R"({"type":"change_summary","changes":{"add":-5,"remove":1e300}})", R"({"type":7})",
          R"({"type":"version","ui":{}})",
          R"({"type":"apply_complete","hook":{"resource":{"addr":"a"},"elapsed_seconds":"x"}})"})
        CHECK_NOTHROW(s.feed_line(line));
    REQUIRE(s.last_summary());
    CHECK(s.last_summary()->add == 0);
}

TEST_CASE("random bytes and truncated messages never throw") {
    std::mt19937 rng(12345);
    const std::string sample = hook("apply_errored", "a.b", "create") + diagnostic("error", "s", "d", "a.b") +
                               R"({"type":"change_summary"})";
    TerraformStream s;
    for (int i = 0; i < 2000; ++i) {
        std::string line = sample.substr(0, rng() % sample.size());
        for (int k = 0; k < 3; ++k)
            if (!line.empty()) line[rng() % line.size()] = static_cast<char>(rng() % 256);
        CHECK_NOTHROW(s.feed_line(line));
    }
}
