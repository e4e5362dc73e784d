// `ddl destroy`: everything ddl created for a cluster, under the cluster's lock; also run by `ddl gc`.
#include "cli/ClusterRef.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Confirm.hpp"
#include "cli/Invoke.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Pipeline.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct DestroyArgs {
    std::string ref; // what the user named; the cluster's name once prepare() has resolved it
    bool yes = false;
    std::string terraform_bin;
};

void add_options(CLI::App& sub, DestroyArgs& a) {
    add_cluster_ref(sub, a.ref, ClusterRef::positional_or_only);
    sub.add_flag("-y,--yes", a.yes,
                 "Destroy without asking (needed where there is no terminal to ask on: scripts, CI)");
    add_terraform_options(sub, a.terraform_bin, TerraformUse::destroy);
}

// Before the cluster is opened: a state folder without state.json (left by an interrupted command) is
// removed here, and a name that is no cluster is most likely a typo.
std::optional<int> prepare(const Invocation& inv, DestroyArgs& a) {
    StateStore store(inv.g.state_dir);
    auto name = resolve_cluster(store, a.ref);
    if (!name) return inv.fail(name.error().message, exit_code::k_bad_input);
    if (store.leftover(*name)) {
        auto lock = ClusterLock::acquire(store.cluster_dir(*name), "ddl " + inv.name);
        if (!lock) return inv.fail("cluster " + *name + ": " + lock.error().message, exit_code::k_failure);
        if (store.leftover(*name)) {
            if (auto s = store.remove(*name); !s) return inv.fail(s.error().message, exit_code::k_failure);
            std::cout << "cluster " << *name << ": removed a state folder without state.json (left by an "
                      << "interrupted command; nothing had been created)\n";
            return exit_code::k_ok;
        }
    }
    if (!store.exists(*name)) {
        // Most likely a typo: say so and what exists, rather than succeed quietly (issue #19).
        auto all = store.clusters();
        std::cerr << "ddl " << inv.name << ": no cluster named " << *name << " in " << store.root();
        if (auto near = closest_match(*name, all)) std::cerr << "; did you mean " << *near << "?";
        std::cerr << (all.empty() ? "\n  (there are no clusters there)\n"
                                  : "\n  clusters there: " + join(all, ", ") + " (`ddl list`)\n");
        return exit_code::k_bad_input;
    }
    a.ref = *name;
    return std::nullopt;
}

// What will go, then the user types the cluster's name; without a terminal only -y destroys. nullopt:
// go ahead; else the exit code.
std::optional<int> confirm(const Invocation& inv, const DestroyArgs& a) {
    if (a.yes) return std::nullopt;
    const auto& st = inv.cluster->ctx->state;
    std::vector<std::string> nodes;
    for (const auto& n : st.nodes)
        nodes.push_back(n.name + (n.address.empty() ? "" : " (" + n.address + ")"));
    const std::string what = "cluster " + a.ref + " on target " + st.target + ": " +
                             (nodes.empty() ? "no nodes recorded" : join(nodes, ", ")) +
                             ", and everything else ddl created for it";
    return confirm_destroy("ddl destroy", what,
                           "Type the cluster's name (" + a.ref + ") to destroy it: ", a.ref,
                           "add -y (--yes) to destroy without asking");
}

int destroy(const Invocation& inv, const DestroyArgs& a) {
    if (auto rc = confirm(inv, a)) return *rc;
    auto& ctx = *inv.cluster->ctx;
    ctx.options.terraform_bin = a.terraform_bin;
    int rc = run_destroy(ctx, *inv.cluster->driver);
    if (rc == exit_code::k_ok) std::cout << "cluster " << a.ref << " destroyed\n";
    return rc;
}

CommandBody destroy_body(const std::shared_ptr<DestroyArgs>& a) {
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .prepare = [a](Invocation& inv) { return prepare(inv, *a); },
            .cluster = [a] { return a->ref; },
            .action = [a](Invocation& inv) { return destroy(inv, *a); }};
}

} // namespace

CommandBody destroy_command() {
    return destroy_body(std::make_shared<DestroyArgs>());
}

int destroy_cluster(const Invocation& from, const std::string& name) {
    auto a = std::make_shared<DestroyArgs>();
    a->ref = name;
    a->yes = true;
    return invoke_from(from, "destroy", destroy_body(a));
}

} // namespace ddl::cli
