#include "provision/Pipeline.hpp"

#include "core/Diagnostics.hpp"
#include "spec/SpecLoader.hpp"
#include "support/Rig.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

using namespace ddl;

namespace {
struct Rig : test::ClusterRig {
    test::FakeTarget target;
    Rig() {
        // No playbooks in this data dir: configure has nothing to run.
        setenv("DDL_DATA_DIR", dir.path().c_str(), 1);
        load("apiVersion: ddl/v1\nname: demo\ntarget: local\n");
    }
};
} // namespace

TEST_CASE("deploy runs every phase once and a second deploy skips them all") {
    Rig rig;
    auto ctx = rig.ctx();
    REQUIRE(run_deploy(ctx, rig.target, {}) == exit_code::k_ok);
    CHECK(rig.target.provisions == 1);
    for (const auto& p : phase_names())
        CHECK(rig.state.phase_done(p));
    // The hostfile phase wrote both hostfiles on the master, with the node's address in them.
    const std::string& written = rig.remote.inputs["192.0.2.10"];
    CHECK(written.find("echo /etc/ddl/hostfile;") != std::string::npos);
    CHECK(written.find("echo /etc/ddl/hostfile.mpich;") != std::string::npos);
    CHECK(written.find("192.0.2.11") != std::string::npos);
    rig.progress.lines.clear();
    REQUIRE(run_deploy(ctx, rig.target, {}) == exit_code::k_ok);
    CHECK(rig.target.provisions == 1);
    for (const auto& line : rig.progress.lines)
        CHECK(line.rfind("skip ", 0) == 0);
}

TEST_CASE("a failed phase is recorded and the next deploy resumes from it") {
    Rig rig;
    rig.target.fail_provisions = 1;
    auto ctx = rig.ctx();
    REQUIRE(run_deploy(ctx, rig.target, {}) == exit_code::k_failure);
    CHECK(rig.state.phase_done("render"));
    CHECK_FALSE(rig.state.phase_done("provision"));
    auto saved = rig.store.load("demo");
    REQUIRE(saved.ok());
    CHECK(saved->phase_done("render"));
    REQUIRE(run_deploy(ctx, rig.target, {}) == exit_code::k_ok);
    CHECK(rig.target.provisions == 2);
    CHECK(rig.state.phase_done("hostfile"));
}

TEST_CASE("wait-ssh names the node that never answered") {
    Rig rig;
    rig.remote.unreachable = {"192.0.2.11"};
    auto ctx = rig.ctx();
    REQUIRE(run_deploy(ctx, rig.target, {}) == exit_code::k_failure);
    bool named = false;
    for (const auto& l : rig.progress.lines)
        named = named || l.find("fail wait-ssh: SSH not reachable on worker1") == 0;
    CHECK(named);
}

TEST_CASE("deploying only one phase refuses when its predecessors have not run") {
    Rig rig;
    auto ctx = rig.ctx();
    CHECK(run_deploy(ctx, rig.target, {"probe"}) == exit_code::k_failure);
    CHECK(rig.target.provisions == 0);
}

TEST_CASE("deploying only one phase re-runs it although it finished") {
    Rig rig;
    auto ctx = rig.ctx();
    REQUIRE(run_deploy(ctx, rig.target, {}) == exit_code::k_ok);
    REQUIRE(run_deploy(ctx, rig.target, {"provision"}) == exit_code::k_ok);
    CHECK(rig.target.provisions == 2);
}

TEST_CASE("an interrupt stops the deploy before the next phase") {
    Rig rig;
    std::atomic<bool> stop{true};
    auto ctx = rig.ctx();
    ctx.interrupted = &stop;
    CHECK(run_deploy(ctx, rig.target, {}) == 130);
    CHECK(rig.target.provisions == 0);
}

TEST_CASE("destroy removes the state folder once the target is gone") {
    Rig rig;
    auto ctx = rig.ctx();
    REQUIRE(run_deploy(ctx, rig.target, {}) == exit_code::k_ok);
    REQUIRE(run_destroy(ctx, rig.target) == exit_code::k_ok);
    CHECK(rig.target.destroys == 1);
    CHECK_FALSE(path_exists(rig.store.cluster_dir("demo")));
}

TEST_CASE("a deploy that would destroy what exists needs approval: -y, the approve callback, else exit 2") {
    Rig rig;
    rig.target.destructive = {"delete node worker3"};
    auto ctx = rig.ctx();
    CHECK(run_deploy(ctx, rig.target, {}) == exit_code::k_bad_input);
    CHECK(ctx.approval_needs_yes);
    CHECK_FALSE(rig.state.phase_done("provision"));
    CHECK(rig.target.nodes == 3);

    auto declined = rig.ctx();
    std::vector<std::string> asked;
    declined.approve = [&](const std::string& what, const std::vector<std::string>& changes) -> Status {
        asked = changes;
        return Error{what + ": not approved"};
    };
    CHECK(run_deploy(declined, rig.target, {}) == exit_code::k_failure);
    CHECK(asked == std::vector<std::string>{"delete node worker3"});
    CHECK_FALSE(rig.state.phase_done("provision"));

    auto approved = rig.ctx();
    approved.approve = [](const std::string&, const std::vector<std::string>&) -> Status { return {}; };
    CHECK(run_deploy(approved, rig.target, {}) == exit_code::k_ok);

    Rig rig2;
    rig2.target.destructive = {"delete node worker3"};
    auto yes = rig2.ctx();
    yes.options.yes = true;
    CHECK(run_deploy(yes, rig2.target, {}) == exit_code::k_ok);
    CHECK(rig2.state.phase_done("provision"));
}
