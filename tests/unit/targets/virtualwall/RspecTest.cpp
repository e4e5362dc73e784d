#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"
#include "targets/gpulab/GpulabJobs.hpp"
#include "targets/virtualwall/RequestRspec.hpp"

#include <catch2/catch.hpp>
#include <pugixml.hpp>
#include <set>

using namespace ddl;

namespace {

Spec load(const std::string& text) {
    auto r = load_spec_string(text, "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

Spec wall(int workers, const std::string& extra = "") {
    return load("apiVersion: ddl/v1\nname: vw\ntarget: virtualwall\nnodes:\n  master: {gpus: 1}\n  workers: "
                "{count: " +
                std::to_string(workers) + ", gpus: 1}\nvirtualwall:\n  client: geni\n  project: p\n" + extra);
}

Spec lab(const std::string& layout, const std::string& extra = "") {
    return load(
        "apiVersion: ddl/v1\nname: gl\ntarget: gpulab\nnodes:\n  master: {gpus: 2}\n  workers: {count: 1, "
        "gpus: 1}\ngpulab:\n  project: proj\n  docker_image: img:1\n  layout: " +
        layout + "\n" + extra);
}

} // namespace

TEST_CASE("the RSpec gives every ordered pair of interfaces the link capacity in kbit/s") {
    auto text = render_request_rspec(wall(3, "  link_capacity: 1gbit\n"));
    pugi::xml_document doc;
    REQUIRE(doc.load_string(text.c_str()));
    auto link = doc.child("rspec").child("link");
    REQUIRE(link);
    std::set<std::pair<std::string, std::string>> pairs;
    for (auto p : link.children("property")) {
        CHECK(std::string(p.attribute("capacity").value()) == "1000000");
        pairs.insert({p.attribute("source_id").value(), p.attribute("dest_id").value()});
    }
    CHECK(pairs.size() == 12); // 4 nodes, 4 * 3 directions
    CHECK(pairs.count({"master:if0", "worker3:if0"}) == 1);
    CHECK(pairs.count({"worker3:if0", "master:if0"}) == 1);
    int refs = 0;
    for ([[maybe_unused]] auto r : link.children("interface_ref"))
        ++refs;
    CHECK(refs == 4);
    CHECK(std::string(link.child("link_type").attribute("name").value()) == "lan");
}

TEST_CASE("the RSpec names the chosen testbed's component manager on nodes and the link") {
    auto text = render_request_rspec(wall(1, "  testbed: wall1\n"));
    pugi::xml_document doc;
    REQUIRE(doc.load_string(text.c_str()));
    const std::string cm = "urn:publicid:IDN+wall1.ilabt.iminds.be+authority+cm";
    for (auto n : doc.child("rspec").children("node")) {
        CHECK(n.attribute("component_manager_id").value() == cm);
        CHECK(std::string(n.child("sliver_type").attribute("name").value()) == "raw-pc");
        CHECK(std::string(n.child("hardware_type").attribute("name").value()) == "gpunode");
        CHECK_FALSE(n.child("sliver_type").child("disk_image")); // no image given: the testbed default
    }
    CHECK(doc.child("rspec").child("link").child("component_manager").attribute("name").value() == cm);
}

TEST_CASE("a one-node RSpec has no LAN and every node a distinct LAN address") {
    auto one = render_request_rspec(wall(0));
    CHECK(one.find("<link") == std::string::npos);
    auto nodes = rspec_nodes(wall(256));
    REQUIRE(nodes.size() == 257);
    std::set<std::string> addrs;
    for (const auto& n : nodes)
        addrs.insert(n.lan_address);
    CHECK(addrs.size() == 257);
    CHECK(nodes[0].lan_address == "192.168.0.1");
    CHECK(nodes[256].lan_address == "192.168.1.1");
}

TEST_CASE("gpulab renders the job request GPULab's Job2 model asks for") {
    auto jobs = render_gpulab_jobs(lab("one-job", "  cluster_id: \"7\"\n  min_cuda_version: \"12\"\n"),
                                   "ssh-ed25519 AAAA test");
    REQUIRE(jobs.size() == 1);
    CHECK(jobs[0].node == "master");
    const auto& j = jobs[0];
    const auto& res = j.request["request"]["resources"];
    CHECK(res["gpus"] == 3);
    CHECK(res["clusterId"] == 7); // an integer, as GPULab takes it
    CHECK(res["minCudaVersion"] == 12);
    CHECK_FALSE(res.contains("gpuModel"));
    const auto& docker = j.request["request"]["docker"];
    CHECK(docker["environment"]["DDL_AUTHORIZED_KEY"] == "ssh-ed25519 AAAA test");
    CHECK(docker["portMappings"][0]["containerPort"] == 22);
    // A list, so that neither docker-py (which splits a string into words and runs no shell) nor an image's
    // ENTRYPOINT changes what runs: the shell gets the whole program as one argument.
    REQUIRE(docker["command"].is_array());
    REQUIRE(docker["command"].size() == 3);
    CHECK(docker["command"][0] == "/bin/sh");
    CHECK(docker["command"][1] == "-c");
    CHECK(docker["command"][2] == gpulab_sshd_program());
    CHECK(j.request["owner"]["projectUrn"] == "urn:publicid:IDN+ilabt.imec.be+project+proj");
}

TEST_CASE("gpulab jobs-per-gpu is refused across GPUs: jobs cannot reach each other's ports") {
    const std::string text =
        "apiVersion: ddl/v1\nname: gl\ntarget: gpulab\nnodes:\n  master: {gpus: 2}\n"
        "  workers: {count: 1, gpus: 1}\ngpulab:\n  project: proj\n  docker_image: img:1\n"
        "  layout: jobs-per-gpu\n";
    auto r = load_spec_string(text, "gl.yaml");
    REQUIRE_FALSE(r.spec.has_value());
    const auto diag = r.diagnostics.format_text();
    CHECK(diag.find("gl.yaml:10:11: error: gpulab.layout: jobs-per-gpu cannot train across 3 jobs") !=
          std::string::npos);
    CHECK(diag.find("use gpulab.layout: one-job") != std::string::npos);
    // One GPU: one job either way.
    auto one = load("apiVersion: ddl/v1\nname: gl\ntarget: gpulab\nnodes:\n  master: {gpus: 1}\n"
                    "gpulab:\n  project: proj\n  docker_image: img:1\n  layout: jobs-per-gpu\n");
    CHECK(render_gpulab_jobs(one, "k").size() == 1);
}

TEST_CASE("gpulab one-job renders a single job with every GPU and scaled CPUs and memory") {
    auto jobs = render_gpulab_jobs(lab("one-job", "  gpu_model: A100\n  ssh_port: 2200\n"), "k");
    REQUIRE(jobs.size() == 1);
    const auto& res = jobs[0].request["request"]["resources"];
    CHECK(res["gpus"] == 3);
    CHECK(res["cpus"] == 12);
    CHECK(res["cpuMemoryGb"] == 48);
    CHECK(res["gpuModel"] == nlohmann::json::array({"A100"}));
    CHECK_FALSE(res.contains("clusterId"));
    CHECK(jobs[0].request["request"]["docker"]["environment"]["DDL_SSH_PORT"] == "2200");
    CHECK(jobs[0].request["request"]["docker"]["portMappings"][0]["containerPort"] == 2200);
}

TEST_CASE(
    "gpulab v4.0 jobs carry the owner from the login certificate and the cluster key for GPULab's SSH") {
    auto jobs = render_gpulab_jobs(lab("one-job"), "ssh-ed25519 AAAA test",
                                   {"urn:publicid:IDN+ilabt.imec.be+user+jdoe", "jdoe@example.org"});
    REQUIRE(jobs.size() == 1);
    const auto& j = jobs[0].request;
    CHECK(j["owner"]["userUrn"] == "urn:publicid:IDN+ilabt.imec.be+user+jdoe");
    CHECK(j["owner"]["userEmail"] == "jdoe@example.org");
    CHECK(j["owner"]["projectUrn"] == "urn:publicid:IDN+ilabt.imec.be+project+proj");
    CHECK(j["deploymentEnvironment"] == "production");
    CHECK(j["request"]["extra"]["sshPubKeys"] == nlohmann::json::array({"ssh-ed25519 AAAA test"}));
    // `ddl render` has no key yet: no placeholder where GPULab validates a key.
    auto rendered = render_gpulab_jobs(lab("one-job"), k_gpulab_key_placeholder);
    CHECK_FALSE(rendered[0].request["request"].contains("extra"));
    CHECK_FALSE(rendered[0].request["owner"].contains("userUrn"));
    // The project lives under the user's authority, as imec's CLI builds its URN.
    CHECK(gpulab_project_urn("p", "urn:publicid:IDN+other.example+user+x") ==
          "urn:publicid:IDN+other.example+project+p");
    CHECK(gpulab_legacy_login("urn:publicid:IDN+wall2.ilabt.iminds.be+user+bob", "/b.pem")
              .find("legacy wall2 authority (/b.pem)") != std::string::npos);
    CHECK(gpulab_legacy_login("urn:publicid:IDN+ilabt.imec.be+user+bob", "/b.pem").empty());
}
