// TerraformRunner: the exact commands it runs (against a recording fake), and a whole
// init -> plan -> apply -> output -> destroy cycle against the stand-in tests/fakes/terraform.
#include "terraform/TerraformRunner.hpp"

#include "render/Renderer.hpp"
#include "spec/SpecLoader.hpp"
#include "support/ScriptedProcess.hpp"
#include "targets/Registry.hpp"
#include "targets/openstack/OpenstackInputs.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

using namespace ddl;
namespace fs = std::filesystem;

namespace {

using test::ScriptedProcess;
using Reply = test::ScriptedProcess::Reply;

Reply ok(const std::string& out = "") {
    return {0, out, ""};
}

TerraformTool fake_tool() {
    return {"/usr/bin/terraform", "terraform", "1.7.5"};
}

std::string fake_terraform() {
    return std::string(DDL_SOURCE_DIR) + "/tests/fakes/terraform";
}

} // namespace

TEST_CASE("find_tool reads the version from `version -json` and refuses versions before 1.5") {
    TempDir dir;
    std::string bin = dir.path() + "/terraform";
    REQUIRE(write_file_atomic(bin, "#!/bin/sh\n", 0755).ok());
    ScriptedProcess p;
    p.unmatched_ok = true;
    p.when_sub("version", {ok(R"({"terraform_version":"1.7.5","platform":"linux_amd64"})")});
    auto t = TerraformRunner::find_tool(p, bin, "openstack.terraform");
    REQUIRE(t.ok());
    CHECK(t->version == "1.7.5");
    CHECK(t->name == "terraform");
    CHECK(p.commands.back().argv == std::vector<std::string>{bin, "version", "-json"});

    p.forget_rules();
    p.when_sub("version", {ok(R"({"terraform_version":"1.4.6"})")});
    auto old = TerraformRunner::find_tool(p, bin, "openstack.terraform");
    REQUIRE_FALSE(old.ok());
    CHECK(old.error().message.find("is version 1.4.6; ddl's module needs 1.x from 1.5 on") !=
          std::string::npos);

    p.forget_rules();
    p.when_sub("version", {ok("Terraform v1.7.5")});
    auto unreadable = TerraformRunner::find_tool(p, bin, "openstack.terraform");
    REQUIRE_FALSE(unreadable.ok());
    CHECK(unreadable.error().message.find("printed no version") != std::string::npos);
}

TEST_CASE("a tool's version compares by major, minor and patch") {
    auto tool = [](const std::string& v) { return TerraformTool{"/bin/terraform", "terraform", v}; };
    CHECK(tool("1.6.3").at_least(1, 6, 3));
    CHECK(tool("v1.7.0").at_least(1, 6, 3));
    CHECK(tool("1.10.1").at_least(1, 6, 3));
    CHECK(tool("2.0").at_least(1, 6, 3));
    CHECK_FALSE(tool("1.6.2").at_least(1, 6, 3));
    CHECK_FALSE(tool("1.5.7").at_least(1, 6, 3));
    CHECK(tool("1.6.3-beta1").at_least(1, 6, 3));
    CHECK_FALSE(tool("one.two").at_least(1, 0, 0));
}

TEST_CASE("find_tool says what to install when neither terraform nor tofu is on PATH") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    const char* old = std::getenv("PATH");
    std::string saved = old ? old : "";
    setenv("PATH", "/nonexistent", 1);
    auto t = TerraformRunner::find_tool(p, "", "openstack.terraform");
    setenv("PATH", saved.c_str(), 1);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message.find("neither terraform nor tofu is on PATH") != std::string::npos);
    CHECK(p.commands.empty());
}

TEST_CASE(
    "the runner's commands are exactly the documented ones, in the working dir, credentials only in env") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    p.when_sub(
        "plan",
        {ok(R"({"type":"change_summary","changes":{"add":5,"change":0,"remove":0,"operation":"plan"}})")});
    p.when_sub("output", {ok(R"({"ssh_user":{"sensitive":false,"type":"string","value":"ubuntu"}})")});
    std::vector<std::string> events;
    TerraformRunner r(p, fake_tool(),
                      {"/state/c/terraform", {{"OS_CLOUD", "mine"}, {"OS_CLIENT_CONFIG_FILE", "/c.yaml"}}},
                      [&](const TerraformEvent& e) { events.push_back(e.type); });
    REQUIRE(r.init().ok());
    auto plan = r.plan();
    REQUIRE(plan.ok());
    CHECK(plan->add == 5);
    REQUIRE(r.apply().ok());
    auto out = r.outputs();
    REQUIRE(out.ok());
    CHECK((*out)["ssh_user"] == "ubuntu");
    REQUIRE(r.destroy().ok());
    std::vector<std::vector<std::string>> argvs;
    for (const auto& c : p.commands) {
        argvs.push_back(c.argv);
        CHECK(c.cwd == "/state/c/terraform");
        CHECK(c.env_set.at("OS_CLOUD") == "mine");
        CHECK(c.env_set.at("OS_CLIENT_CONFIG_FILE") == "/c.yaml");
        CHECK(c.env_set.at("TF_INPUT") == "0");
    }
    const std::string t = "/usr/bin/terraform";
    CHECK(argvs ==
          std::vector<std::vector<std::string>>{{t, "init", "-input=false", "-no-color"},
                                                {t, "plan", "-input=false", "-out=tfplan", "-json"},
                                                {t, "apply", "-input=false", "-json", "tfplan"},
                                                {t, "output", "-json"},
                                                {t, "destroy", "-auto-approve", "-input=false", "-json"}});
    CHECK(events == std::vector<std::string>{"change_summary"});
}

TEST_CASE("a failed apply names each failed resource with the provider's message") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    p.when_sub(
        "apply",
        {{1,
          R"({"type":"apply_errored","hook":{"resource":{"addr":"openstack_compute_instance_v2.worker[1]"},"action":"create"}})"
          "\n"
          R"({"type":"diagnostic","diagnostic":{"severity":"error","summary":"Error creating OpenStack server","detail":"No valid host was found.","address":"openstack_compute_instance_v2.worker[1]"}})"
          "\n",
          ""}});
    TerraformRunner r(p, fake_tool(), {"/w", {}});
    auto s = r.apply();
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message ==
          "terraform apply failed:\nopenstack_compute_instance_v2.worker[1] (create): Error "
          "creating OpenStack server: No valid host was found.");
}

TEST_CASE("init failures show terraform's own last lines") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    p.when_sub(
        "init",
        {{1, "", "\nError: Failed to query available provider packages\n\nCould not retrieve the list\n"}});
    TerraformRunner r(p, fake_tool(), {"/w", {}});
    auto s = r.init();
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message == "terraform init failed:\nError: Failed to query available provider "
                               "packages\nCould not retrieve the list");
}

TEST_CASE("destroy_all retries, then names every resource still in the state") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    Reply failed{1, "", "Error: timeout"};
    p.when_sub("destroy", {failed, failed, failed});
    p.when_sub("state", {ok("data.openstack_images_image_v2.node\nopenstack_networking_secgroup_v2.cluster\n"
                            "openstack_networking_network_v2.cluster[0]\n")});
    TerraformRunner r(p, fake_tool(), {"/w", {}});
    std::vector<int> attempts;
    auto s = r.destroy_all(3, [&](int a, const Status&) { attempts.push_back(a); });
    REQUIRE_FALSE(s.ok());
    CHECK(attempts == std::vector<int>{1, 2, 3});
    CHECK(s.error().message.find(
              "still in the Terraform state after 3 destroy attempt(s): "
              "openstack_networking_secgroup_v2.cluster, openstack_networking_network_v2.cluster[0]") !=
          std::string::npos);
    CHECK(s.error().message.find("data.") == std::string::npos);
    CHECK(p.commands.back().argv == std::vector<std::string>{"/usr/bin/terraform", "state", "list"});
}

TEST_CASE("destroy_all stops at the first success and is done when the state is empty") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    p.when_sub("destroy", {{1, "", "Error: 409"}, ok()});
    p.when_sub("state", {ok("")});
    TerraformRunner r(p, fake_tool(), {"/w", {}});
    int n = 0;
    REQUIRE(r.destroy_all(3, [&](int, const Status&) { ++n; }).ok());
    CHECK(n == 2);
}

TEST_CASE("a whole cycle against the Terraform stand-in creates, resumes after a failure and destroys") {
    TempDir dir;
    // The stand-in makes its instances with $DDL_FAKE_NODES; here a script that only reports addresses.
    std::string nodes_tool = dir.path() + "/fake-nodes";
    REQUIRE(
        write_file_atomic(
            nodes_tool,
            "#!/bin/sh\necho \"$@\" >> " + dir.path() +
                "/nodes.log\n"
                "[ \"$1\" = up ] && echo '{\"nodes\":[{\"name\":\"master\",\"public_address\":\"10.9.0.2\","
                "\"private_address\":\"10.8.0.2\",\"port\":22,\"user\":\"root\"},{\"name\":\"worker1\","
                "\"private_address\":\"10.8.0.3\",\"port\":22,\"user\":\"root\"}]}'\nexit 0\n",
            0755)
            .ok());
    std::string work = dir.path() + "/tf";
    auto loaded =
        load_spec_string("apiVersion: ddl/v1\nname: tfcycle\ntarget: openstack\nnodes:\n  master: "
                         "{flavor: m1}\n  workers: {count: 1, flavor: g1}\naccess:\n  user: root\n  "
                         "allowed_cidrs: [10.0.0.0/8]\nopenstack:\n  cloud: testcloud\n  "
                         "external_network: public\n",
                         "c.yaml");
    REQUIRE(loaded.spec);
    auto files = render_spec(*loaded.spec, {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK test"});
    REQUIRE(files.ok());
    REQUIRE(make_dirs(work, 0700).ok());
    for (const auto& [rel, text] : *files) {
        std::string prefix = std::string(k_openstack_terraform_dir) + "/";
        if (rel.rfind(prefix, 0) == 0)
            REQUIRE(write_file_atomic(work + "/" + rel.substr(prefix.size()), text, 0600).ok());
    }
    REQUIRE(write_file_atomic(dir.path() + "/clouds.yaml",
                              "clouds:\n  testcloud:\n    auth: {auth_url: https://x}\n", 0600)
                .ok());
    SystemProcessRunner proc;
    TerraformTool tool{fake_terraform(), "terraform", "1.7.5"};
    TerraformRunnerOptions opts{work,
                                {{"OS_CLOUD", "testcloud"},
                                 {"OS_CLIENT_CONFIG_FILE", dir.path() + "/clouds.yaml"},
                                 {"DDL_FAKE_NODES", nodes_tool},
                                 {"FAKE_TF_FAIL_APPLY", "1"}}};
    std::vector<std::string> progress;
    TerraformRunner r(proc, tool, opts, [&](const TerraformEvent& e) {
        if (e.kind == TerraformEvent::Kind::apply_complete) progress.push_back(e.resource);
    });
    REQUIRE(r.init().ok());
    auto plan = r.plan();
    REQUIRE(plan.ok());
    CHECK(plan->add == 17);
    auto failed = r.apply();
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().message.find(
              "openstack_compute_instance_v2.worker[0] (create): Error creating OpenStack "
              "server: Expected HTTP response code [202]") != std::string::npos);
    CHECK_FALSE(progress.empty());
    // Resume: the next plan only holds what is missing, and applying it converges.
    auto again = r.plan();
    REQUIRE(again.ok());
    CHECK(again->add > 0);
    CHECK(again->add < 17);
    REQUIRE(r.apply().ok());
    auto out = r.outputs();
    REQUIRE(out.ok());
    CHECK((*out)["master_public_ip"] == "10.9.0.2");
    CHECK((*out)["worker_private_ips"] == nlohmann::json::array({"10.8.0.3"}));
    auto noop = r.plan();
    REQUIRE(noop.ok());
    CHECK(noop->add == 0);
    REQUIRE(r.apply().ok());
    REQUIRE(r.destroy_all(3).ok());
    auto left = r.state_list();
    REQUIRE(left.ok());
    CHECK(left->empty());
    auto log = read_file(dir.path() + "/nodes.log");
    REQUIRE(log.ok());
    CHECK(log->find("up --id tfcycle") != std::string::npos);
    CHECK(log->find("--names master,worker1") != std::string::npos);
    CHECK(log->find("--bastion") != std::string::npos);
    CHECK(log->find("down --id tfcycle") != std::string::npos);
}

TEST_CASE(
    "the stand-in refuses an unknown tfvars variable and a missing required one, as Terraform words it") {
    TempDir dir;
    const std::string& work = dir.path();
    // The provider block picks the stand-in's mode (tests/fakes/terraform_openstack.py).
    for (const auto& [name, text] : std::map<std::string, std::string>{
             {"versions.tf", "provider \"openstack\" {\n  cloud = \"c\"\n}\n"},
             {"variables.tf", "variable \"a\" {\n  type = string\n}\nvariable \"b\" {\n  type = string\n  "
                              "default = \"\"\n}\n"},
             {"terraform.tfvars.json", R"({"b": "x", "c": 1})"}})
        REQUIRE(write_file_atomic(work + "/" + name, text, 0600).ok());
    SystemProcessRunner proc;
    TerraformRunner r(proc, {fake_terraform(), "terraform", "1.7.5"}, {work, {}});
    REQUIRE(r.init().ok());
    auto plan = r.plan();
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().message.find(
              "Value for undeclared variable: The root module does not declare a variable "
              "named \"c\"") != std::string::npos);
    CHECK(plan.error().message.find(
              "No value for required variable: The root module input variable \"a\" is not "
              "set") != std::string::npos);
}

TEST_CASE("the stand-in rejects a flag Terraform does not have") {
    SystemProcessRunner proc;
    auto r = proc.run({.argv = {fake_terraform(), "plan", "-input=false", "-var-files=x"}});
    REQUIRE(r.ok());
    CHECK(r->exit_code == 1);
    CHECK(r->err.find("flag provided but not defined: -var-files") != std::string::npos);
}

TEST_CASE("the plan's updates, deletes and replacements are listed for approval; creates are not") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    const std::string lines =
        R"({"type":"planned_change","change":{"resource":{"addr":"openstack_compute_instance_v2.worker[2]"},"action":"delete"}})"
        "\n"
        R"({"type":"planned_change","change":{"resource":{"addr":"openstack_compute_instance_v2.master"},"action":"replace"}})"
        "\n"
        R"({"type":"planned_change","change":{"resource":{"addr":"openstack_networking_port_v2.worker[3]"},"action":"create"}})"
        "\n"
        R"({"type":"planned_change","change":{"resource":{"addr":"openstack_compute_instance_v2.worker[0]"},"action":"update"}})"
        "\n"
        R"({"type":"change_summary","changes":{"add":2,"change":1,"remove":2,"operation":"plan"}})";
    p.when_sub("plan", {ok(lines)});
    TerraformRunner r(p, fake_tool(), {"/state/c/terraform", {}});
    REQUIRE(r.plan().ok());
    CHECK(r.changes_to_existing() ==
          std::vector<std::string>{"replace openstack_compute_instance_v2.master",
                                   "update openstack_compute_instance_v2.worker[0]",
                                   "delete openstack_compute_instance_v2.worker[2]"});
    REQUIRE(r.planned_changes().size() == 4);
    CHECK(r.planned_changes()[3].action == "create");
    CHECK(r.planned_changes()[3].address == "openstack_networking_port_v2.worker[3]");
    p.forget_rules();
    p.when_sub(
        "plan",
        {ok(R"({"type":"change_summary","changes":{"add":0,"change":0,"remove":0,"operation":"plan"}})")});
    REQUIRE(r.plan().ok());
    CHECK(r.changes_to_existing().empty());
}

TEST_CASE("a plan with instances to replace passes Terraform's -replace=ADDRESS for each") {
    ScriptedProcess p;
    p.unmatched_ok = true;
    p.when_sub(
        "plan",
        {ok(R"({"type":"planned_change","change":{"resource":{"addr":"aws_instance.worker[1]"},"action":"replace","reason":"requested"}})"
            "\n"
            R"({"type":"change_summary","changes":{"add":1,"change":0,"remove":1,"operation":"plan"}})")});
    TerraformRunner r(p, fake_tool(), {"/state/c/terraform", {}});
    auto plan = r.plan(TerraformRunner::PlanFile::write, {"aws_instance.worker[1]"});
    REQUIRE(plan.ok());
    CHECK(plan->add == 1);
    CHECK(plan->remove == 1);
    REQUIRE(p.commands.size() == 1);
    CHECK(p.commands[0].argv == std::vector<std::string>{"/usr/bin/terraform", "plan", "-input=false",
                                                         "-out=tfplan", "-replace=aws_instance.worker[1]",
                                                         "-json"});
    CHECK(r.changes_to_existing() == std::vector<std::string>{"replace aws_instance.worker[1]"});
}
