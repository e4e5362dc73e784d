// `ddl list`: every cluster in the state folder, with its target, nodes, how far its deploy got, its age
// and whether a command holds its lock (issue #19), and whether it was idle when the master's idle clock was
// last read (`ddl status`, `ddl gc --expired`).
#include "cli/Capabilities.hpp"
#include "cli/ClusterRef.hpp"
#include "cli/CommandTable.hpp"
#include "cli/IdleClock.hpp"
#include "cli/LeaseText.hpp"
#include "cli/Lifetime.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Pipeline.hpp"
#include "state/StateStore.hpp"
#include "util/Format.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace ddl::cli {
namespace {

std::string short_age(long long s) {
    if (s < 0) s = 0;
    if (s < 120) return std::to_string(s) + "s";
    if (s < 7200) return std::to_string(s / 60) + "m";
    if (s < 172800) return std::to_string(s / 3600) + "h";
    return std::to_string(s / 86400) + "d";
}

struct Row {
    std::string name, target, state;
    int nodes = 0;
    std::optional<long long> age_s;
    std::optional<std::string> lock;
    std::optional<std::chrono::system_clock::time_point> lease_end; // when the testbed ends the nodes
    std::optional<std::chrono::system_clock::time_point> life_end;  // when the spec's lifetime ends
    nlohmann::json usage;                                           // usage_json; null: unreadable
    std::optional<IdleRecord> idle;                                 // the idle clock's record as last read
    std::string folder;                                             // the state folder that holds it
};

// The IDLE column: how long idle ("14m"), or "busy"; from a record too old to tell about now, what it said
// then with a "?" ("14m?", "busy?").
std::string idle_cell(const std::optional<IdleRecord>& idle, std::chrono::system_clock::time_point now) {
    if (!idle || !idle->checked_at) return "-";
    if (idle->ended_at) return "ended";
    if (auto s = idle_for_s(*idle, now)) return short_age(*s);
    const auto then = *idle->checked_at;
    if (!idle->idle_since) return now - then > std::chrono::seconds(3LL * idle->period_s) ? "busy?" : "busy";
    return short_age(std::chrono::duration_cast<std::chrono::seconds>(then - *idle->idle_since).count()) +
           "?";
}

Row row_for(const StateStore& store, const std::string& name) {
    Row r;
    r.name = name;
    r.lock = store.lock_holder(name);
    auto st = store.load(name);
    if (!st) {
        r.state = "unreadable: " + st.error().message;
        return r;
    }
    r.target = st->target;
    r.nodes = static_cast<int>(st->nodes.size());
    r.lease_end = lease_end(*st);
    const Spec spec = stored_spec(*st);
    r.life_end = lifetime_end(*st, spec.life);
    r.usage = usage_json(usage_so_far(*st, spec, std::chrono::system_clock::now()), spec.life.cost);
    r.idle = last_idle_record(store.cluster_dir(name));
    // Age from the cluster's creation (its first deploy; a re-deploy or resize finishes phases again).
    if (auto created = created_time(*st))
        r.age_s =
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() - *created)
                .count();
    if (st->destroying) {
        r.state = "destroy unfinished";
    } else if (r.idle && r.idle->ended_at) {
        r.state = "ended by autostop"; // the idle clock ended the allocation (`ddl gc --expired` cleans up)
    } else if (st->stopped()) {
        r.state = "stopped";
    } else if (!st->setup_failed.empty()) {
        r.state = "setup failed"; // `ddl status` says where
    } else {
        r.state = "ready";
        for (const auto& p : phase_names()) {
            if (!st->phase_done(p)) {
                r.state = "stopped before " + p;
                break;
            }
        }
    }
    return r;
}

std::string canonical(const std::string& folder) {
    std::error_code ec;
    auto c = std::filesystem::weakly_canonical(folder, ec);
    return ec ? folder : c.string();
}

// --all: the clusters of the other state folders this machine knows (every folder deployed from, and the
// local target's registry).
void add_recorded(const std::string& here, std::vector<Row>& rows) {
    for (const auto& [name, folder] : recorded_clusters()) {
        if (canonical(folder) == here) continue;
        StateStore other(folder);
        Row r;
        if (other.exists(name)) {
            r = row_for(other, name);
        } else {
            r.name = name;
            r.target = "local";
            r.state = "its state folder is gone (`ddl gc --target local` removes it)";
        }
        r.folder = folder;
        rows.push_back(std::move(r));
    }
}

int list(const Invocation& inv, bool all) {
    StateStore store(inv.g.state_dir);
    std::error_code ec;
    if (std::filesystem::exists(store.root(), ec) && !std::filesystem::is_directory(store.root(), ec))
        return inv.fail("--state-dir " + store.root() + " is not a folder", exit_code::k_bad_input);
    std::vector<Row> rows;
    const std::string here = canonical(store.root());
    for (const auto& name : store.clusters()) {
        rows.push_back(row_for(store, name));
        rows.back().folder = here;
    }
    for (const auto& name : store.leftovers()) {
        Row r;
        r.name = name;
        r.state = "leftover folder (no state.json; `ddl destroy " + name + "` removes it)";
        r.lock = store.lock_holder(name);
        r.folder = here;
        rows.push_back(r);
    }
    if (all) add_recorded(here, rows);
    const auto now = std::chrono::system_clock::now();
    if (inv.g.json) {
        auto out = nlohmann::json::array();
        for (const auto& r : rows) {
            out.push_back(
                {{"name", r.name},
                 {"target", r.target},
                 {"nodes", r.nodes},
                 {"state", r.state},
                 {"age_s", r.age_s ? nlohmann::json(*r.age_s) : nlohmann::json(nullptr)},
                 {"lock", r.lock ? nlohmann::json(*r.lock) : nlohmann::json(nullptr)},
                 {"lease_end", r.lease_end ? nlohmann::json(iso_utc(*r.lease_end)) : nlohmann::json(nullptr)},
                 {"lifetime_end",
                  r.life_end ? nlohmann::json(iso_utc(*r.life_end)) : nlohmann::json(nullptr)},
                 {"usage", r.usage},
                 {"state_dir", r.folder},
                 {"idle", r.idle ? idle_json_at(*r.idle, now) : nlohmann::json(nullptr)}});
        }
        std::cout << out.dump(2) << "\n";
        return exit_code::k_ok;
    }
    if (rows.empty()) {
        std::cout << "no clusters in " << store.root() << (all ? " or recorded on this machine" : "") << "\n";
        return exit_code::k_ok;
    }
    // The lease column only where a cluster has an end: its target ends the nodes by itself (GPULab, Virtual
    // Wall) or its spec sets a lifetime.
    bool leases = false, idles = false;
    for (auto& r : rows) {
        // The column shows whichever ends first: the testbed's lease or the spec's lifetime.
        if (r.life_end && (!r.lease_end || *r.life_end < *r.lease_end)) r.lease_end = r.life_end;
        leases = leases || r.lease_end.has_value();
        idles = idles || r.idle.has_value();
    }
    // The idle column only where the idle clock of a cluster was read (`ddl status`, `ddl gc --expired`).
    std::cout << strprintf("%-24s %-12s %5s %6s  %-28s %-s%s%s\n", "NAME", "TARGET", "NODES", "AGE", "STATE",
                           leases || idles ? "LOCK                 " : "LOCK", leases ? "LEASE LEFT" : "",
                           idles ? (leases ? " IDLE" : "IDLE") : "");
    for (const auto& r : rows) {
        std::string lock = r.lock ? "held by " + *r.lock : "-";
        std::string lease;
        if (leases || idles) {
            lock.resize(std::max<std::size_t>(lock.size(), 20), ' ');
            lock += " ";
        }
        if (leases) lease = !r.lease_end ? "-" : *r.lease_end > now ? time_left(*r.lease_end, now) : "ended";
        if (leases && idles) lease.resize(std::max<std::size_t>(lease.size(), 10), ' ');
        if (idles) lease += (leases ? " " : "") + idle_cell(r.idle, now);
        std::cout << strprintf("%-24s %-12s %5d %6s  %-28s %s%s\n", r.name.c_str(),
                               r.target.empty() ? "-" : r.target.c_str(), r.nodes,
                               r.age_s ? short_age(*r.age_s).c_str() : "-", r.state.c_str(), lock.c_str(),
                               lease.c_str());
        if (all && r.folder != here)
            std::cout << "    in " << r.folder << " (ddl --state-dir " << r.folder << " …)\n";
    }
    return exit_code::k_ok;
}

} // namespace

CommandBody list_command() {
    auto all = std::make_shared<bool>(false);
    return {.add_options =
                [all](CLI::App& sub) {
                    sub.add_flag(
                        "--all", *all,
                        "Also the clusters of every other state folder deployed from on this machine");
                },
            .action = [all](Invocation& inv) { return list(inv, *all); }};
}

} // namespace ddl::cli
