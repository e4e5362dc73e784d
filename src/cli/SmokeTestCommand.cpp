// `ddl smoke-test`: deploy -> checks -> destroy (always), or the checks alone on a deployed cluster
// (--cluster); JUnit XML, notices, history. The report is SmokeReport, the checks SmokeChecks.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Launch.hpp"
#include "cli/Lifetime.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/Signals.hpp"
#include "cli/SmokeChecks.hpp"
#include "cli/SmokeHistory.hpp"
#include "cli/SmokeReport.hpp"
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

struct SmokeArgs {
    std::string file;
    std::string cluster; // checks only, on this deployed cluster: no deploy, no destroy
    std::string junit;
    std::vector<std::string> notify;
    bool notify_always = false;
    bool keep_on_failure = false;
    std::string before_checks; // a local command run after deploy, before the checks (argv split on spaces)
    int ssh_timeout_s = 90;
    std::string history; // JSON lines of earlier runs' figures; this run's is appended
    double max_busbw_drop_pct = 10;
    double max_deploy_growth_pct = 50;
    std::string name_suffix; // appended to the cluster's name ("-ID"): one cluster per pipeline run
};

void add_options(CLI::App& sub, SmokeArgs& a) {
    auto* file = sub.add_option("file", a.file, "cluster.yaml: deployed, checked, destroyed");
    auto* cluster =
        sub.add_option("--cluster", a.cluster,
                       "Check this deployed cluster (name or spec file) as it stands: no deploy, no destroy")
            ->check(k_non_empty);
    file->excludes(cluster);
    sub.add_flag("--keep-on-failure", a.keep_on_failure, "Leave a failed cluster up for debugging")
        ->excludes(cluster);
    sub.add_option("--junit", a.junit, "Write a JUnit XML report here")->check(k_non_empty);
    sub.add_option("--notify", a.notify,
                   "mailto:ADDR or a webhook URL; repeatable (SMTP settings: DDL_SMTP_*)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub.add_flag("--notify-always", a.notify_always, "Send notices also when everything passed");
    sub.add_option("--before-checks", a.before_checks, "Local command to run before the checks");
    sub.add_option("--ssh-timeout", a.ssh_timeout_s, "Seconds to wait for SSH on every node")
        ->check(k_seconds)
        ->capture_default_str()
        ->excludes(cluster);
    sub.add_option("--name-suffix", a.name_suffix,
                   "Append -SUFFIX to the cluster's name (e.g. the pipeline's id), so that two runs at once "
                   "deploy two clusters")
        ->check(k_non_empty)
        ->excludes(cluster);
    sub.add_option(
           "--history", a.history,
           "JSON-lines file of earlier runs' figures (keep it between runs): this run's is appended, and "
           "regression checks compare it with the median of the last 5")
        ->check(k_non_empty);
    sub.add_option("--max-busbw-drop", a.max_busbw_drop_pct,
                   "Percent below the median busbw that fails the regression check")
        ->check(CLI::Range(0.0, 100.0))
        ->capture_default_str();
    sub.add_option("--max-deploy-growth", a.max_deploy_growth_pct,
                   "Percent above the median deploy time that fails the regression check")
        ->check(CLI::Range(0.0, 10000.0))
        ->capture_default_str();
}

// Deploy, one testcase per phase. Whether every phase passed.
bool deploy_phases(OpenCluster& oc, const std::string& logs, SmokeReport& report) {
    auto& ctx = *oc.ctx;
    for (const auto& phase : phase_names()) {
        auto t0 = Clock::now();
        int prc = run_deploy(ctx, *oc.driver, DeployRequest{phase});
        if (prc != exit_code::k_ok) {
            report.results.push_back({"deploy", phase, CheckStatus::failed, since(t0),
                                      prc == 130 ? "interrupted" : "phase failed; see " + logs + "/ddl.log"});
            return false;
        }
        report.results.push_back({"deploy", phase, CheckStatus::passed, since(t0), ""});
        report.figures["deploy_s"] += report.results.back().seconds;
    }
    return true;
}

// The user's --before-checks command; a failure is a testcase of its own.
void before_checks_hook(const SmokeArgs& a, SmokeReport& report) {
    if (a.before_checks.empty()) return;
    SystemProcessRunner proc;
    auto r = proc.run({.argv = split(a.before_checks, ' ')});
    if (!r || !r->success())
        report.results.push_back(
            {"deploy", "before-checks hook", CheckStatus::failed, 0,
             r ? describe_failure({.argv = split(a.before_checks, ' ')}, *r) : r.error().message});
}

// What the cluster has used until now (the smoke test's own cluster: its whole life so far), with cost.
void record_usage(const Context& ctx, SmokeReport& report) {
    const CostSpec& cost = ctx.spec.life.cost;
    const Usage u = usage_so_far(ctx.state, ctx.spec, std::chrono::system_clock::now());
    report.figures["node_hours"] = u.node_hours;
    report.figures["gpu_hours"] = u.gpu_hours;
    if (cost.set()) {
        report.figures["cost"] = usage_json(u, cost)["cost"]["amount"].get<double>();
        report.currency = cost.currency;
    }
    report.usage = usage_text(u, cost);
}

// The checks, then the regression checks against the history.
void run_checks(Context& ctx, const SmokeArgs& a, const History& history, SmokeReport& report) {
    before_checks_hook(a, report);
    run_builtin_checks(ctx, report);
    record_usage(ctx, report);
    if (a.history.empty()) return;
    HistoryLimits limits;
    limits.max_busbw_drop = a.max_busbw_drop_pct / 100;
    limits.max_deploy_growth = a.max_deploy_growth_pct / 100;
    for (auto& r : regression_checks(history, report.figures, limits))
        report.results.push_back(std::move(r));
}

// The summary on stdout, the JUnit file and the notices.
void report_results(const Invocation& inv, const SmokeArgs& a, const SmokeReport& report,
                    const std::optional<SmtpSettings>& smtp, const std::string& logs) {
    std::cout << report.summary();
    if (!a.junit.empty()) {
        if (auto s = write_file_atomic(a.junit, report.junit_xml(), 0644); !s)
            inv.say("cannot write " + a.junit + ": " + s.error().message);
    }
    if (!a.notify.empty() && (!report.passed() || a.notify_always)) {
        Notice n{report.cluster, report.passed(), report.failures(), report.summary(), logs};
        CurlHttpClient http;
        for (const auto& e : send_notices(n, a.notify, http, smtp))
            inv.say("notice not sent: " + e);
    }
}

// What a run needs before it touches a cluster: the mail settings and the history, read (and checked) first:
// a missing DDL_SMTP_URL or an unreadable history should not cost a deploy, and reading the mail settings
// removes the password from the environment every subprocess inherits. nullopt: refused (rc set).
struct SmokeInputs {
    std::optional<SmtpSettings> smtp;
    History history;
};

std::optional<SmokeInputs> read_inputs(const Invocation& inv, const SmokeArgs& a, int& rc) {
    rc = exit_code::k_bad_input;
    SmokeInputs in;
    for (const auto& t : a.notify) {
        if (auto s = validate_notify_target(t); !s) {
            inv.fail(s.error().message, rc);
            return std::nullopt;
        }
    }
    if (needs_smtp(a.notify)) {
        auto s = smtp_settings_from_env();
        if (!s) {
            inv.fail("--notify mailto: " + s.error().message, rc);
            return std::nullopt;
        }
        in.smtp = std::move(*s);
    }
    if (!a.history.empty()) {
        auto h = read_history(a.history);
        if (!h) {
            inv.fail(h.error().message, rc);
            return std::nullopt;
        }
        in.history = std::move(*h);
        if (in.history.unreadable_lines > 0)
            inv.say("--history " + a.history + ": " + std::to_string(in.history.unreadable_lines) +
                    " line(s) are not a run's JSON object; left out");
    }
    return in;
}

// --cluster: the checks on a deployed cluster as it stands, under its lock (no deploy or destroy meanwhile);
// nothing is deployed or destroyed.
int smoke_deployed(const Invocation& inv, const SmokeArgs& a, const SmokeInputs& in) {
    int rc = 0;
    auto oc = open_cluster(inv.g.state_dir, a.cluster, true, "ddl smoke-test --cluster " + a.cluster, &rc);
    if (!oc) return inv.fail(oc.error().message, rc);
    auto& ctx = *(*oc)->ctx;
    for (const auto& phase : phase_names()) {
        if (!ctx.state.phase_done(phase))
            return inv.fail("cluster " + ctx.state.cluster + " is not fully deployed (phase " + phase +
                                " has not finished): run `ddl deploy` first, or give the spec file to "
                                "smoke-test without --cluster to deploy, check and destroy it",
                            exit_code::k_bad_input);
    }
    SmokeReport report;
    report.cluster = ctx.state.cluster;
    run_checks(ctx, a, in.history, report);
    if (!a.history.empty()) {
        if (auto s = append_history(a.history, report, utc_now_iso()); !s) inv.say(s.error().message);
    }
    report_results(inv, a, report, in.smtp, ctx.cluster_dir() + "/logs");
    return report.passed() ? exit_code::k_ok : exit_code::k_failure;
}

// With --name-suffix the run deploys a copy of the spec under the longer name (kept as the cluster's stored
// spec, so later commands see the name it was deployed with). The copy lies beside the original, so that its
// relative paths (workdir: .) mean the same folders, and goes when the run ends; where that folder cannot be
// written, in a temporary folder.
struct RenamedSpec {
    TempDir dir{"ddl-smoke"};
    std::string beside; // the copy beside the original, removed at the end
    RenamedSpec() = default;
    RenamedSpec(const RenamedSpec&) = delete;
    RenamedSpec& operator=(const RenamedSpec&) = delete;
    ~RenamedSpec() {
        std::error_code ec;
        if (!beside.empty()) std::filesystem::remove(beside, ec);
    }
};

// The renamed copy's path; `rc` (on failure) is the exit code.
Result<std::string> write_renamed(const SmokeArgs& a, const std::string& name, RenamedSpec& out, int& rc) {
    rc = exit_code::k_bad_input;
    auto text = read_file_limited(a.file, SpecLoader::k_max_bytes);
    if (!text) return text.error();
    auto renamed = with_cluster_name(*text, name + "-" + a.name_suffix);
    if (!renamed) return Error{"--name-suffix " + a.name_suffix + ": " + renamed.error().message};
    const std::filesystem::path original(a.file);
    std::string file = (original.parent_path() / ("." + original.stem().string() + "-" + a.name_suffix +
                                                  ".ddl-smoke" + original.extension().string()))
                           .string();
    if (write_file_atomic(file, *renamed, 0600)) {
        out.beside = file;
        return file;
    }
    file = out.dir.path() + "/" + original.filename().string();
    rc = exit_code::k_failure;
    if (auto s = write_file_atomic(file, *renamed, 0600); !s) return s.error();
    return file;
}

int smoke_test(const Invocation& inv, const SmokeArgs& a) {
    int rc = 0;
    auto in = read_inputs(inv, a, rc);
    if (!in) return rc;
    if (!a.cluster.empty()) return smoke_deployed(inv, a, *in);
    if (a.file.empty())
        return inv.fail("smoke-test needs the spec file to deploy, check and destroy (ddl smoke-test "
                        "cluster.yaml), or --cluster NAME to check a deployed cluster",
                        exit_code::k_bad_input);
    auto loaded = load_spec_file(a.file);
    if (!loaded.spec) {
        std::cerr << loaded.diagnostics.format_text();
        return exit_code::k_bad_input;
    }
    RenamedSpec renamed;
    std::string spec_file = a.file;
    if (!a.name_suffix.empty()) {
        auto copy = write_renamed(a, loaded.spec->name, renamed, rc);
        if (!copy) return inv.fail(copy.error().message, rc);
        spec_file = *copy;
        loaded = load_spec_file(spec_file);
        if (!loaded.spec) {
            std::cerr << loaded.diagnostics.format_text();
            return exit_code::k_bad_input;
        }
    }
    const Spec& spec = *loaded.spec;
    // A smoke test destroys what it deployed, so it never starts on a cluster it did not create.
    if (StateStore(inv.g.state_dir).exists(spec.name))
        return inv.fail(
            "cluster " + spec.name + " already exists in " + inv.g.state_dir +
                " (deployed, or left by an earlier run): smoke-test deploys and destroys a cluster "
                "of its own and leaves this one alone\nhint: check it as it stands with `ddl "
                "smoke-test --cluster " +
                spec.name +
                "`, deploy a separate one with `--name-suffix ID`, or remove it first "
                "with `ddl destroy " +
                spec.name + "`",
            exit_code::k_bad_input);
    SmokeReport report;
    report.cluster = spec.name;
    DeployOptions opts;
    opts.yes = true;
    opts.ssh_deadline = std::chrono::seconds(a.ssh_timeout_s);
    auto oc = open_for_deploy(inv.g.state_dir, spec, spec_file, opts, "ddl smoke-test " + a.file, rc);
    if (!oc) return inv.fail(oc.error().message, rc);
    auto& ctx = *(*oc)->ctx;
    std::string logs = ctx.cluster_dir() + "/logs";

    bool deployed = deploy_phases(**oc, logs, report);
    if (!deployed) report.figures.erase("deploy_s"); // a part of a deploy is no deploy time
    if (deployed && !g_interrupted) {
        run_checks(ctx, a, in->history, report);
    } else if (deployed) {
        report.results.push_back(
            {"checks", "interrupted", CheckStatus::failed, 0, "SIGINT/SIGTERM before the checks"});
    }

    // Destroy always, unless asked to keep a failed cluster for debugging.
    bool keep = a.keep_on_failure && !report.passed();
    if (keep) {
        ctx.progress.note("keeping cluster " + spec.name +
                          " for debugging; remove it later with: ddl destroy " + spec.name);
    } else {
        auto t0 = Clock::now();
        int drc = run_destroy(ctx, *(*oc)->driver);
        report.results.push_back(
            {"destroy", "destroy", drc == exit_code::k_ok ? CheckStatus::passed : CheckStatus::failed,
             since(t0), drc == exit_code::k_ok ? "" : "destroy failed; state kept for `ddl destroy`"});
        if (drc == exit_code::k_ok) logs = "(removed with the cluster; this report holds the results)";
    }
    if (!a.history.empty()) {
        if (auto s = append_history(a.history, report, utc_now_iso()); !s) inv.say(s.error().message);
    }
    report_results(inv, a, report, in->smtp, logs);
    return report.passed() ? exit_code::k_ok : exit_code::k_failure;
}

} // namespace

CommandBody smoke_test_command() {
    auto a = std::make_shared<SmokeArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .action = [a](Invocation& inv) { return smoke_test(inv, *a); }};
}

} // namespace ddl::cli
