#include "cli/Invoke.hpp"

#include "cli/Signals.hpp"
#include "core/Diagnostics.hpp"

#include <iostream>
#include <set>
#include <string>

namespace ddl::cli {
namespace {

// The existing cluster the command named, into inv.cluster; the exit code when it cannot be opened.
std::optional<int> set_up(const CommandEntry& entry, CommandBody& body, Invocation& inv) {
    const bool mutate = entry.needs == Needs::locked_cluster;
    int rc = exit_code::k_failure;
    auto oc = open_cluster(inv.g.state_dir, body.cluster(), mutate, mutate ? "ddl " + inv.name : "", &rc);
    if (!oc) return inv.fail(oc.error().message, rc);
    if (mutate) {
        auto driver = make_target_driver((*oc)->ctx->spec.target);
        if (!driver) return inv.fail(driver.error().message, exit_code::k_failure);
        (*oc)->driver = std::move(*driver);
    }
    // A stopped cluster's machines answer nothing: only what reads the state, or changes the power or ends
    // the cluster, goes on.
    static const std::set<std::string> k_while_stopped{"status", "hostfile", "destroy", "stop", "start"};
    if ((*oc)->state.stopped() && !k_while_stopped.count(entry.name))
        return inv.fail("cluster " + (*oc)->state.cluster + " is stopped (since " + (*oc)->state.stopped_at +
                            ")\nhint: ddl start " + (*oc)->state.cluster,
                        exit_code::k_bad_input);
    if (entry.needs == Needs::probed_cluster && !(*oc)->state.phase_done("probe"))
        return inv.fail(
            "cluster " + (*oc)->state.cluster +
                " is not deployed yet (its nodes have not been probed)\nhint: run `ddl deploy` first",
            exit_code::k_bad_input);
    inv.cluster = std::move(*oc);
    return std::nullopt;
}

} // namespace

int invoke_from(const Invocation& from, const std::string& command, CommandBody body) {
    Invocation inv{command, from.g, from.app, {}, nullptr};
    return invoke(command_named(command), body, inv);
}

int invoke(const CommandEntry& entry, CommandBody& body, Invocation& inv) {
    // A mutating command stops at the next safe point on SIGINT/SIGTERM, from its first step on.
    if (entry.needs == Needs::locked_cluster) install_signal_handlers();
    if (body.prepare) {
        if (auto rc = body.prepare(inv)) return *rc;
    }
    if (entry.needs != Needs::nothing) {
        if (auto rc = set_up(entry, body, inv)) return *rc;
    }
    return body.action(inv);
}

std::optional<int> take_command_words(const Invocation& inv, std::vector<std::string>& words, bool required) {
    words.insert(words.end(), inv.after_dashdash.begin(), inv.after_dashdash.end());
    if (!required || !words.empty()) return std::nullopt;
    std::cerr << "ddl: give the command after --, e.g. ddl " << inv.name << " -- hostname\n";
    return exit_code::k_bad_input;
}

} // namespace ddl::cli
