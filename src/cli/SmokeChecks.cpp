#include "cli/SmokeChecks.hpp"

#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/HealthChecks.hpp"
#include "cli/Launch.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/Signals.hpp"
#include "cli/SmokeHistory.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "net/Notifier.hpp"
#include "provision/Pipeline.hpp"
#include "remote/LocalForward.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <pugixml.hpp>
#include <sstream>

namespace ddl::cli {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The checks, each reported separately per node where it is per node.
class Checker {
public:
    Checker(Context& ctx, SmokeReport& report) : m_ctx(ctx), m_report(report) {}

    void run_all() {
        check_ssh();
        check_gpus();
        check_service("nfs", "nfs", m_ctx.spec.services.nfs, [this] { check_nfs(); });
        check_service("jupyter", "jupyter", m_ctx.spec.services.jupyter, [this] { check_jupyter(); });
        check_service("prometheus", "monitoring", m_ctx.spec.services.monitoring,
                      [this] { check_prometheus(); });
        check_health();
        check_allreduce();
        check_training();
        for (const auto& c : m_ctx.spec.smoke.checks)
            check_user(c);
    }

private:
    void add(std::string name, CheckStatus st, double secs, std::string msg) {
        m_report.results.push_back({"checks", std::move(name), st, secs, std::move(msg)});
    }

    template <typename F>
    void check_service(const std::string& name, const std::string& key, bool enabled, F&& fn) {
        if (!enabled) {
            add(name, CheckStatus::skipped, 0, "services." + key + ".enabled is off in the spec");
            return;
        }
        fn();
    }

    // Runs `cmd` on every node in parallel; `judge` turns the output into pass/fail.
    void per_node(const std::string& check, const std::string& cmd,
                  const std::function<std::string(const NodeState&, const ExecResult&)>& judge) {
        auto& nodes = m_ctx.state.nodes;
        std::vector<CheckResult> rs(nodes.size());
        parallel_for(nodes.size(), m_ctx.options.parallel, [&](std::size_t i) {
            auto t0 = Clock::now();
            auto r = m_ctx.remote.exec(m_ctx.endpoint(nodes[i]), cmd, std::chrono::seconds(60));
            std::string problem = r ? judge(nodes[i], *r) : r.error().message;
            rs[i] = {"checks", check + " (" + nodes[i].name + ")",
                     problem.empty() ? CheckStatus::passed : CheckStatus::failed, since(t0), problem};
        });
        for (auto& r : rs)
            m_report.results.push_back(std::move(r));
    }

    void check_ssh() {
        per_node("ssh", "hostname", [](const NodeState&, const ExecResult& r) {
            return r.ok() ? std::string() : "exit " + std::to_string(r.exit_status);
        });
    }

    int expected_gpus(const NodeState& n) const { return cli::expected_gpus(m_ctx.spec, n); }

    void check_gpus() {
        bool any = false;
        for (const auto& n : m_ctx.state.nodes)
            any = any || expected_gpus(n) > 0;
        if (!any) {
            add("gpus", CheckStatus::skipped, 0, "the spec expects no GPUs on any node");
            add("gpu-container", CheckStatus::skipped, 0, "the spec expects no GPUs on any node");
            return;
        }
        per_node("gpus", "nvidia-smi -L", [this](const NodeState& n, const ExecResult& r) {
            int want = expected_gpus(n);
            int got = 0;
            for (const auto& l : split_lines(r.out))
                got += starts_with(l, "GPU ") ? 1 : 0;
            if (want == 0) return std::string();
            if (!r.ok()) return "nvidia-smi failed (exit " + std::to_string(r.exit_status) + ")";
            return got >= want
                       ? std::string()
                       : std::to_string(got) + " GPU(s) visible, " + std::to_string(want) + " expected";
        });
        if (!m_ctx.spec.gpu.container_toolkit) {
            add("gpu-container", CheckStatus::skipped, 0, "gpu.container_toolkit is off in the spec");
            return;
        }
        per_node("gpu-container", "docker run --rm --gpus all --entrypoint nvidia-smi ubuntu -L",
                 [this](const NodeState& n, const ExecResult& r) {
                     if (expected_gpus(n) == 0) return std::string();
                     return r.ok() ? std::string() : "no GPU inside a container: " + trim(r.err);
                 });
    }

    void check_nfs() {
        const auto& mount = m_ctx.spec.services.nfs_mount;
        std::string token =
            "ddl-smoke-" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
        const NodeState* master = nullptr;
        for (const auto& n : m_ctx.state.nodes)
            if (n.group == "master") master = &n;
        if (!master) master = &m_ctx.state.nodes.front();
        auto t0 = Clock::now();
        auto w = m_ctx.remote.exec(m_ctx.endpoint(*master),
                                   "echo " + token + " > " + shell_quote(mount + "/.ddl-smoke"),
                                   std::chrono::seconds(30));
        if (!w || !w->ok()) {
            add("nfs (write on " + master->name + ")", CheckStatus::failed, since(t0),
                "cannot write " + mount + "/.ddl-smoke: " + (w ? trim(w->err) : w.error().message));
            return;
        }
        add("nfs (write on " + master->name + ")", CheckStatus::passed, since(t0), "");
        per_node("nfs read", "cat " + shell_quote(mount + "/.ddl-smoke"),
                 [&](const NodeState&, const ExecResult& r) {
                     return trim(r.out) == token ? std::string()
                                                 : "the file written on the master is not visible here";
                 });
    }

    // JupyterLab is bound to the master's localhost: reach it through an SSH tunnel with libcurl, with
    // the cluster's token (must answer) and without it (must refuse).
    void check_jupyter() {
        const NodeState* master = nullptr;
        for (const auto& n : m_ctx.state.nodes)
            if (n.group == "master") master = &n;
        if (!master) master = &m_ctx.state.nodes.front();
        std::string name = "jupyter (" + master->name + ")";
        auto t0 = Clock::now();
        auto fwd = LocalForward::open(m_ctx.endpoint(*master), "127.0.0.1", m_ctx.spec.services.jupyter_port);
        if (!fwd) {
            add(name, CheckStatus::failed, since(t0), "no SSH tunnel: " + fwd.error().message);
            return;
        }
        std::string url = "http://127.0.0.1:" + std::to_string((*fwd)->local_port()) + "/api/status";
        CurlHttpClient http;
        auto with =
            http.get(url, {"Authorization: token " + m_ctx.state.jupyter_token}, std::chrono::seconds(20));
        auto without = http.get(url, {}, std::chrono::seconds(20));
        std::string problem;
        if (!with)
            problem = "JupyterLab does not answer on the master's port " +
                      std::to_string(m_ctx.spec.services.jupyter_port) + ": " + with.error().message;
        else if (with->status != 200)
            problem = "JupyterLab refused the cluster's token (HTTP " + std::to_string(with->status) + ")";
        else if (!without || (without->status != 401 && without->status != 403))
            problem = "JupyterLab answers without the token (HTTP " +
                      std::to_string(without ? without->status : 0) + ")";
        add(name, problem.empty() ? CheckStatus::passed : CheckStatus::failed, since(t0),
            problem.empty() ? "answers with the token, refuses without" : problem);
    }

    void check_prometheus() {
        per_node("prometheus", "curl -s http://127.0.0.1:9090/api/v1/targets",
                 [this](const NodeState& n, const ExecResult& r) {
                     if (n.group != "master") return std::string();
                     auto j = nlohmann::json::parse(r.out, nullptr, false);
                     if (j.is_discarded()) return std::string("Prometheus does not answer on the master");
                     std::size_t up = 0;
                     for (const auto& t : j["data"]["activeTargets"])
                         up += t.value("health", "") == "up" ? 1 : 0;
                     return up >= m_ctx.state.nodes.size()
                                ? std::string()
                                : std::to_string(up) + " of " + std::to_string(m_ctx.state.nodes.size()) +
                                      " node exporters up";
                 });
    }

    // A check from the spec's smoke.checks: its command on each node it is on, passing on the exit status
    // it expects; a failure quotes the last line the command printed.
    void check_user(const SmokeCheck& c) {
        auto& nodes = m_ctx.state.nodes;
        std::vector<std::size_t> on;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (c.on == "all" || (c.on == "master") == (nodes[i].group == "master")) on.push_back(i);
        if (on.empty()) {
            add(c.name, CheckStatus::skipped, 0, "the cluster has no " + c.on + " node");
            return;
        }
        std::vector<CheckResult> rs(on.size());
        parallel_for(on.size(), m_ctx.options.parallel, [&](std::size_t k) {
            const NodeState& n = nodes[on[k]];
            auto t0 = Clock::now();
            auto r = m_ctx.remote.exec(m_ctx.endpoint(n), c.run, std::chrono::seconds(c.timeout_s));
            std::string problem;
            if (!r) {
                problem = r.error().message;
            } else if (r->exit_status != c.expect_exit) {
                const auto said = split_lines(trim(trim(r->err).empty() ? r->out : r->err));
                problem = "exit " + std::to_string(r->exit_status) + ", expected " +
                          std::to_string(c.expect_exit) +
                          (said.empty() ? "" : ": " + printable_utf8(said.back(), 200));
            }
            rs[k] = {"checks", c.name + " (" + n.name + ")",
                     problem.empty() ? CheckStatus::passed : CheckStatus::failed, since(t0), problem};
        });
        for (auto& r : rs)
            m_report.results.push_back(std::move(r));
    }

    // A short data-parallel training run on every slot (the bundled mlp_trainer): its loss must fall by
    // smoke.training.min_loss_drop within smoke.training.steps steps.
    void check_training() {
        const auto& t = m_ctx.spec.smoke.training;
        const std::string name = "training (mlp_trainer)";
        if (!t.enabled) {
            add(name, CheckStatus::skipped, 0, "smoke.training.enabled is off in the spec");
            return;
        }
        auto t0 = Clock::now();
        // One rank per slot, as `ddl run` starts them; the global batch is split evenly over the ranks, so
        // it is the smallest multiple of their number from mlp_trainer's default of 64.
        int ranks = 0;
        for (const auto& n : m_ctx.state.nodes)
            ranks += n.gets_ranks() ? n.slots : 0;
        ranks = std::max(ranks, 1);
        const int batch = (64 + ranks - 1) / ranks * ranks;
        RunArgs a;
        a.command = {"mlp_trainer", "--steps", std::to_string(t.steps), "--batch", std::to_string(batch)};
        a.forward_signals = false;
        auto lines = run_tool_lines(m_ctx, a);
        if (!lines) {
            add(name, CheckStatus::failed, since(t0), lines.error().message);
            return;
        }
        std::vector<double> losses;
        for (const auto& l : *lines) {
            auto f = split(trim(l), ' ');
            if (f.size() >= 4 && f[0] == "step" && f[2] == "loss") losses.push_back(std::atof(f[3].c_str()));
        }
        if (losses.size() < 2) {
            add(name, CheckStatus::failed, since(t0), "mlp_trainer printed no loss per step");
            return;
        }
        const double first = losses.front(), last = losses.back(), limit = first * (1 - t.min_loss_drop);
        char detail[200];
        std::snprintf(detail, sizeof detail, "loss %.4f -> %.4f in %zu steps (must reach %.4f or less)",
                      first, last, losses.size(), limit);
        add(name, last <= limit ? CheckStatus::passed : CheckStatus::failed, since(t0), detail);
    }

    // `ddl doctor`'s checks, one test case per check and node (or pair); a warning passes with its text.
    void check_health() {
        auto t0 = Clock::now();
        const auto findings = run_health_checks(m_ctx);
        const double each = findings.empty() ? 0 : since(t0) / static_cast<double>(findings.size());
        for (const auto& f : findings) {
            const CheckStatus st = f.status == HealthStatus::failed    ? CheckStatus::failed
                                   : f.status == HealthStatus::skipped ? CheckStatus::skipped
                                                                       : CheckStatus::passed;
            std::string msg = f.found;
            if (f.status == HealthStatus::warning) msg = "warning: " + msg;
            if (!f.expected.empty()) msg += "; expected " + f.expected;
            if (!f.fix.empty() && f.status != HealthStatus::passed) msg += "; fix: " + f.fix;
            add("doctor: " + f.check + " (" + f.node + ")", st, each, msg);
        }
    }

    void check_allreduce() {
        allreduce("allreduce (all slots)", false);
        // The same through `ddl run --container`: the image's libraries, the mounts and host networking.
        if (m_ctx.spec.runtime.image.empty())
            add("allreduce in containers", CheckStatus::skipped, 0, "runtime.image is not set in the spec");
        else
            allreduce("allreduce in containers", true);
    }

    void allreduce(const std::string& name, bool container) {
        auto t0 = Clock::now();
        RunArgs a;
        a.command = {"ddl-allreduce-test", "--size", "16M", "-n", "3", "-w", "1", "--json"};
        a.forward_signals = false; // a Ctrl-C must reach ddl, which then destroys the cluster
        a.container = container;
        auto j = run_tool_json(m_ctx, a);
        if (!j) {
            add(name, CheckStatus::failed, since(t0), j.error().message);
            return;
        }
        if (j->value("wrong", 1) != 0 || (*j)["results"].empty()) {
            add(name, CheckStatus::failed, since(t0), "wrong result: " + j->dump());
            return;
        }
        if (!container) m_report.figures["busbw_gbs"] = (*j)["results"][0].value("busbw", 0.0);
        char detail[160];
        std::snprintf(detail, sizeof detail, "%d ranks, 16 MiB exact, busbw %.4f GB/s, backend %s",
                      j->value("ranks", 0), (*j)["results"][0].value("busbw", 0.0),
                      j->value("backend", std::string("?")).c_str());
        add(name, CheckStatus::passed, since(t0), detail);
    }

    Context& m_ctx;
    SmokeReport& m_report;
};

} // namespace

void run_builtin_checks(Context& ctx, SmokeReport& report) {
    Checker(ctx, report).run_all();
}

} // namespace ddl::cli
