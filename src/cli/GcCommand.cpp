// `ddl gc`: destroys leaked clusters (by name prefix and age), as scheduled pipelines need: those in the
// state folder, and those the targets themselves still have whose state folder is gone (a CI job's
// container thrown away): this machine's local clusters, the user's Slurm jobs.
#include "cli/CommandTable.hpp"
#include "cli/Confirm.hpp"
#include "cli/GcExpired.hpp"
#include "cli/IdleClock.hpp"
#include "cli/LeaseText.hpp"
#include "cli/Lifetime.hpp"
#include "cli/OpenCluster.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace ddl::cli {
namespace {

struct GcArgs {
    std::string older_than = "24h";
    std::string prefix = "ci-";
    bool dry_run = false;
    bool yes = false;
    bool expired = false; // the state folder's clusters past their lifetime, instead of by age and prefix
    CLI::Option* prefix_option = nullptr; // whether --prefix was given (--expired: no prefix unless it is)
    std::vector<std::string> targets{"local"}; // whose own side is asked besides the state folder
    std::vector<std::string> specs;            // specs whose target is asked with their endpoint/credentials
};

void add_options(CLI::App& sub, GcArgs& a) {
    sub.add_option("--older-than", a.older_than, "Untouched for at least this long: 90s, 30m, 24h, 7d")
        ->capture_default_str();
    a.prefix_option = sub.add_option("--prefix", a.prefix, "Only clusters whose name starts with this")
                          ->capture_default_str();
    sub.add_flag(
        "--expired", a.expired,
        "Instead: the state folder's clusters past the lifetime their spec sets, or idle (by their "
        "master's idle clock) for their autostop.idle_minutes, and with --spec the target's clusters "
        "whose recorded lifetime has ended and whose state folder is gone (whatever their name, "
        "unless --prefix is given; --older-than and --target do not apply)");
    sub.add_flag("--dry-run", a.dry_run, "Only list what would be destroyed");
    sub.add_flag("-y,--yes", a.yes, "Destroy without asking (needed where there is no terminal: CI, cron)");
    sub.add_option("--target", a.targets,
                   "Also ask this target for clusters whose state folder is gone (repeatable): local (this "
                   "machine), slurm (your jobs in squeue), all, or none")
        ->capture_default_str();
    sub.add_option(
        "--spec", a.specs,
        "Also ask this spec's target, with the spec's endpoint and credentials, for clusters whose "
        "state folder is gone (repeatable; gpulab: the user's queued and running jobs; openstack: servers "
        "with ddl's metadata; aws: the region's tagged instances; ssh: each host's /etc/ddl/node.env)");
}

struct Candidate {
    std::string name;
    long long idle_s = 0;         // from the state folder: since last touched; from a target: since created
    std::string source = "state"; // "state" or the target that still has it
    std::string detail;
    bool stop = false;                    // gc --expired with autostop.action: stop: stopped, not destroyed
    std::shared_ptr<TargetDriver> driver; // a target's own find
    FoundCluster found;
};

// Clusters with the prefix whose state was last written at least `age` seconds ago.
std::vector<Candidate> candidates(const StateStore& store, const std::string& prefix, long long age) {
    std::vector<Candidate> out;
    auto now = std::filesystem::file_time_type::clock::now();
    for (const auto& name : store.clusters()) {
        if (!starts_with(name, prefix)) continue;
        std::error_code ec;
        // The state file is rewritten by every command that changes the cluster: its age is the
        // time since the cluster was last touched.
        auto mtime = std::filesystem::last_write_time(store.cluster_dir(name) + "/state.json", ec);
        if (ec) continue;
        auto idle = std::chrono::duration_cast<std::chrono::seconds>(now - mtime).count();
        if (idle < age) continue;
        out.push_back({.name = name, .idle_s = idle});
    }
    return out;
}

// Whether cluster `name` (with autostop) has been idle for its idle_minutes, by its master's idle clock
// read now; the reason in `detail`. A clock that cannot be read is named in `problems`.
bool idle_past_autostop(const std::string& state_dir, const std::string& name, const AutostopSpec& autostop,
                        std::string& detail, std::vector<std::string>& problems) {
    auto open = open_cluster(state_dir, name, false, "ddl gc --expired");
    if (!open) {
        problems.push_back(name + ": " + open.error().message);
        return false;
    }
    const auto now = std::chrono::system_clock::now();
    // Ended by the clock itself (Slurm, GPULab): only the local state is left to clean up.
    auto ended = autostop_ended(*(*open)->ctx, (*open)->store.cluster_dir(name), now);
    if (ended && *ended) {
        detail = "ended by autostop: " + (*ended)->ended_why;
        return true;
    }
    auto rec = read_idle_clock(*(*open)->ctx, (*open)->store.cluster_dir(name), now);
    if (!rec) {
        problems.push_back(name + ": its idle clock cannot be read: " + rec.error().message);
        return false;
    }
    if (!*rec) return false;
    auto idle = idle_for_s(**rec, now);
    if (!idle || *idle < autostop.idle_minutes * 60LL) return false;
    detail = "idle since " + iso_utc(*(*rec)->idle_since) +
             ", autostop.idle_minutes: " + std::to_string(autostop.idle_minutes);
    return true;
}

// Clusters of the state folder (with the prefix) whose spec's lifetime has ended, or idle past their
// autostop.idle_minutes.
std::vector<Candidate> expired_clusters(const StateStore& store, const std::string& prefix,
                                        std::vector<std::string>& problems) {
    std::vector<Candidate> out;
    const auto now = std::chrono::system_clock::now();
    for (const auto& name : store.clusters()) {
        if (!starts_with(name, prefix)) continue;
        auto st = store.load(name);
        if (!st) continue;
        const auto life = stored_spec(*st).life;
        auto created = created_time(*st);
        const long long age =
            created ? std::chrono::duration_cast<std::chrono::seconds>(now - *created).count() : 0;
        std::string detail;
        const auto what = expiry_of(*st, life, now, [&] {
            return idle_past_autostop(store.root(), name, life.autostop, detail, problems);
        });
        if (what == Expiry::none) continue;
        if (detail.empty()) detail = "its lifetime ended " + iso_utc(*lifetime_end(*st, life));
        out.push_back({.name = name, .idle_s = age, .detail = detail, .stop = what == Expiry::stop});
    }
    return out;
}

// The targets `--target` names ("all": every one that can be asked without a spec; "none": no target).
Result<std::vector<std::string>> asked_targets(const std::vector<std::string>& given) {
    std::vector<std::string> out;
    for (const auto& t : given) {
        if (t == "none") continue;
        for (const auto& name : target_names()) {
            if (t != "all" && t != name) continue;
            auto d = make_target_driver(name);
            if (!d) return d.error();
            if (const auto* leaks = (*d)->leaked_clusters(); leaks && !leaks->needs_spec()) {
                if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
            } else if (t == name) {
                return Error{"--target " + t + ": ddl cannot ask " + t +
                             " for its clusters without a spec yet; its leaks are found through the state "
                             "folder (targets that can be asked: " +
                             asked_without_spec() + ")"};
            }
        }
        if (t != "all" && std::find(out.begin(), out.end(), t) == out.end())
            return Error{"--target " + t + ": no such target (" + join(target_names(), ", ") +
                         ", all, none)"};
    }
    return out;
}

// Of what target `t` still has: the clusters with the prefix, at least `age` old, whose state folder is
// gone, added to `out`; those whose state is in another state folder, or that record none, are named in
// `elsewhere`.
void keep_leaked(const StateStore& store, const std::string& t, const std::shared_ptr<TargetDriver>& driver,
                 std::vector<FoundCluster>& found, const std::string& prefix, long long age,
                 std::vector<std::string>& elsewhere, std::vector<Candidate>& out) {
    for (auto& f : found) {
        if (!starts_with(f.cluster, prefix) || !is_dns_label(f.cluster)) continue;
        // Made by a ddl that recorded no state folder on the target: whether it is still in use cannot be
        // told from here, so it is named and left alone.
        if (f.state_dir.empty()) {
            elsewhere.push_back(f.cluster + " (" + t +
                                ": it records no state folder, as a ddl older than the target's markers "
                                "deployed it; remove it with `ddl destroy` where its state is)");
            continue;
        }
        if (path_exists(f.state_dir + "/state.json")) {
            if (f.state_dir != store.cluster_dir(f.cluster))
                elsewhere.push_back(f.cluster + " (" + t + ": its state is in " + f.state_dir + ")");
            continue;
        }
        if (f.age_s < age) continue;
        out.push_back({.name = f.cluster,
                       .idle_s = f.age_s,
                       .source = t,
                       .detail = f.detail + "; its state folder " + f.state_dir + " is gone",
                       .driver = driver,
                       .found = f});
    }
}

// What the targets still have: clusters with the prefix, at least `age` old, whose state folder is gone.
// Those whose state is in another state folder are named in `elsewhere` (gc runs there).
std::vector<Candidate> found_on_targets(const StateStore& store, const std::vector<std::string>& targets,
                                        const std::string& prefix, long long age,
                                        std::vector<std::string>& elsewhere,
                                        std::vector<std::string>& problems) {
    std::vector<Candidate> out;
    SystemProcessRunner proc;
    for (const auto& t : targets) {
        auto d = make_target_driver(t);
        if (!d) {
            problems.push_back(d.error().message);
            continue;
        }
        std::shared_ptr<TargetDriver> driver = std::move(*d);
        // asked_targets kept only the targets found without a spec.
        auto found = driver->leaked_clusters()->find_clusters(nullptr, proc);
        if (!found) {
            problems.push_back("target " + t + ": " + found.error().message);
            continue;
        }
        keep_leaked(store, t, driver, *found, prefix, age, elsewhere, out);
    }
    return out;
}

// The same, asked with each spec's endpoint and credentials (`--spec FILE`).
Result<std::vector<Candidate>>
found_with_specs(const StateStore& store, const std::vector<std::string>& specs, const std::string& prefix,
                 long long age, std::vector<std::string>& elsewhere, std::vector<std::string>& problems) {
    std::vector<Candidate> out;
    SystemProcessRunner proc;
    for (const auto& file : specs) {
        auto st = spec_target(file);
        if (!st) return st.error();
        auto found = st->driver->leaked_clusters()->find_clusters(&st->spec, proc);
        if (!found) {
            problems.push_back("target " + st->spec.target + " (" + file + "): " + found.error().message);
            continue;
        }
        keep_leaked(store, st->spec.target, st->driver, *found, prefix, age, elsewhere, out);
    }
    return out;
}

// Asked once for all of them (typing "yes") on a terminal; without one only -y destroys (or stops). nullopt:
// go on.
std::optional<int> confirm(const GcArgs& a, const std::vector<Candidate>& found) {
    if (a.yes || a.dry_run || found.empty()) return std::nullopt;
    std::vector<std::string> names;
    names.reserve(found.size());
    for (const auto& c : found)
        names.push_back(c.name);
    return confirm_destroy("ddl gc", std::to_string(found.size()) + " cluster(s): " + join(names, ", "),
                           "Type yes to destroy them: ", "yes",
                           "add -y (--yes), or --dry-run to only list them");
}

// Destroys what was found (asking first where a terminal allows) and reports each.
int destroy_all(const Invocation& inv, const GcArgs& a, const std::vector<Candidate>& found) {
    if (auto rc = confirm(a, found)) return *rc;
    int failed = 0, removed = 0, stopped = 0;
    auto report = nlohmann::json::array();
    // With --output json, stdout carries one JSON document: what each destroy prints goes to stderr.
    std::streambuf* saved_out = inv.g.json ? std::cout.rdbuf(std::cerr.rdbuf()) : nullptr;
    ConsoleProgress progress;
    SystemProcessRunner proc;
    for (const auto& c : found) {
        const std::string verb = c.stop ? "stop" : "destroy";
        std::cout << (a.dry_run ? "would " + verb + " "
                      : c.stop  ? "stopping "
                                : "destroying ")
                  << c.name
                  << (!c.detail.empty() && c.source == "state" ? " (" + c.detail + ")"
                      : c.source == "state"
                          ? " (untouched for " + std::to_string(c.idle_s / 3600) + " h)"
                          : " (found on target " + c.source + ", created " + std::to_string(c.idle_s / 3600) +
                                " h ago: " + c.detail + ")")
                  << "\n";
        std::string outcome = "would " + verb;
        if (!a.dry_run) {
            bool ok = false;
            if (c.stop) {
                ok = stop_cluster(inv, c.name) == exit_code::k_ok;
            } else if (c.source == "state") {
                ok = destroy_cluster(inv, c.name) == exit_code::k_ok;
            } else {
                auto s = c.driver->leaked_clusters()->destroy_found(c.found, proc, progress);
                if (!s) inv.say(c.name + ": " + s.error().message);
                ok = s.ok();
            }
            ++(!ok ? failed : c.stop ? stopped : removed);
            outcome = !ok ? "failed" : c.stop ? "stopped" : "destroyed";
        }
        report.push_back({{"cluster", c.name},
                          {"idle_s", c.idle_s},
                          {"source", c.source},
                          {"outcome", outcome},
                          {"why", c.detail}});
    }
    std::cout << "gc: " << removed << " destroyed, " << failed << " failed"
              << (stopped ? ", " + std::to_string(stopped) + " stopped" : "") << "\n";
    if (saved_out) {
        std::cout.rdbuf(saved_out);
        std::cout << nlohmann::json{{"clusters", report},
                                    {"destroyed", removed},
                                    {"stopped", stopped},
                                    {"failed", failed}}
                         .dump(2)
                  << "\n";
    }
    return failed ? exit_code::k_partial : exit_code::k_ok;
}

// The clusters found expired on the targets (GcExpired), after those of the state folder.
void add_found(std::vector<Candidate>& found, std::vector<ExpiredFound> expired) {
    for (auto& e : expired) {
        Candidate c{.name = e.found.cluster,
                    .idle_s = e.found.age_s,
                    .source = e.target,
                    .detail = e.found.detail + "; " + e.why,
                    .driver = e.driver,
                    .found = std::move(e.found)};
        const bool known =
            std::any_of(found.begin(), found.end(), [&](const Candidate& s) { return s.name == c.name; });
        if (!known) found.push_back(std::move(c));
    }
}

int gc(const Invocation& inv, const GcArgs& a) {
    auto age = parse_duration_s(a.older_than);
    if (!age)
        return inv.fail("--older-than " + a.older_than + ": give a number with s, m, h or d, e.g. 24h",
                        exit_code::k_bad_input);
    auto targets = asked_targets(a.targets);
    if (!targets) return inv.fail(targets.error().message, exit_code::k_bad_input);
    StateStore store(inv.g.state_dir);
    if (a.expired) {
        std::vector<std::string> problems, notes;
        const std::string prefix = a.prefix_option->count() ? a.prefix : "";
        auto found = expired_clusters(store, prefix, problems);
        auto on_targets =
            expired_on_targets(store, a.specs, prefix, std::chrono::system_clock::now(), notes, problems);
        if (!on_targets) return inv.fail(on_targets.error().message, exit_code::k_bad_input);
        add_found(found, std::move(*on_targets));
        for (const auto& p : problems)
            inv.say("warning: " + p);
        for (const auto& n : notes)
            inv.say(n);
        return destroy_all(inv, a, found);
    }
    auto found = candidates(store, a.prefix, *age);
    std::vector<std::string> elsewhere, problems;
    auto with_specs = found_with_specs(store, a.specs, a.prefix, *age, elsewhere, problems);
    if (!with_specs) return inv.fail(with_specs.error().message, exit_code::k_bad_input);
    auto on_targets = found_on_targets(store, *targets, a.prefix, *age, elsewhere, problems);
    on_targets.insert(on_targets.end(), std::make_move_iterator(with_specs->begin()),
                      std::make_move_iterator(with_specs->end()));
    for (auto& c : on_targets) {
        const bool known =
            std::any_of(found.begin(), found.end(), [&](const Candidate& s) { return s.name == c.name; });
        if (!known) found.push_back(std::move(c));
    }
    for (const auto& p : problems)
        inv.say("warning: " + p);
    for (const auto& e : elsewhere)
        inv.say("not touched: " + e);
    return destroy_all(inv, a, found);
}

} // namespace

CommandBody gc_command() {
    auto a = std::make_shared<GcArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .action = [a](Invocation& inv) { return gc(inv, *a); }};
}

} // namespace ddl::cli
