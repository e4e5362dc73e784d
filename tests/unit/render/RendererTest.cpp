#include "render/Renderer.hpp"

#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"
#include "targets/local/LocalPlan.hpp"
#include "targets/local/LocalSection.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {
Spec local_spec(const std::string& name, const std::string& extra = "") {
    auto r = load_spec_string(
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

TEST_CASE("a container-node plan names a container per node and the proxy on the bridge") {
    auto p = LocalPlan::from_spec(local_spec("demo", "  subnet: 10.231.0.0/24\n  nodes_as: containers\n"));
    CHECK(p.containers);
    CHECK(p.image == k_default_node_image);
    CHECK(p.own_apt_proxy);
    CHECK(p.apt_proxy == "http://10.231.0.1:3142");
    CHECK(p.nodes[2].container == "ddl-demo-worker2");
    CHECK(LocalPlan::from_json(p.to_json()).to_json() == p.to_json());

    auto q = LocalPlan::from_spec(local_spec("demo", "  nodes_as: containers\n  image: localhost/n:1\n"
                                                     "  apt_proxy: http://10.9.9.9:3142\n"));
    CHECK(q.image == "localhost/n:1");
    CHECK_FALSE(q.own_apt_proxy);
    CHECK(q.apt_proxy == "http://10.9.9.9:3142");
    CHECK(LocalPlan::from_spec(local_spec("demo")).nodes[0].container.empty());
}

namespace {
Spec slurm_spec(const std::string& body) {
    auto r = load_spec_string("apiVersion: ddl/v1\nname: hpc\ntarget: slurm\n" + body, "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}
bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}
} // namespace

TEST_CASE("the sbatch script asks for GPUs only when the spec has them") {
    auto gpu = render_spec(slurm_spec("slurm: {partition: gpu, nodes: 2, gpus_per_node: 4}\n"));
    REQUIRE(gpu.ok());
    const auto& text = gpu->at("slurm/job.sbatch");
    CHECK(has_line(text, "#SBATCH --gres=gpu:4"));
    CHECK(has_line(text, "#SBATCH --ntasks-per-node=4"));
    CHECK(has_line(text, "#SBATCH --nodes=2"));
    CHECK(text.find("--account") == std::string::npos);
    auto cpu = render_spec(slurm_spec("slurm: {partition: cpu, nodes: 3, account: proj1}\n"));
    REQUIRE(cpu.ok());
    const auto& c = cpu->at("slurm/job.sbatch");
    CHECK(c.find("--gres") == std::string::npos);
    CHECK(has_line(c, "#SBATCH --ntasks-per-node=1"));
    CHECK(has_line(c, "#SBATCH --account=proj1"));
}

TEST_CASE("explicit tasks per node win over the GPU count and become the hostfile's slots") {
    auto f = render_spec(slurm_spec("slurm: {partition: gpu, gpus_per_node: 4, tasks_per_node: 2}\n"
                                    "hostfile: {format: mpich}\n"));
    REQUIRE(f.ok());
    const auto& text = f->at("slurm/job.sbatch");
    CHECK(has_line(text, "#SBATCH --ntasks-per-node=2"));
    CHECK(text.find("printf '%s:%s\\n' \"$h\" 2") != std::string::npos);
}

TEST_CASE("the runtime folder, backend and interface reach the job's environment") {
    auto f = render_spec(slurm_spec("slurm: {partition: p, runtime_dir: /project/ddl/runtime}\n"
                                    "runtime: {backend: tcp, interface: ib0, master_port: 29600}\n"));
    REQUIRE(f.ok());
    const auto& text = f->at("slurm/job.sbatch");
    CHECK(has_line(text, "runtime_dir=\"${DDL_RUNTIME_DIR:-/project/ddl/runtime}\""));
    CHECK(has_line(text, "export DDL_BACKEND=tcp"));
    CHECK(has_line(text, "export DDL_IFACE=ib0 NCCL_SOCKET_IFNAME=ib0"));
    CHECK(has_line(text, "export DDL_MASTER_PORT=29600 MASTER_PORT=29600"));
}

TEST_CASE("with autostop the sbatch script runs the idle clock inside the job, and holds it without") {
    auto f = render_spec(slurm_spec("slurm: {partition: p}\nautostop: {idle_minutes: 30}\n"));
    REQUIRE(f.ok());
    const auto& text = f->at("slurm/job.sbatch");
    CHECK(has_line(
        text, "  DDL_IDLE_END=slurm DDL_IDLE_MINUTES=30 DDL_IDLE_RECORD=\"$SLURM_SUBMIT_DIR/idle.json\" \\"));
    CHECK(has_line(text, "    python3 \"$runtime_dir/bin/ddl-idle\" loop ||"));
    CHECK(has_line(text, "  exec sleep infinity")); // should the clock stop
    auto plain = render_spec(slurm_spec("slurm: {partition: p}\n"));
    REQUIRE(plain.ok());
    CHECK(plain->at("slurm/job.sbatch").find("ddl-idle") == std::string::npos);
    CHECK(has_line(plain->at("slurm/job.sbatch"), "  exec sleep infinity"));
    // The clock's minutes reach the idle_clock role only where autostop is set.
    CHECK(nlohmann::json::parse(f->at("ansible/vars.json"))["ddl_autostop_idle_minutes"] == 30);
    CHECK_FALSE(nlohmann::json::parse(plain->at("ansible/vars.json")).contains("ddl_autostop_idle_minutes"));
}

TEST_CASE("ansible variables tell the roles what kind of node they configure") {
    auto vars = [](const Spec& s) {
        auto f = render_spec(s);
        REQUIRE(f.ok());
        return nlohmann::json::parse(f->at("ansible/vars.json"));
    };
    auto ns = vars(local_spec("kinds"));
    CHECK(ns["ddl_nodes_as"] == "namespaces");
    Spec c = local_spec("kinds");
    c.target_section<LocalSpec>().nodes_as = "containers";
    auto ct = vars(c);
    CHECK(ct["ddl_nodes_as"] == "containers");
    CHECK(ct["ddl_shared_fs"] == "auto");
    CHECK(ct["ddl_jupyter_install"] == "apt");
    CHECK(ct["ddl_grafana"] == false);
    auto m = vars(slurm_spec("slurm:\n  partition: gpu\n"));
    CHECK(m["ddl_nodes_as"] == "machines");
    CHECK(m["ddl_shared_fs"] == "nfs");
    CHECK(m["ddl_jupyter_install"] == "pip");
    CHECK(m["ddl_grafana"] == true);
    CHECK(m["ddl_docker_without_gpu"] == false);
    auto ssh = [](const std::string& runtime) {
        auto r = load_spec_string("apiVersion: ddl/v1\nname: gpu\ntarget: ssh\nssh: {hosts: [{name: a, "
                                  "address: 192.0.2.1}]}\nruntime:\n" +
                                      runtime,
                                  "c.yaml");
        INFO(r.diagnostics.format_text());
        REQUIRE(r.spec.has_value());
        return *r.spec;
    };
    auto img = vars(ssh("  image: nvcr.io/nvidia/pytorch:24.01-py3\n"));
    CHECK(img["ddl_docker_without_gpu"] == true);
    CHECK(img["ddl_training_container_enabled"] == true);
    CHECK(vars(ssh("  image: nvcr.io/nvidia/pytorch:24.01-py3\n  container_engine: podman\n"))
              ["ddl_docker_without_gpu"] == false);
    auto chosen =
        vars(slurm_spec("slurm:\n  partition: gpu\nservices:\n  nfs: {transport: sshfs}\n"
                        "  jupyter: {install: apt}\n  monitoring: {enabled: true, grafana: false}\n"));
    CHECK(chosen["ddl_shared_fs"] == "sshfs");
    CHECK(chosen["ddl_jupyter_install"] == "apt");
    CHECK(chosen["ddl_grafana"] == false);
}
