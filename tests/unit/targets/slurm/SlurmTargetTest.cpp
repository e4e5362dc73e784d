#include "targets/slurm/SlurmTarget.hpp"

#include "provision/Pipeline.hpp"
#include "render/Renderer.hpp"
#include "spec/SpecLoader.hpp"
#include "support/Rig.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <deque>
#include <functional>

using namespace ddl;

namespace {

using test::ScriptedProcess;

std::string job_line(const std::string& state, const std::string& extra = "") {
    return "JobId=42 JobName=ddl-hpc UserId=u(1) JobState=" + state +
           " Reason=None Dependency=(null) NodeList=n[1-2] BatchHost=n1 " + extra + "\n";
}

struct Rig : test::ClusterRig {
    SlurmTarget target{SlurmTarget::Timing{.poll = std::chrono::milliseconds(0),
                                           .start_deadline = std::chrono::seconds(60),
                                           .cancel_deadline = std::chrono::seconds(60)}};
    explicit Rig(const std::string& extra = "") {
        proc.unmatched_ok = false;
        REQUIRE(make_dirs(dir.path() + "/runtime/bin").ok());
        load("apiVersion: ddl/v1\nname: hpc\ntarget: slurm\nslurm:\n  partition: gpu\n"
             "  nodes: 2\n  tasks_per_node: 2\n  runtime_dir: " +
             dir.path() + "/runtime\n" + extra);
        auto files = render_spec(spec);
        REQUIRE(files.ok());
        REQUIRE(write_rendered(*files, store.cluster_dir("hpc") + "/rendered").ok());
    }
    void nodes_known() {
        proc.when("scontrol show hostnames n[1-2]", {{0, "n1\nn2\n", ""}});
        proc.when("scontrol show node -o n[1-2]",
                  {{0,
                    "NodeName=n1 Arch=x86_64 NodeAddr=10.1.0.11 NodeHostName=n1 State=ALLOCATED\n"
                    "NodeName=n2 Arch=x86_64 NodeAddr=10.1.0.12 NodeHostName=n2 State=ALLOCATED\n",
                    ""}});
    }
};

} // namespace

TEST_CASE("scontrol records keep values with spaces together") {
    auto rec =
        parse_scontrol_record("JobId=7 JobName=a b JobState=RUNNING StdOut=/home/x y/ddl-7.out Reason=None");
    CHECK(rec["JobId"] == "7");
    CHECK(rec["JobName"] == "a b");
    CHECK(rec["StdOut"] == "/home/x y/ddl-7.out");
    CHECK(rec["Reason"] == "None");
}

TEST_CASE("deploy submits once, records the job id before waiting and turns the allocation into nodes") {
    Rig rig;
    rig.proc.when("squeue", {{0, "", ""}});
    rig.proc.when("sbatch", {{0, "42\n", ""}});
    rig.proc.when("scontrol show job -o 42", {{0, job_line("PENDING"), ""}, {0, job_line("RUNNING"), ""}});
    rig.nodes_known();
    bool id_saved_before_wait = false;
    rig.proc.on_call = [&](const std::string& line) {
        if (starts_with(line, "scontrol show job")) {
            auto saved = rig.store.load("hpc");
            id_saved_before_wait = saved.ok() && saved->target_data.value("job_id", "") == "42";
        }
    };
    auto ctx = rig.ctx();
    REQUIRE(rig.target.provision(ctx).ok());
    CHECK(id_saved_before_wait);
    CHECK(rig.proc.count("sbatch") == 1);
    const auto& sbatch = rig.proc.commands[1];
    REQUIRE(sbatch.argv.front() == "sbatch");
    CHECK(sbatch.argv[1] == "--parsable");
    CHECK(sbatch.argv[2] == "--comment=ddl-deploy:hpc");
    CHECK(sbatch.argv.back() == rig.store.cluster_dir("hpc") + "/rendered/slurm/job.sbatch");
    CHECK(sbatch.cwd == rig.store.cluster_dir("hpc"));
    REQUIRE(rig.state.nodes.size() == 2);
    CHECK(rig.state.nodes[0].name == "n1");
    CHECK(rig.state.nodes[0].group == "master");
    CHECK(rig.state.nodes[1].address == "10.1.0.12");
    CHECK(rig.state.nodes[1].slots == 2);
    CHECK(rig.state.target_data["job_id"] == "42");
}

TEST_CASE("a deploy with a job id in its state follows that job and submits nothing") {
    Rig rig;
    rig.state.target_data["job_id"] = "42";
    rig.proc.when("scontrol show job -o 42", {{0, job_line("RUNNING"), ""}});
    rig.nodes_known();
    auto ctx = rig.ctx();
    REQUIRE(rig.target.provision(ctx).ok());
    CHECK(rig.proc.count("sbatch") == 0);
    CHECK(rig.proc.count("squeue") == 0);
}

TEST_CASE("a job submitted by a deploy that died before saving is found in the queue, not submitted again") {
    Rig rig;
    rig.proc.when("squeue", {{0, "41|someone-else\n42|ddl-deploy:hpc\n", ""}});
    rig.proc.when("scontrol show job -o 42", {{0, job_line("RUNNING"), ""}});
    rig.nodes_known();
    auto ctx = rig.ctx();
    REQUIRE(rig.target.provision(ctx).ok());
    CHECK(rig.proc.count("sbatch") == 0);
    CHECK(rig.state.target_data["job_id"] == "42");
}

TEST_CASE("a job that fails before running is reported with the tail of its output") {
    Rig rig;
    const std::string out = rig.dir.path() + "/ddl-hpc-42.out";
    REQUIRE(write_file_atomic(out, "line 1\nddl: no bundled runtime in /x\n").ok());
    rig.proc.when("squeue", {{0, "", ""}});
    rig.proc.when("sbatch", {{0, "42\n", ""}});
    rig.proc.when("scontrol show job -o 42", {{0, job_line("FAILED", "ExitCode=2:0 StdOut=" + out), ""}});
    auto ctx = rig.ctx();
    auto s = rig.target.provision(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("ended before the cluster was up: FAILED, exit code 2:0") !=
          std::string::npos);
    CHECK(s.error().message.find("| ddl: no bundled runtime in /x") != std::string::npos);
    CHECK_FALSE(rig.state.target_data.contains("job_id"));
}

TEST_CASE("a job still pending at the deadline is an error that keeps the job for the next deploy") {
    Rig rig;
    rig.target = SlurmTarget(SlurmTarget::Timing{.poll = std::chrono::milliseconds(0),
                                                 .start_deadline = std::chrono::milliseconds(0)});
    rig.proc.when("squeue", {{0, "", ""}});
    rig.proc.when("sbatch", {{0, "42;cluster\n", ""}});
    rig.proc.when("scontrol show job -o 42",
                  {{0, "JobId=42 JobState=PENDING Reason=Resources NodeList=(null)\n", ""}});
    auto ctx = rig.ctx();
    auto s = rig.target.provision(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("still PENDING (Resources)") != std::string::npos);
    CHECK(rig.state.target_data["job_id"] == "42");
}

TEST_CASE("sbatch's refusal of the partition names the spec key to fix") {
    Rig rig;
    rig.proc.when("squeue", {{0, "", ""}});
    rig.proc.when(
        "sbatch",
        {{1, "", "sbatch: error: Batch job submission failed: Invalid partition name specified\n"}});
    auto ctx = rig.ctx();
    auto s = rig.target.provision(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(
        s.error().message.find("sbatch refused the job: sbatch: error: Batch job submission failed: Invalid "
                               "partition name specified") != std::string::npos);
    CHECK(s.error().message.find("hint: slurm.partition") != std::string::npos);
    CHECK_FALSE(rig.state.target_data.contains("job_id"));
}

TEST_CASE("preflight names a missing Slurm tool and an unknown partition with the ones that exist") {
    Rig rig;
    const char* old_path = std::getenv("PATH");
    std::string saved = old_path ? old_path : "";
    const std::string bin = rig.dir.path() + "/fakebin";
    REQUIRE(make_dirs(bin).ok());
    setenv("PATH", bin.c_str(), 1);
    auto ctx = rig.ctx();
    auto missing = rig.target.preflight(ctx);
    for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel", "srun"})
        REQUIRE(write_file_atomic(bin + "/" + tool, "#!/bin/sh\n", 0755).ok());
    rig.proc.when(
        "scontrol show partition -o",
        {{0, "PartitionName=debug AllowGroups=ALL Default=YES\nPartitionName=long Nodes=n[1-2]\n", ""}});
    auto unknown = rig.target.preflight(ctx);
    rig.spec.target_section<SlurmSpec>().partition = "debug,long";
    auto ctx2 = rig.ctx();
    auto fine = rig.target.preflight(ctx2);
    setenv("PATH", saved.c_str(), 1);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message.find("`sbatch` on PATH") != std::string::npos);
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message ==
          "slurm.partition: no partition \"gpu\" on this Slurm cluster (it has: debug, long)");
    CHECK(fine.ok());
}

TEST_CASE("destroy cancels the job and waits until Slurm reports it gone") {
    Rig rig;
    rig.state.target_data["job_id"] = "42";
    rig.proc.when("scancel 42", {{0, "", ""}});
    rig.proc.when("scontrol show job -o 42", {{0, job_line("RUNNING"), ""},
                                              {0, job_line("COMPLETING"), ""},
                                              {1, "", "slurm_load_jobs error: Invalid job id specified\n"}});
    auto ctx = rig.ctx();
    REQUIRE(rig.target.destroy(ctx).ok());
    CHECK(rig.proc.count("scancel 42") == 1);
    CHECK(rig.proc.count("scontrol show job") == 3);
    CHECK_FALSE(rig.state.target_data.contains("job_id"));
    // Again, with nothing left in the state or the queue: nothing to do.
    rig.proc.when("squeue", {{0, "", ""}});
    REQUIRE(rig.target.destroy(ctx).ok());
    CHECK(rig.proc.count("scancel") == 1);
}

TEST_CASE("destroy fails while the job will not go, so the state is kept") {
    Rig rig;
    rig.target = SlurmTarget(SlurmTarget::Timing{.poll = std::chrono::milliseconds(0),
                                                 .cancel_deadline = std::chrono::milliseconds(0)});
    rig.state.target_data["job_id"] = "42";
    rig.proc.when("scancel 42", {{0, "", ""}});
    rig.proc.when("scontrol show job -o 42", {{0, job_line("RUNNING"), ""}});
    auto ctx = rig.ctx();
    auto s = rig.target.destroy(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("job 42 is still RUNNING after scancel") != std::string::npos);
}

TEST_CASE("the deploy pipeline probes slurm nodes through srun and skips SSH and configure") {
    Rig rig;
    rig.proc.when("squeue", {{0, "", ""}});
    rig.proc.when("scontrol show partition -o", {{0, "PartitionName=gpu\n", ""}});
    rig.proc.when("sbatch", {{0, "42\n", ""}});
    rig.proc.when("scontrol show job -o 42", {{0, job_line("RUNNING"), ""}});
    rig.nodes_known();
    rig.proc.when("srun --jobid=42 --overlap --nodes=2 --ntasks=2",
                  {{0,
                    "1: @slurm n2\n0: @slurm n1\n0: @gpus\n1: @gpus\n1: GPU 0: NVIDIA A100 (UUID: GPU-1)\n"
                    "0: @cpus 8\n1: @cpus 16\n0: @mem 1000\n1: @mem 2000\n0: @os Debian\n1: @os Rocky\n"
                    "0: @kernel 6.1\n1: @kernel 5.14\n0: @hostname n1\n1: @hostname n2\n0: @end\n1: @end\n",
                    ""}});
    const std::string bin = rig.dir.path() + "/fakebin";
    REQUIRE(make_dirs(bin).ok());
    for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel", "srun"})
        REQUIRE(write_file_atomic(bin + "/" + tool, "#!/bin/sh\n", 0755).ok());
    std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", (bin + ":" + saved).c_str(), 1);
    setenv("DDL_DATA_DIR", rig.dir.path().c_str(), 1);
    auto ctx = rig.ctx();
    const int rc = run_deploy(ctx, rig.target, {});
    setenv("PATH", saved.c_str(), 1);
    INFO(join(rig.progress.lines, "\n"));
    REQUIRE(rc == exit_code::k_ok);
    CHECK(rig.remote.calls.empty()); // no SSH at all
    REQUIRE(rig.state.nodes.size() == 2);
    CHECK(rig.state.nodes[0].cpus == 8);
    CHECK(rig.state.nodes[1].gpus == 1);
    CHECK(rig.state.nodes[1].os == "Rocky");
    CHECK(rig.state.nodes[1].slots == 2);
    auto hostfile = read_file(rig.store.cluster_dir("hpc") + "/hostfile");
    REQUIRE(hostfile.ok());
    CHECK(hostfile->find("10.1.0.12 slots=2") != std::string::npos);
}

TEST_CASE("ddl run on a slurm cluster is an srun step of its job with the runtime and the master") {
    Rig rig;
    auto ctx = rig.ctx();
    CHECK_FALSE(SlurmTarget::run_command(ctx, 0, {"prog"}, {}).ok()); // nothing deployed
    rig.state.target_data["job_id"] = "42";
    rig.state.target_data["runtime_dir"] = "/shared/rt";
    rig.state.nodes = {NodeState{.name = "n1", .address = "10.1.0.11"},
                       NodeState{.name = "n2", .address = "10.1.0.12"}};
    auto c = SlurmTarget::run_command(ctx, 0, {"ddl-allreduce-test", "--size", "1M"}, {{"FOO", "bar"}});
    REQUIRE(c.ok());
    CHECK(join(c->argv, " ") == "srun --jobid=42 --overlap --nodes=2 --ntasks=4 --kill-on-bad-exit=1 "
                                "--export=ALL ddl-allreduce-test --size 1M");
    CHECK(c->env_set.at("DDL_MASTER_ADDR") == "n1");
    CHECK(c->env_set.at("FOO") == "bar");
    CHECK(starts_with(c->env_set.at("PATH"), "/shared/rt/bin"));
    CHECK(std::find(c->env_unset.begin(), c->env_unset.end(), "DDL_RANK") != c->env_unset.end());
    auto one = SlurmTarget::run_command(ctx, 1, {"hostname"}, {});
    REQUIRE(one.ok());
    CHECK(join(one->argv, " ").find("--nodes=1 --ntasks=1 ") != std::string::npos);
    auto too_many = SlurmTarget::run_command(ctx, 5, {"hostname"}, {});
    REQUIRE_FALSE(too_many.ok());
    CHECK(too_many.error().message == "-np 5 is more than the job's 4 task slots");
}

TEST_CASE(
    "gc from the queue: jobs with ddl's comment are found with their state folder and cancelled by id") {
    ScriptedProcess p;
    p.when("squeue -h -u", {{0,
                             "101|ddl-deploy:ci-7|2020-01-01T00:00:00|/ci/.ddl/ci-7|RUNNING\n"
                             "102|someone else's job|2020-01-01T00:00:00|/home/x|RUNNING\n"
                             "103|ddl-deploy:ci-8|garbage|/ci/.ddl/ci-8|PENDING\n",
                             ""}});
    p.when("scancel 101", {{0, "", ""}});
    SlurmTarget t;
    auto found = t.find_clusters(nullptr, p);
    REQUIRE(found.ok());
    REQUIRE(found->size() == 2);
    CHECK((*found)[0].cluster == "ci-7");
    CHECK((*found)[0].state_dir == "/ci/.ddl/ci-7");
    CHECK((*found)[0].detail == "Slurm job 101 RUNNING");
    CHECK((*found)[0].age_s > 86400LL * 365);
    CHECK((*found)[1].age_s == 0); // a time that does not parse counts as new: never destroyed for age
    test::FakeProgress progress;
    REQUIRE(t.destroy_found((*found)[0], p, progress).ok());
    CHECK(p.count("scancel 101") == 1);
    FoundCluster bad = (*found)[0];
    bad.record["job_id"] = "1; rm -rf /";
    CHECK_FALSE(t.destroy_found(bad, p, progress).ok());
}

TEST_CASE("deploy --replace on slurm cancels the job after approval and submits one excluding the node") {
    Rig rig;
    rig.state.target_data["job_id"] = "42";
    for (const char* name : {"n1", "n2"}) {
        NodeState n;
        n.name = name;
        rig.state.nodes.push_back(n);
    }
    {
        // Without approval nothing is cancelled.
        auto ctx = rig.ctx();
        auto s = rig.target.remove_for_replace(ctx, "n2");
        REQUIRE_FALSE(s.ok());
        CHECK(s.error().message.find("run again with -y") != std::string::npos);
        CHECK(ctx.approval_needs_yes);
        CHECK(rig.proc.count("scancel") == 0);
        CHECK_FALSE(rig.state.target_data.contains("exclude"));
    }
    rig.proc.when("scancel 42", {{0, "", ""}});
    rig.proc.when("scontrol show job -o 42", {{1, "", "slurm_load_jobs error: Invalid job id specified\n"}});
    DeployOptions yes;
    yes.yes = true;
    auto ctx = rig.ctx(yes);
    REQUIRE(rig.target.remove_for_replace(ctx, "n2").ok());
    CHECK(rig.proc.count("scancel 42") == 1);
    CHECK_FALSE(rig.state.target_data.contains("job_id"));
    CHECK(SlurmTarget::excluded_nodes(ctx) == std::vector<std::string>{"n2"});
    CHECK_FALSE(rig.target.remove_for_replace(ctx, "n9").ok());
    // The next provision submits a new allocation without n2.
    rig.proc.forget_rules();
    rig.proc.when("squeue", {{0, "", ""}});
    rig.proc.when("sbatch", {{0, "43\n", ""}});
    std::string running = job_line("RUNNING");
    running.replace(running.find("JobId=42"), 8, "JobId=43");
    rig.proc.when("scontrol show job -o 43", {{0, running, ""}});
    rig.nodes_known();
    auto provisioned = rig.target.provision(ctx);
    INFO((provisioned.ok() ? std::string() : provisioned.error().message));
    REQUIRE(provisioned.ok());
    const auto* sbatch = &rig.proc.commands.back();
    for (const auto& c : rig.proc.commands)
        if (!c.argv.empty() && c.argv.front() == "sbatch") sbatch = &c;
    CHECK(std::find(sbatch->argv.begin(), sbatch->argv.end(), "--exclude=n2") != sbatch->argv.end());
    CHECK(sbatch->argv.back() == rig.store.cluster_dir("hpc") + "/rendered/slurm/job.sbatch");
    CHECK(rig.state.target_data["job_id"] == "43");
}
