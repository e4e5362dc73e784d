// DeployPlan: the node diff, its text (Terraform's symbols and summaries) and its JSON; the Terraform plan
// `ddl plan` runs beside a cluster's working directory (plan_in_scratch), which must leave it untouched.
#include "provision/DeployPlan.hpp"

#include "provision/ConfigChanges.hpp"
#include "support/ScriptedProcess.hpp"
#include "terraform/ScratchPlan.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("node_changes: new names created, names gone deleted, a changed description updated") {
    std::vector<PlannedNode> before{{"master", "flavor a"}, {"worker1", "flavor b"}, {"worker2", "flavor b"}};
    std::vector<PlannedNode> after{{"master", "flavor a"}, {"worker1", "flavor c"}, {"worker3", "flavor c"}};
    auto c = node_changes(before, after);
    REQUIRE(c.size() == 4);
    CHECK((c[0].action == "keep" && c[0].address == "master"));
    CHECK((c[1].action == "update" && c[1].detail == "flavor b -> flavor c"));
    CHECK((c[2].action == "create" && c[2].address == "worker3"));
    CHECK((c[3].action == "delete" && c[3].address == "worker2" && c[3].detail == "flavor b"));
    CHECK(node_changes({}, after).size() == 3);
    CHECK(node_changes({}, after)[2].action == "create");
}

TEST_CASE("a plan's text lists what changes with Terraform's symbols and both summaries") {
    DeployPlan p;
    p.cluster = "c";
    p.target = "openstack";
    p.exists = true;
    p.changes = {{"keep", "node", "master", "flavor a"},
                 {"delete", "node", "worker2", "flavor b"},
                 {"replace", "resource", "openstack_compute_instance_v2.master", ""},
                 {"update", "resource", "openstack_compute_instance_v2.worker[0]", ""},
                 {"delete", "resource", "openstack_compute_instance_v2.worker[1]", ""}};
    const std::string text = p.to_text();
    CHECK(text.find("  - delete node worker2 (flavor b)\n") != std::string::npos);
    CHECK(text.find("  -/+ replace resource openstack_compute_instance_v2.master\n") != std::string::npos);
    CHECK(text.find("  ~ update resource openstack_compute_instance_v2.worker[0]\n") != std::string::npos);
    CHECK(text.find("master (flavor a)") == std::string::npos); // unchanged nodes are only counted
    CHECK(text.find("Nodes: 0 to create, 0 to update, 0 to replace, 1 to delete (1 unchanged).\n") !=
          std::string::npos);
    CHECK(text.find("Resources: 1 to add, 1 to change, 2 to destroy.\n") != std::string::npos);
    CHECK(p.touches_existing());
    auto j = p.to_json();
    CHECK(j["summary"]["nodes"]["delete"] == 1);
    CHECK(j["summary"]["resources"]["replace"] == 1);
    CHECK(j["changes"].size() == 5);
    CHECK(j["touches_existing"] == true);

    DeployPlan fresh;
    fresh.changes = {{"create", "node", "master", ""}};
    CHECK_FALSE(fresh.touches_existing());
    CHECK(fresh.to_text().find("Resources:") == std::string::npos);
}

TEST_CASE("plan_in_scratch plans a copy: no plan file, providers through TF_DATA_DIR, the cluster's folder "
          "untouched") {
    TempDir dir;
    const std::string work = dir.path() + "/work";
    REQUIRE(make_dirs(work + "/.terraform").ok());
    REQUIRE(write_file_atomic(work + "/terraform.tfstate", "{\"serial\": 7}").ok());
    REQUIRE(write_file_atomic(work + "/main.tf", "old module").ok());
    test::ScriptedProcess p;
    p.when_sub("plan",
               {{0,
                 R"({"type":"planned_change","change":{"resource":{"addr":"x.a"},"action":"update"}})"
                 "\n"
                 R"({"type":"change_summary","changes":{"add":0,"change":1,"remove":0,"operation":"plan"}})",
                 ""}});
    ScratchPlanRequest req{.tool = {"/usr/bin/terraform", "terraform", "1.7.5"},
                           .env = {{"OS_CLOUD", "c"}},
                           .module = {{"main.tf", "new module"}},
                           .work_dir = work,
                           .scratch = dir.path() + "/scratch"};
    auto changes = plan_in_scratch(p, req);
    REQUIRE(changes.ok());
    REQUIRE(changes->size() == 1);
    CHECK(((*changes)[0].action == "update" && (*changes)[0].address == "x.a"));
    REQUIRE(p.commands.size() == 1); // no init: the working directory's providers are used
    const auto& c = p.commands[0];
    CHECK(c.argv == std::vector<std::string>{"/usr/bin/terraform", "plan", "-input=false", "-json"});
    CHECK(c.cwd == dir.path() + "/scratch");
    CHECK(c.env_set.at("TF_DATA_DIR") == work + "/.terraform");
    CHECK(c.env_set.at("OS_CLOUD") == "c");
    CHECK(*read_file(dir.path() + "/scratch/terraform.tfstate") == "{\"serial\": 7}");
    CHECK(*read_file(dir.path() + "/scratch/main.tf") == "new module");
    CHECK(*read_file(work + "/main.tf") == "old module");

    SECTION("a new cluster: init in the scratch folder first") {
        test::ScriptedProcess q;
        q.when_sub("init", {{0, "", ""}});
        q.when_sub(
            "plan",
            {{0, R"({"type":"change_summary","changes":{"add":3,"change":0,"remove":0,"operation":"plan"}})",
              ""}});
        req.work_dir = dir.path() + "/none";
        req.scratch = dir.path() + "/scratch2";
        REQUIRE(plan_in_scratch(q, req).ok());
        REQUIRE(q.commands.size() == 2);
        CHECK(q.commands[0].argv[1] == "init");
        CHECK(q.commands[1].env_set.count("TF_DATA_DIR") == 0);
        CHECK_FALSE(path_exists(dir.path() + "/none"));
    }
}

TEST_CASE("work_changes: a changed workdir, the first changed setup program, and env names without values") {
    WorkSpec a{.workdir = ".", .setup = {"make", "make test"}, .env = {{"A", "1", ""}, {"B", "", "TOKEN"}}};
    CHECK(work_changes(a, a).empty());
    WorkSpec b = a;
    b.workdir = "src";
    b.setup = {"make", "python3 -m venv .venv"};
    b.env = {{"A", "2", ""}, {"C", "x", ""}};
    const auto changes = work_changes(a, b);
    REQUIRE(changes.size() == 5);
    CHECK(changes[0].address == "workdir");
    CHECK(changes[0].detail == ". -> src");
    CHECK(changes[1].address == "setup[1]");
    CHECK(changes[1].detail == "make test -> python3 -m venv .venv; runs on every node at the next deploy");
    CHECK(changes[2].address == "env.A");
    CHECK(changes[2].detail == "value changed"); // a value is never shown
    CHECK(changes[3].address == "env.C");
    CHECK(changes[3].detail == "added");
    CHECK(changes[4].address == "env.B");
    CHECK(changes[4].detail == "removed");
    for (const auto& c : changes)
        CHECK(c.action == "update");
    b = a;
    b.setup.push_back("make docs");
    CHECK(work_changes(a, b).at(0).detail == "unset -> make docs; runs on every node at the next deploy");
}
