#include "targets/gpulab/GpulabTarget.hpp"

#include "spec/SpecLoader.hpp"
#include "support/Rig.hpp"
#include "targets/Registry.hpp"
#include "targets/gpulab/GpulabJobs.hpp"
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
    nlohmann::json proxy_fields = nlohmann::json::object();      // added to a running job's state.resources
    std::string running_at = "2026-11-25T21:00:00.123456+01:00"; // state.eventTimes.RUNNING

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
        if (status == "Running") {
            j["state"]["resources"].update(proxy_fields);
            j["state"]["eventTimes"] = {{"RUNNING", running_at}};
        }
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
    nlohmann::json project_listed = nlohmann::json::array(); // other members' jobs, besides list()'s
    std::vector<std::string> projects_asked;
    Result<nlohmann::json> list_project(const std::string& project_urn) override {
        projects_asked.push_back(project_urn);
        nlohmann::json all = project_listed;
        auto mine = list();
        for (auto& j : *mine)
            all.push_back(j);
        return all;
    }
    Result<CancelOutcome> cancel(const std::string& id) override {
        if (refuse_cancel.count(id))
            return Error{"cancelling job " + id + ": GPULab answered HTTP 409 (job is not cancellable)"};
        cancelled.push_back(id);
        return CancelOutcome::Requested;
    }
    std::map<std::string, std::string> logs; // job id -> its log; absent: 404
    Result<std::string> log(const std::string& id) override {
        if (!logs.count(id)) return Error{"reading the log of job " + id + ": GPULab answered HTTP 404"};
        return logs.at(id);
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
                    Result<nlohmann::json> list_project(const std::string& urn) override {
                        return f->list_project(urn);
                    }
                    Result<CancelOutcome> cancel(const std::string& id) override { return f->cancel(id); }
                    Result<std::string> log(const std::string& id) override { return f->log(id); }
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
    std::string log;
    for (int i = 1; i <= 30; ++i)
        log += "line " + std::to_string(i) + "\n";
    rig.api->logs["job-0"] = log + "\n\n";
    auto ctx = rig.ctx();
    auto t = rig.target();
    auto s = t.provision(ctx);
    REQUIRE_FALSE(s.ok());
    const auto& m = s.error().message;
    CHECK(m.find("GPULab job job-0 for node master ended before it was ready (status FAILED); the last 20 "
                 "line(s) of its log:\n      | line 11\n") != std::string::npos);
    CHECK(m.find("| line 30\n      `ddl destroy gl` cancels") != std::string::npos);
    CHECK(m.find("line 10\n") == std::string::npos);
    CHECK(rig.state.target_data["jobs"].size() == 1); // recorded, so destroy can cancel it
}

TEST_CASE("a gpulab job that ended without a readable log says so and names gpulab-cli log") {
    Rig rig;
    rig.api->per_node["master"] = {"Failed"};
    auto ctx = rig.ctx();
    auto t = rig.target();
    auto s = t.provision(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("ended before it was ready (status FAILED); its log could not be read (") !=
          std::string::npos);
    CHECK(s.error().message.find("`gpulab-cli log job-0`") != std::string::npos);
    Rig empty;
    empty.api->per_node["master"] = {"Failed"};
    empty.api->logs["job-0"] = "\n";
    auto ctx2 = empty.ctx();
    auto t2 = empty.target();
    auto s2 = t2.provision(ctx2);
    REQUIRE_FALSE(s2.ok());
    CHECK(s2.error().message.find("(status FAILED); GPULab kept no log for it") != std::string::npos);
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

TEST_CASE("gpulab fair use: the project's live jobs of every member, and this cluster's, within 20") {
    Rig rig; // one job (the default layout) for its three nodes
    auto ctx = rig.ctx();
    auto t = rig.target();
    const std::string project = "urn:publicid:IDN+ilabt.imec.be+project+ddlproject";
    auto job = [&](int i, const std::string& status, const std::string& of_project) {
        return nlohmann::json{{"uuid", "p-" + std::to_string(i)},
                              {"name", "job-" + std::to_string(i)},
                              {"owner", {{"projectUrn", of_project}}},
                              {"state", {{"status", status}}}};
    };
    for (int i = 0; i < 19; ++i)
        rig.api->project_listed.push_back(job(i, i % 2 ? "Running" : "Queued", project));
    // Not counted: ended jobs, another project's (shown with its URN hidden or another one).
    rig.api->project_listed.push_back(job(100, "Finished", project));
    rig.api->project_listed.push_back(job(101, "Running", "urn:publicid:IDN+ilabt.imec.be+project+other"));
    REQUIRE(t.fair_use(ctx).ok()); // 19 + 1 = 20
    CHECK(rig.api->projects_asked == std::vector<std::string>{project});
    rig.api->project_listed.push_back(job(19, "Starting", project));
    auto over = t.fair_use(ctx);
    REQUIRE_FALSE(over.ok());
    CHECK(over.error().message.find("allows 20 simultaneous jobs per project") != std::string::npos);
    CHECK(over.error().message.find("project ddlproject has 20 queued or running (its members' together) and "
                                    "this cluster needs 1") != std::string::npos);
    // This cluster's own jobs (a second deploy) are not counted twice.
    REQUIRE(t.provision(ctx).ok());
    rig.api->project_listed.erase(rig.api->project_listed.size() - 1);
    CHECK(t.fair_use(ctx).ok());
    // Another member's cluster of the same name is theirs: counted.
    rig.api->project_listed.push_back(
        {{"uuid", "p-carol"},
         {"name", rig.api->submitted.at(0)["name"]},
         {"owner", {{"projectUrn", project}, {"userUrn", "urn:publicid:IDN+ilabt.imec.be+user+carol"}}},
         {"state", {{"status", "Running"}}}});
    CHECK_FALSE(t.fair_use(ctx).ok());
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

TEST_CASE("gpulab reaches a job's sshd through the SSH proxy its state names, or directly") {
    auto job = nlohmann::json::parse(R"({"state": {"status": "Running", "resources": {
        "slaveHost": "gpu7.example", "sshHost": "10.2.0.7", "sshPort": 2201, "sshUsername": "fgvb0001",
        "sshProxyHost": "bastion.ilabt.imec.be", "sshProxyPort": 2222, "sshProxyUsername": "fffgvb0001",
        "portMappings": [{"containerPort": 22, "hostPort": 30022, "hostIp": "0.0.0.0"}]}}})");
    auto viaauto = GpulabTarget::ssh_endpoint(job, 22, "auto");
    REQUIRE(viaauto.ok());
    CHECK(viaauto->host == "10.2.0.7"); // a wildcard bind: the host GPULab names for SSH to the job
    CHECK(viaauto->port == 30022);
    CHECK(viaauto->jump == "fffgvb0001@bastion.ilabt.imec.be:2222");
    auto proxy = GpulabTarget::ssh_endpoint(job, 22, "proxy");
    REQUIRE(proxy.ok());
    CHECK(proxy->jump == viaauto->jump);
    auto direct = GpulabTarget::ssh_endpoint(job, 22, "direct");
    REQUIRE(direct.ok());
    CHECK(direct->jump.empty());
    CHECK(direct->host == "10.2.0.7");

    auto res = job["state"]["resources"];
    for (const char* k :
         {"sshHost", "sshPort", "sshUsername", "sshProxyHost", "sshProxyPort", "sshProxyUsername"})
        job["state"]["resources"].erase(k);
    auto bare = GpulabTarget::ssh_endpoint(job, 22, "auto");
    REQUIRE(bare.ok());
    CHECK(bare->host == "gpu7.example");
    CHECK(bare->jump.empty());
    auto refused = GpulabTarget::ssh_endpoint(job, 22, "proxy");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("names no SSH proxy (state.resources.sshProxyHost)") !=
          std::string::npos);
    CHECK_FALSE(GpulabTarget::ssh_endpoint(job, 2222, "auto").ok()); // no mapping of that port
}

TEST_CASE("gpulab provision records the proxy as the node's jump host, logged into with the login PEM") {
    unsetenv("GPULAB_CERT");
    Rig rig("  ssh_via: proxy\n  cert: /keys/login.pem\n");
    auto ctx = rig.ctx();
    auto t = rig.target();
    // No proxy in the job's state: ssh_via proxy refuses to guess one.
    auto s = t.provision(ctx);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("gpulab.ssh_via is proxy") != std::string::npos);

    Rig proxied("  cert: /keys/login.pem\n");
    proxied.api->proxy_fields = {
        {"sshProxyHost", "proxy.example"}, {"sshProxyPort", 22}, {"sshProxyUsername", "fffuser"}};
    auto pctx = proxied.ctx();
    auto pt = proxied.target();
    REQUIRE(pt.provision(pctx).ok());
    REQUIRE(proxied.state.nodes.size() == 1);
    const auto& n = proxied.state.nodes[0];
    CHECK(n.jump == "fffuser@proxy.example:22");
    CHECK(n.jump_key == "/keys/login.pem");
    CHECK(n.address == "gpu7.example");
    auto ep = pctx.endpoint(n);
    REQUIRE(ep.jump);
    CHECK(ep.jump->key_path == "/keys/login.pem"); // the proxy takes the login key
    CHECK(ep.key_path == pctx.key_path());         // the job's own sshd the cluster's key
    CHECK(ep.jump->user == "fffuser");
}

TEST_CASE("gpulab records when its jobs end: RUNNING plus maxDuration, the earliest of them") {
    Rig rig("  max_duration: 12 hours\n");
    auto ctx = rig.ctx();
    auto t = rig.target();
    CHECK_FALSE(t.lease_end(rig.state)); // nothing deployed: no lease
    REQUIRE(t.provision(ctx).ok());
    CHECK(rig.state.target_data["lease_end"] == "2026-11-26T08:00:00Z");
    auto end = t.lease_end(rig.state);
    REQUIRE(end);
    CHECK(std::chrono::system_clock::to_time_t(*end) == 1795680000); // 2026-11-26T08:00:00Z
    REQUIRE(t.destroy(ctx).ok());
    CHECK_FALSE(rig.state.target_data.contains("lease_end"));

    CHECK(GpulabTarget::duration_seconds("1 day") == 86400);
    CHECK(GpulabTarget::duration_seconds("12 hours") == 43200);
    CHECK(GpulabTarget::duration_seconds("90 minutes") == 5400);
    CHECK(GpulabTarget::duration_seconds("2w") == 1209600);
    CHECK_FALSE(GpulabTarget::duration_seconds("soon"));
    CHECK_FALSE(GpulabTarget::duration_seconds("3 fortnights"));
}

TEST_CASE("a GPULab job ends maxDuration after it started running, as gc --expired reads it") {
    const nlohmann::json running = {
        {"request", {{"scheduling", {{"maxDuration", "12 hours"}}}}},
        {"state",
         {{"status", "Running"},
          {"eventTimes", {{"created", "2026-11-25T19:00:00Z"}, {"RUNNING", "2026-11-25T20:00:00Z"}}}}}};
    auto end = GpulabTarget::job_end(running);
    REQUIRE(end);
    CHECK(*end == 1795680000); // 2026-11-26T08:00:00Z
    // Not running yet, no maxDuration, or one GPULab's forms do not cover: no end.
    auto queued = running;
    queued["state"]["eventTimes"].erase("RUNNING");
    CHECK_FALSE(GpulabTarget::job_end(queued));
    auto unlimited = running;
    unlimited["request"]["scheduling"].erase("maxDuration");
    CHECK_FALSE(GpulabTarget::job_end(unlimited));
    auto odd = running;
    odd["request"]["scheduling"]["maxDuration"] = "a while";
    CHECK_FALSE(GpulabTarget::job_end(odd));
    CHECK_FALSE(GpulabTarget::job_end(nlohmann::json::array()));
}

TEST_CASE("a lifetime shorter than gpulab.max_duration is the jobs' maxDuration, so GPULab stops them then") {
    Rig rig("  max_duration: 12 hours\nlifetime: 90m\n");
    auto ctx = rig.ctx();
    auto t = rig.target();
    REQUIRE(t.provision(ctx).ok());
    REQUIRE(rig.api->submitted.size() == 1);
    CHECK(rig.api->submitted[0]["request"]["scheduling"]["maxDuration"] == "90 minutes");
    CHECK(rig.api->submitted[0]["request"]["scheduling"]["minDuration"] == "90 minutes");
    // RUNNING at 2026-11-25T20:00:00Z, as above.
    CHECK(rig.state.target_data["lease_end"] == "2026-11-25T21:30:00Z");
    REQUIRE(t.destroy(ctx).ok());
    // A lifetime longer than max_duration leaves it as it is.
    Rig longer("  max_duration: 12 hours\nlifetime: 2d\n");
    CHECK(gpulab_max_duration(longer.spec) == "12 hours");
}
