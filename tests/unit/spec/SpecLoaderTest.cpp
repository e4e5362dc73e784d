#include "spec/SpecLoader.hpp"

#include "spec/GpuCompat.hpp"
#include "targets/Registry.hpp"
#include "targets/local/LocalSection.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <vector>

using namespace ddl;

namespace {
Spec load_ok(const std::string& text) {
    auto r = load_spec_string(text, "cluster.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}
} // namespace

TEST_CASE("a minimal local spec gets every default") {
    auto s = load_ok("apiVersion: ddl/v1\nname: demo\ntarget: local\n");
    CHECK(s.target == "local");
    CHECK(s.target_section<LocalSpec>().nodes == 2);
    CHECK(s.target_section<LocalSpec>().bandwidth_bps == 0);
    CHECK(s.node_count() == 2);
    CHECK(s.hostfile_format == HostfileFormat::openmpi);
    CHECK(s.runtime.slots_per_node == 0);
    CHECK(s.services.nfs);
    CHECK_FALSE(s.services.jupyter);
}

TEST_CASE("local bandwidth and subnet are parsed into numbers and canonical text") {
    auto s =
        load_ok("apiVersion: ddl/v1\nname: demo\ntarget: local\nlocal: {nodes: 8, bandwidth: 10gbit, subnet: "
                "10.231.0.0/24}\n");
    CHECK(s.target_section<LocalSpec>().nodes == 8);
    CHECK(s.target_section<LocalSpec>().bandwidth_bps == 10'000'000'000ULL);
    CHECK(s.target_section<LocalSpec>().subnet == "10.231.0.0/24");
}

TEST_CASE("an openstack spec counts master plus workers") {
    auto s = load_ok(R"(apiVersion: ddl/v1
name: cloud
target: openstack
nodes:
  master: {flavor: m1, gpus: 0}
  workers: {count: 7, flavor: g1, gpus: 2}
access: {allowed_cidrs: [192.0.2.0/24, "2001:db8::/32"]}
openstack: {cloud: c, external_network: public}
)");
    CHECK(s.node_count() == 8);
    CHECK(s.workers.gpus == 2);
    CHECK(s.access.allowed_cidrs == std::vector<std::string>{"192.0.2.0/24", "2001:db8::/32"});
}

TEST_CASE("nodes.spares adds nodes to the target's own count; targets that make no machines refuse it") {
    auto local =
        load_ok("apiVersion: ddl/v1\nname: d\ntarget: local\nlocal: {nodes: 4}\nnodes: {spares: 1}\n");
    CHECK(local.spares == 1);
    CHECK(local.target_section<LocalSpec>().nodes == 5);
    CHECK(local.node_count() == 5);
    CHECK(local.to_json()["nodes"]["spares"] == 1);
    CHECK_FALSE(
        load_ok("apiVersion: ddl/v1\nname: d\ntarget: local\n").to_json()["nodes"].contains("spares"));
    auto cloud = load_ok(R"(apiVersion: ddl/v1
name: cloud
target: openstack
nodes:
  master: {flavor: m1, gpus: 0}
  workers: {count: 3, flavor: g1, gpus: 2}
  spares: 2
access: {allowed_cidrs: [192.0.2.0/24]}
openstack: {cloud: c, external_network: public}
)");
    CHECK(cloud.workers.count == 5);
    CHECK(cloud.node_count() == 6);
    // ssh: the hosts are the machines; other keys under nodes stay refused on local.
    auto ssh = load_spec_string("apiVersion: ddl/v1\nname: d\ntarget: ssh\nssh: {hosts: [{name: a, address: "
                                "192.0.2.1}]}\nnodes: {spares: 1}\n",
                                "c.yaml");
    CHECK_FALSE(ssh.spec.has_value());
    CHECK(ssh.diagnostics.format_text().find("nodes.spares does not apply to target ssh") !=
          std::string::npos);
    auto mixed = load_spec_string(
        "apiVersion: ddl/v1\nname: d\ntarget: local\nnodes: {spares: 1, master: {}}\n", "c.yaml");
    CHECK(mixed.diagnostics.format_text().find("nodes does not apply to target local") != std::string::npos);
    auto bad =
        load_spec_string("apiVersion: ddl/v1\nname: d\ntarget: local\nnodes: {spares: -1}\n", "c.yaml");
    CHECK_FALSE(bad.spec.has_value());
}

TEST_CASE("slots_per_node accepts auto or a number") {
    auto a = load_ok("apiVersion: ddl/v1\nname: d\ntarget: local\nruntime: {slots_per_node: auto}\n");
    CHECK(a.runtime.slots_per_node == 0);
    auto n = load_ok("apiVersion: ddl/v1\nname: d\ntarget: local\nruntime: {slots_per_node: 3}\n");
    CHECK(n.runtime.slots_per_node == 3);
}

TEST_CASE("validate reports every problem, not only the first") {
    auto r = load_spec_string(
        "apiVersion: ddl/v1\nname: Bad\ntarget: local\nlocal: {nodes: 99, bandwidth: x}\n", "c.yaml");
    CHECK_FALSE(r.spec.has_value());
    CHECK(r.diagnostics.all().size() == 3);
}

TEST_CASE("validate reports an unknown key with a did-you-mean hint at its line") {
    auto r = load_spec_string("apiVersion: ddl/v1\nname: d\ntarget: local\nlocal:\n  nodez: 2\n", "c.yaml");
    REQUIRE(r.diagnostics.all().size() == 1);
    const auto& d = r.diagnostics.all()[0];
    CHECK(d.pos.line == 5);
    CHECK(d.pos.column == 3);
    CHECK(d.hint == "did you mean \"nodes\"?");
}

TEST_CASE("the normalized JSON is stable for the same spec") {
    auto a = load_ok("apiVersion: ddl/v1\nname: d\ntarget: local\n");
    auto b = load_ok("target: local\nname: d\napiVersion: ddl/v1\n");
    CHECK(a.to_json().dump() == b.to_json().dump());
}

TEST_CASE("is_dns_label accepts lowercase names and refuses the rest") {
    CHECK(is_dns_label("a"));
    CHECK(is_dns_label("ci-4-nodes"));
    CHECK_FALSE(is_dns_label("-a"));
    CHECK_FALSE(is_dns_label("a-"));
    CHECK_FALSE(is_dns_label("A"));
    CHECK_FALSE(is_dns_label("../etc"));
    CHECK_FALSE(is_dns_label(""));
}

TEST_CASE("local.image refuses a NUL byte (strchr would have matched its terminator)") {
    const std::string base =
        "apiVersion: ddl/v1\nname: demo\ntarget: local\nlocal: {nodes_as: containers, image: ";
    CHECK(load_spec_string(base + "localhost/my-node:1}\n", "cluster.yaml").spec.has_value());
    auto r = load_spec_string(base + "\"localhost/my\\0node:1\"}\n", "cluster.yaml");
    CHECK_FALSE(r.spec.has_value());
    CHECK(r.diagnostics.format_text().find("local.image is not an image reference") != std::string::npos);
}

TEST_CASE("a training container spec keeps its image, engine, shm size and mounts") {
    auto s = load_ok(R"(apiVersion: ddl/v1
name: demo
target: ssh
ssh:
  hosts:
    - {name: gpu1, address: 192.0.2.10}
runtime:
  image: nvcr.io/nvidia/pytorch:24.05-py3
  shm_size: 8g
  mounts: [/data/imagenet:/data:ro, /scratch:/scratch]
)");
    CHECK(s.runtime.image == "nvcr.io/nvidia/pytorch:24.05-py3");
    CHECK(s.runtime.container_engine == "docker");
    CHECK(s.container_engine_argv() == std::vector<std::string>{"docker"});
    CHECK(s.runtime.shm_size == "8g");
    CHECK(s.runtime.mounts == std::vector<std::string>{"/data/imagenet:/data:ro", "/scratch:/scratch"});
    CHECK(s.training_container("gpu1") == "ddl-train-demo-gpu1");
}

TEST_CASE("the local target runs training containers with podman and runc") {
    auto s = load_ok("apiVersion: ddl/v1\nname: demo\ntarget: local\nruntime: {image: localhost/t:1}\n");
    CHECK(s.runtime.container_engine == "podman");
    CHECK(s.container_engine_argv() == std::vector<std::string>{"podman", "--runtime", "runc"});
    auto ssh =
        load_ok("apiVersion: ddl/v1\nname: demo\ntarget: ssh\nssh: {hosts: [{name: a, address: 192.0.2.1}]}\n"
                "runtime: {image: localhost/t:1, container_engine: podman}\n");
    CHECK(ssh.container_engine_argv() == std::vector<std::string>{"podman"});
}

TEST_CASE("an ssh host's address is an IP address or a real host name; a mistyped address is refused") {
    auto with = [](const std::string& address) {
        return load_spec_string(
            "apiVersion: ddl/v1\nname: demo\ntarget: ssh\nssh: {hosts: [{name: a, address: \"" + address +
                "\"}]}\n",
            "cluster.yaml");
    };
    for (const char* good : {"192.0.2.1", "2001:db8::1", "gpu1", "gpu-1.example.org", "node.example.org."}) {
        INFO(good);
        CHECK(with(good).spec.has_value());
    }
    for (const char* bad : {"999.1.1.1", "10.0.0", "-gpu", "gpu_1", "gpu..example", "a b", "user@gpu1", ""}) {
        INFO(bad);
        auto r = with(bad);
        CHECK_FALSE(r.spec.has_value());
        CHECK(r.diagnostics.format_text().find("ssh.hosts[0].address must be an IP address or host name") !=
              std::string::npos);
    }
}

TEST_CASE("key files are checked when a spec is validated, and not when a deployed cluster's spec is read") {
    TempDir dir;
    std::string key = dir.path() + "/id_ed25519";
    REQUIRE(write_file_atomic(key, "key", 0600).ok());
    REQUIRE(write_file_atomic(key + ".pub", "pub", 0644).ok());
    auto spec = [](const std::string& access_key, const std::string& host_key) {
        return "apiVersion: ddl/v1\nname: demo\ntarget: ssh\naccess: {private_key: \"" + access_key +
               "\"}\nssh: {hosts: [{name: a, address: 192.0.2.1, key: \"" + host_key + "\"}]}\n";
    };
    CHECK(load_spec_string(spec(key, key), "cluster.yaml").spec.has_value());
    struct Case {
        std::string access, host, message;
    };
    for (const auto& c : std::vector<Case>{
             {"/nonexistent/id", key, "access.private_key /nonexistent/id does not exist"},
             {key, key + ".pub", "ssh.hosts[0].key " + key + ".pub is a public key"},
             {dir.path(), key, "access.private_key " + dir.path() + " is not a file ddl can read"},
         }) {
        INFO(c.message);
        auto r = load_spec_string(spec(c.access, c.host), "cluster.yaml");
        CHECK_FALSE(r.spec.has_value());
        CHECK(r.diagnostics.format_text().find(c.message) != std::string::npos);
        CHECK(load_spec_string(spec(c.access, c.host), "stored", SpecOrigin::stored).spec.has_value());
    }
}

TEST_CASE("a stored spec comes back when only this ddl's rules refuse it, with the errors for a warning") {
    const std::string text = "apiVersion: ddl/v1\nname: old\ntarget: local\ngpu:\n  driver_branch: \"440\"\n";
    auto strict = load_spec_string(text, "cluster.yaml");
    CHECK_FALSE(strict.spec.has_value());
    auto stored = load_spec_string(text, "old (stored spec)", SpecOrigin::stored);
    REQUIRE(stored.spec.has_value());
    CHECK(stored.spec->name == "old");
    CHECK(stored.spec->gpu.driver_branch == "440");
    CHECK(stored.diagnostics.has_errors());
    // Without a name or a known target there is nothing to manage.
    CHECK_FALSE(
        load_spec_string("apiVersion: ddl/v1\nname: Bad Name\ntarget: local\n", "s", SpecOrigin::stored)
            .spec.has_value());
    CHECK_FALSE(load_spec_string("apiVersion: ddl/v1\nname: x\ntarget: nowhere\n", "s", SpecOrigin::stored)
                    .spec.has_value());
}

TEST_CASE("smoke.checks: the user's checks with their defaults, and every mistake reported") {
    const std::string base = "apiVersion: ddl/v1\nname: s\ntarget: local\nsmoke:\n  checks:\n";
    auto s =
        load_ok(base + "    - {name: disk, run: \"df -h /\"}\n"
                       "    - {name: gpu count, run: \"nvidia-smi -L | wc -l\", on: workers, timeout: 30, "
                       "expect_exit: 1}\n");
    REQUIRE(s.smoke.checks.size() == 2);
    CHECK((s.smoke.checks[0].on == "all" && s.smoke.checks[0].timeout_s == 60 &&
           s.smoke.checks[0].expect_exit == 0));
    CHECK((s.smoke.checks[1].name == "gpu count" && s.smoke.checks[1].on == "workers" &&
           s.smoke.checks[1].timeout_s == 30 && s.smoke.checks[1].expect_exit == 1));
    CHECK(s.to_json()["smoke"]["checks"][1]["on"] == "workers");
    CHECK(
        (s.smoke.training.enabled && s.smoke.training.steps == 40 && s.smoke.training.min_loss_drop == 0.3));
    CHECK_FALSE(s.to_json()["smoke"].contains("training"));
    auto t = load_ok(
        "apiVersion: ddl/v1\nname: s\ntarget: local\nsmoke:\n  training: {steps: 20, min_loss_drop: 0.5}\n");
    CHECK((t.smoke.training.steps == 20 && t.smoke.training.min_loss_drop == 0.5));
    CHECK(t.to_json()["smoke"]["training"]["steps"] == 20);
    auto tb = load_spec_string(
        "apiVersion: ddl/v1\nname: s\ntarget: local\nsmoke:\n  training: {steps: 2, min_loss_drop: 1.5}\n",
        "c.yaml");
    CHECK(tb.diagnostics.format_text().find("smoke.training.steps") != std::string::npos);
    CHECK(tb.diagnostics.format_text().find("smoke.training.min_loss_drop must be a fraction") !=
          std::string::npos);
    CHECK_FALSE(load_ok("apiVersion: ddl/v1\nname: s\ntarget: local\n").to_json().contains("smoke"));

    auto bad = load_spec_string(base + "    - {name: a, run: x, on: everywhere}\n"
                                       "    - {name: a, run: \"\"}\n"
                                       "    - {run: x, timeout: 0, expect_exit: 300, retries: 2}\n",
                                "cluster.yaml");
    CHECK_FALSE(bad.spec.has_value());
    const std::string text = bad.diagnostics.format_text();
    INFO(text);
    CHECK(text.find("smoke.checks[0].on") != std::string::npos);
    CHECK(text.find("smoke.checks[1].name \"a\" is used by another check") != std::string::npos);
    CHECK(text.find("smoke.checks[1].run is empty") != std::string::npos);
    CHECK(text.find("\"name\"") != std::string::npos);
    CHECK(text.find("smoke.checks[2].timeout") != std::string::npos);
    CHECK(text.find("smoke.checks[2].expect_exit") != std::string::npos);
    CHECK(text.find("retries") != std::string::npos);
    CHECK_FALSE(load_spec_string(base + "    name: x\n", "c.yaml").spec.has_value());
}

TEST_CASE("with_cluster_name renames the top-level name line and keeps the rest of the text") {
    const std::string text =
        "# my cluster\napiVersion: ddl/v1\nname: ci-ref  # the reference\ntarget: local\n"
        "local:\n  name: not-this\n";
    auto r = with_cluster_name(text, "ci-ref-123");
    REQUIRE(r.ok());
    CHECK(*r ==
          "# my cluster\napiVersion: ddl/v1\nname: ci-ref-123\ntarget: local\nlocal:\n  name: not-this\n");
    auto valid = with_cluster_name("apiVersion: ddl/v1\nname: a\ntarget: local\n", "a-7");
    REQUIRE(valid.ok());
    auto loaded = load_spec_string(*valid, "c.yaml");
    REQUIRE(loaded.spec.has_value());
    CHECK(loaded.spec->name == "a-7");
    CHECK_FALSE(with_cluster_name(text, "Bad Name").ok());
    CHECK_FALSE(with_cluster_name(text, std::string(41, 'a')).ok());
    CHECK_FALSE(with_cluster_name("{apiVersion: ddl/v1, name: x, target: local}\n", "y").ok());
}

TEST_CASE(
    "the spec check's CUDA table is dist/cuda.json's majors, and a branch runs the newest major it reaches") {
    const auto table = runtime_cuda_majors();
    const auto text = read_file(std::string(DDL_BINARY_DIR) + "/dist/cuda.json");
    if (!text.ok()) {
        // A build without the NCCL backend writes no cuda.json and checks no branch.
        CHECK(table.empty());
        return;
    }
    const auto majors = nlohmann::json::parse(*text).at("majors");
    REQUIRE(majors.size() == table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        CHECK(majors[i].at("major") == table[i].major);
        CHECK(majors[i].at("min_driver") == table[i].min_driver);
        CHECK(majors[i].at("min_compute_capability") == table[i].min_compute_capability);
    }
    const CudaMajorNeeds rows[] = {{13, 580, "7.5"}, {12, 525, "5.0"}, {11, 450, "3.5"}};
    CHECK(newest_cuda_for_branch(rows, 580) == 13);
    CHECK(newest_cuda_for_branch(rows, 575) == 12);
    CHECK(newest_cuda_for_branch(rows, 535) == 12);
    CHECK(newest_cuda_for_branch(rows, 470) == 11);
    CHECK(newest_cuda_for_branch(rows, 440) == 0);
}
