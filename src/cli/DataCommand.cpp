// `ddl data stage` and `ddl data status`: the spec's datasets (docs/spec.md, "datasets") copied where jobs
// read them, and where each copy stands.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/DataStage.hpp"
#include "cli/Datasets.hpp"
#include "cli/Invoke.hpp"
#include "core/Diagnostics.hpp"
#include "util/Format.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace ddl::cli {
namespace {

struct DataArgs {
    std::string cluster;
    std::string cluster_option; // --cluster C: then the one positional word is the dataset's name
    std::string name;
    bool verify = false;

    // The cluster named: --cluster, else the first word.
    std::string cluster_ref() {
        if (!cluster_option.empty() && name.empty() && !cluster.empty()) std::swap(name, cluster);
        return cluster_option.empty() ? cluster : cluster_option;
    }
};

// The datasets the command works on: all, or the one named; an exit code when there is none.
std::optional<int> pick(const Invocation& inv, const Spec& spec, const std::string& name,
                        std::vector<const DatasetSpec*>& out) {
    if (spec.datasets.empty())
        return inv.fail(
            "cluster " + spec.name +
                " has no datasets; add them under \"datasets:\" in its spec and run `ddl deploy SPEC`",
            exit_code::k_bad_input);
    for (const auto& d : spec.datasets)
        if (name.empty() || d.name == name) out.push_back(&d);
    if (out.empty()) {
        std::vector<std::string> names;
        for (const auto& d : spec.datasets)
            names.push_back(d.name);
        return inv.fail("cluster " + spec.name + " has no dataset \"" + name + "\" (it has " +
                            join(names, ", ") + ")",
                        exit_code::k_bad_input);
    }
    return std::nullopt;
}

void add_common(CLI::App& sub, DataArgs& a) {
    sub.add_option("cluster", a.cluster, "Cluster name or spec file");
    sub.add_option("--cluster", a.cluster_option, "Cluster name or spec file");
    sub.add_option("name", a.name, "One dataset (default: every dataset of the spec)");
}

nlohmann::json to_json(const DatasetStage& s) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : s.nodes)
        nodes.push_back({{"node", n.node},
                         {"sent_files", n.sent_files},
                         {"sent_bytes", n.sent_bytes},
                         {"deleted", n.deleted},
                         {"hashed", n.hashed},
                         {"resent", n.resent},
                         {"seconds", n.seconds}});
    return {{"name", s.name},
            {"path", s.path},
            {"files", s.files},
            {"bytes", s.bytes},
            {"source_hashed", s.source_hashed},
            {"seconds", s.seconds},
            {"nodes", nodes}};
}

int stage(Invocation& inv, const DataArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    std::vector<const DatasetSpec*> sets;
    if (auto rc = pick(inv, ctx.spec, a.name, sets)) return *rc;
    if (auto s = check_nodes_over_ssh(ctx.spec, "staging datasets"); !s)
        return inv.fail(s.error().message, exit_code::k_bad_input);
    nlohmann::json all = nlohmann::json::array();
    for (const auto* d : sets) {
        auto r = stage_dataset(ctx, *d, a.verify);
        if (!r) return inv.fail(r.error().message, exit_code::k_failure);
        int sent = 0;
        for (const auto& n : r->nodes)
            sent += n.sent_files + n.resent;
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f", r->seconds);
        ctx.progress.note("data " + d->name + ": staged at " + r->path + " on " +
                          std::to_string(r->nodes.size()) + " node(s), " + std::to_string(sent) +
                          " file(s) sent in " + secs + " s");
        all.push_back(to_json(*r));
    }
    if (inv.g.json) std::cout << nlohmann::json{{"datasets", all}}.dump() << "\n";
    return exit_code::k_ok;
}

int status(Invocation& inv, const DataArgs& a) {
    auto& ctx = *inv.cluster->ctx;
    std::vector<const DatasetSpec*> sets;
    if (auto rc = pick(inv, ctx.spec, a.name, sets)) return *rc;
    nlohmann::json all = nlohmann::json::array();
    int rc = exit_code::k_ok;
    for (const auto* d : sets) {
        auto r = dataset_state(ctx, *d);
        if (!r) return inv.fail(r.error().message, exit_code::k_failure);
        nlohmann::json nodes = nlohmann::json::array();
        for (const auto& n : *r) {
            if (!inv.g.json)
                std::cout << strprintf("%-16s %-6s %-40s %-12s %-10s %s\n", d->name.c_str(),
                                       d->to_shared ? "shared" : "local", dataset_path(ctx.spec, *d).c_str(),
                                       n.node.c_str(), n.state.c_str(), n.staged_at.c_str());
            nodes.push_back({{"node", n.node}, {"state", n.state}, {"staged_at", n.staged_at}});
            if (n.state != "current" && n.state != "staged") rc = exit_code::k_failure;
        }
        all.push_back({{"name", d->name},
                       {"to", d->to_shared ? "shared" : "local"},
                       {"path", dataset_path(ctx.spec, *d)},
                       {"env", dataset_env_name(*d)},
                       {"nodes", nodes}});
    }
    if (inv.g.json) std::cout << nlohmann::json{{"datasets", all}}.dump() << "\n";
    return rc;
}

} // namespace

CommandBody data_stage_command() {
    auto a = std::make_shared<DataArgs>();
    return {.add_options =
                [a](CLI::App& sub) {
                    add_common(sub, *a);
                    sub.add_flag(
                        "--verify", a->verify,
                        "Hash every file of the source and of every copy again (not only changed ones)");
                },
            .cluster = [a] { return a->cluster_ref(); },
            .action = [a](Invocation& inv) { return stage(inv, *a); }};
}

CommandBody data_status_command() {
    auto a = std::make_shared<DataArgs>();
    return {.add_options = [a](CLI::App& sub) { add_common(sub, *a); },
            .cluster = [a] { return a->cluster_ref(); },
            .action = [a](Invocation& inv) { return status(inv, *a); }};
}

} // namespace ddl::cli
