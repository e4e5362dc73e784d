#include "targets/gpulab/GpulabTarget.hpp"

#include "spec/SpecLoader.hpp"
#include "support/Rig.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

using namespace ddl;

namespace {

// GPULab as a script: each job walks through `script` (one status per get), staying on the last one. Once
// cancelled, a job walks through `after_cancel` instead; a cancel of an id in `refuse_cancel` is refused
// with HTTP 409, as GPULab might for a job that has ended (its documentation does not say).
class FakeGpulab : public GpulabApi {
public:
    std::vector<std::string> script{"Queued", "Starting", "Running"};
    std::map<std::string, std::vector<std::string>> per_node; // DDL_NODE -> its own script
    std::vector<std::string> after_cancel{"Cancelled"};
    std::map<std::string, std::vector<std::string>> after_cancel_of; // job id -> its own after_cancel
    std::set<std::string> refuse_cancel;
    std::vector<nlohmann::json> submitted;
    std::vector<std::string> cancelled;
    std::map<std::string, int> gets, gets_after_cancel;
    nlohmann::json extra_listed = nlohmann::json::array();

    std::string node_of(const std::string& id) const {
        return submitted[std::stoul(id.substr(4))]["request"]["docker"]["environment"]["DDL_NODE"];
    }
    Result<std::string> submit(const nlohmann::json& job) override {
        submitted.push_back(job);
        return "job-" + std::to_string(submitted.size() - 1);
    }
    Result<nlohmann::json> get(const std::string& id) override {
        if (std::find(cancelled.begin(), cancelled.end(), id) != cancelled.end()) {
            int n = gets_after_cancel[id]++;
            const auto& s = after_cancel_of.count(id) ? after_cancel_of.at(id) : after_cancel;
            return nlohmann::json{
                {"uuid", id},
                {"state", {{"status", s[std::min<std::size_t>(static_cast<std::size_t>(n), s.size() - 1)]}}}};
        }
        if (!starts_with(id, "job-")) {
            for (const auto& j : extra_listed)
                if (j["uuid"] == id) return j;
            return Error{"reading job " + id + ": GPULab answered HTTP 404 (no such job)"};
        }
        const auto& s = per_node.count(node_of(id)) ? per_node.at(node_of(id)) : script;
        int n = gets[id]++;
        std::string status = s[std::min<std::size_t>(static_cast<std::size_t>(n), s.size() - 1)];
        nlohmann::json j{{"uuid", id},
                         {"name", submitted[std::stoul(id.substr(4))]["name"]},
                         {"state", {{"status", status}}}};
        if (status == "Queued")
            j["state"]["scheduling"] = {
                {"queuedExplanations", {"project ddlproject uses its full GPU quota"}}};
        if (status == "Running")
            j["state"]["resources"] = {{"slaveHost", "gpu7.example"},
                                       {"portMappings",
                                        {{{"containerPort", 22},
                                          {"hostPort", 30000 + std::stoi(id.substr(4))},
                                          {"hostIp", "0.0.0.0"}}}}};
        return j;
    }
    Result<nlohmann::json> list() override {
        nlohmann::json all = extra_listed;
        for (std::size_t i = 0; i < submitted.size(); ++i)
            all.push_back({{"uuid", "job-" + std::to_string(i)},
                           {"name", submitted[i]["name"]},
                           {"state", {{"status", "Running"}}}});
        return all;
    }
    Result<CancelOutcome> cancel(const std::string& id) override {
        if (refuse_cancel.count(id))
            return Error{"cancelling job " + id + ": GPULab answered HTTP 409 (job is not cancellable)"};
        cancelled.push_back(id);
        return CancelOutcome::Requested;
    }
};

struct Rig : test::ClusterRig {
    FakeGpulab* api = nullptr;
    std::unique_ptr<FakeGpulab> owned = std::make_unique<FakeGpulab>();
    explicit Rig(const std::string& extra = "") {
        load("apiVersion: ddl/v1\nname: gl\ntarget: gpulab\nnodes:\n  master: {gpus: 1}\n"
             "  workers: {count: 2, gpus: 1}\ngpulab:\n  project: ddlproject\n"
             "  docker_image: img:1\n  wait_minutes: 1\n" +
             extra);
        api = owned.get();
    }
    GpulabTarget target(std::chrono::milliseconds cancel_deadline = GpulabTarget::k_cancel_deadline) {
        return GpulabTarget(
            [this](const Context&) -> Result<std::unique_ptr<GpulabApi>> {
                // The target owns its client; the rig keeps looking at the same fake through `api`.
                struct Borrowed : GpulabApi {
                    FakeGpulab* f;
                    explicit Borrowed(FakeGpulab* x) : f(x) {}
                    Result<std::string> submit(const nlohmann::json& j) override { return f->submit(j); }
                    Result<nlohmann::json> get(const std::string& id) override { return f->get(id); }
                    Result<nlohmann::json> list() override { return f->list(); }
                    Result<CancelOutcome> cancel(const std::string& id) override { return f->cancel(id); }
                };
                return std::unique_ptr<GpulabApi>(std::make_unique<Borrowed>(api));
            },
            std::chrono::milliseconds(0), cancel_deadline);
    }
};

} // namespace

TEST_CASE("gpulab provision submits one job with every GPU and makes it, once RUNNING, an SSH node") {
    Rig rig;
    auto ctx = rig.ctx();
    auto t = rig.target();
    REQUIRE(t.provision(ctx).ok());
    REQUIRE(rig.api->submitted.size() == 1);
    CHECK(rig.api->submitted[0]["request"]["resources"]["gpus"] == 3);
    auto key = read_file(ctx.key_path() + ".pub");
    REQUIRE(key.ok());
    CHECK(rig.api->submitted[0]["request"]["docker"]["environment"]["DDL_AUTHORIZED_KEY"] == ddl::trim(*key));
    REQUIRE(rig.state.nodes.size() == 1);
    CHECK(rig.state.nodes[0].name == "master");
    CHECK(rig.state.nodes[0].address == "gpu7.example"); // a wildcard bind means the worker's host
    CHECK(rig.state.nodes[0].port == 30000);
    CHECK(rig.state.nodes[0].user == "root");
    CHECK(rig.state.target_data["jobs"]["master"] == "job-0");
    // A second provision keeps the running job instead of submitting a new one.
    REQUIRE(t.provision(ctx).ok());
    CHECK(rig.api->submitted.size() == 1);
}

TEST_CASE("a gpulab job that ends while starting fails provision with its log tail") {
    Rig rig;
    rig.api->per_node["master"] = {"Queued", "Starting", "Failed"};
    auto ctx = rig.ctx();
    auto t = rig.target();
    auto s = t.provision(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find(
              "GPULab job job-0 for node master ended before it was ready (status FAILED)") !=
          std::string::npos);
    CHECK(s.error().message.find("its log says why: `gpulab-cli log job-0`") != std::string::npos);
    CHECK(rig.state.target_data["jobs"].size() == 1); // recorded, so destroy can cancel it
}

TEST_CASE("gpulab jobs still queued at the deadline fail provision with the scheduler's reason") {
    Rig rig;
    rig.api->script = {"Queued"};
    auto ctx = rig.ctx();
    auto t = GpulabTarget(
        [&rig](const Context&) -> Result<std::unique_ptr<GpulabApi>> {
            return std::unique_ptr<GpulabApi>(std::move(rig.owned));
        },
        std::chrono::milliseconds(0));
    // wait_minutes is 1: the fake answers at once, so let the deadline pass by asking for none.
    rig.spec.target_section<GpulabSpec>().wait_minutes = 0;
    ctx.spec.target_section<GpulabSpec>().wait_minutes = 0;
    auto s = t.provision(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(
        s.error().message.find("these GPULab jobs are still not running: master (job job-0, QUEUED: project "
                               "ddlproject uses its full GPU quota)") != std::string::npos);
    CHECK(s.error().message.find("raise gpulab.wait_minutes") != std::string::npos);
}

TEST_CASE("gpulab destroy cancels the recorded jobs and any other job named for the cluster") {
    Rig rig;
    auto ctx = rig.ctx();
    auto t = rig.target();
    REQUIRE(t.provision(ctx).ok());
    rig.api->extra_listed = {
        {{"uuid", "orphan-1"}, {"name", "ddl-gl-worker9"}, {"state", {{"status", "Queued"}}}},
        {{"uuid", "done-1"}, {"name", "ddl-gl-worker8"}, {"state", {{"status", "Finished"}}}},
        {{"uuid", "other-1"}, {"name", "ddl-other-master"}, {"state", {{"status", "Running"}}}}};
    REQUIRE(t.destroy(ctx).ok());
    std::sort(rig.api->cancelled.begin(), rig.api->cancelled.end());
    CHECK(rig.api->cancelled == std::vector<std::string>{"job-0", "orphan-1"});
    CHECK_FALSE(rig.state.target_data.contains("jobs"));
}

TEST_CASE("gpulab destroy waits until the cancelled jobs have left RUNNING and GPULab's halting states") {
    // GPULab takes a while to stop a cancelled job: two more reads say Running (or Must Halt, Halting, as
    // GPULab spells them), then Cancelled.
    for (const auto& states : {std::vector<std::string>{"Running", "Running", "Cancelled"},
                               std::vector<std::string>{"Must Halt", "Halting", "Cancelled"}}) {
        INFO(states[0]);
        Rig rig;
        auto ctx = rig.ctx();
        auto t = rig.target();
        REQUIRE(t.provision(ctx).ok());
        rig.api->after_cancel = states;
        REQUIRE(t.destroy(ctx).ok());
        CHECK(rig.api->gets_after_cancel["job-0"] == 3); // read until it said Cancelled, and no further
        CHECK_FALSE(rig.state.target_data.contains("jobs"));
    }
}

TEST_CASE("gpulab destroy fails naming the jobs still running after the cancel deadline") {
    Rig rig;
    auto ctx = rig.ctx();
    REQUIRE(rig.target().provision(ctx).ok());
    // The job (job-0) stays Running whatever it is asked.
    rig.api->after_cancel_of["job-0"] = {"Running"};
    auto t = rig.target(std::chrono::milliseconds(20));
    auto s = t.destroy(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("these cancelled GPULab jobs are still running: job-0 (RUNNING)") !=
          std::string::npos);
    CHECK(s.error().message.find("ddl destroy gl") != std::string::npos);
    CHECK(rig.api->gets_after_cancel["job-0"] >= 2); // polled again before giving up
    // Kept in the state, so that the next destroy cancels it again.
    CHECK(rig.state.target_data["jobs"]["master"] == "job-0");
}

TEST_CASE("gpulab destroy accepts a refused cancel of a job that has ended, and reports any other") {
    Rig rig;
    auto ctx = rig.ctx();
    rig.api->per_node["master"] = {"Queued", "Starting", "Failed"};
    auto t = rig.target();
    REQUIRE_FALSE(t.provision(ctx).ok()); // the job failed; it is recorded
    // GPULab refuses to cancel the failed job; reading it shows that it had ended, so nothing is left.
    rig.api->refuse_cancel = {"job-0"};
    REQUIRE(t.destroy(ctx).ok());
    CHECK_FALSE(rig.state.target_data.contains("jobs"));

    // A refused cancel of a job that is still running is an error with GPULab's answer.
    Rig rig2;
    auto ctx2 = rig2.ctx();
    auto t2 = rig2.target();
    REQUIRE(t2.provision(ctx2).ok());
    rig2.api->refuse_cancel = {"job-0"};
    auto s = t2.destroy(ctx2);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("cancelling job job-0: GPULab answered HTTP 409") != std::string::npos);
    CHECK(rig2.state.target_data.contains("jobs"));
}

TEST_CASE("the gpulab client certificate must hold a certificate and a decrypted key") {
    Rig rig;
    auto ctx = rig.ctx();
    auto t = rig.target();
    std::string pem = rig.dir.path() + "/cert.pem";
    ctx.spec.target_section<GpulabSpec>().cert = pem;
    unsetenv("GPULAB_CERT");
    REQUIRE(
        write_file_atomic(pem, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", 0600).ok());
    auto s = t.preflight(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("has no private key") != std::string::npos);
    REQUIRE(write_file_atomic(
                pem,
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nBBBB\n-----END ENCRYPTED PRIVATE KEY-----\n",
                0600)
                .ok());
    s = t.preflight(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("is encrypted") != std::string::npos);
    CHECK(s.error().message.find("BBBB") == std::string::npos); // key material never in messages
    ctx.spec.target_section<GpulabSpec>().cert.clear();
    s = t.preflight(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("set GPULAB_CERT") != std::string::npos);
}
