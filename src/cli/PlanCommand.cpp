// `ddl plan`: what `ddl deploy FILE` would create, change, replace and delete (nodes, and cloud resources
// for Terraform targets), changing nothing (issue #19). Terraform users know it as `terraform plan`.
#include "cli/CommandTable.hpp"
#include "cli/LeaseText.hpp"
#include "cli/Lifetime.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "cli/PrintDiagnostics.hpp"
#include "core/Diagnostics.hpp"
#include "provision/ConfigChanges.hpp"
#include "remote/SshKeys.hpp"
#include "render/Expiry.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <ctime>
#include <filesystem>
#include <iostream>

namespace ddl::cli {
namespace {

struct PlanArgs {
    std::string file;
    std::string terraform_bin;
};

void add_options(CLI::App& sub, PlanArgs& a) {
    sub.add_option("file", a.file, "cluster.yaml")->required();
    add_terraform_options(sub, a.terraform_bin, TerraformUse::plan);
}

// The public key the plan renders with, creating nothing in the state folder: access.private_key's .pub,
// else the cluster's key, else (a new cluster) a throwaway key in the scratch folder; the plan shows the
// key pair as created either way.
Result<std::string> plan_public_key(const Context& ctx, const std::string& scratch) {
    const Spec& spec = ctx.spec;
    if (!spec.access.private_key.empty()) {
        auto text = read_file(spec.access.private_key + ".pub");
        if (!text)
            return Error{"access.private_key: no public key next to it (" + spec.access.private_key +
                         ".pub); write it with: ssh-keygen -y -f " + spec.access.private_key + " > " +
                         spec.access.private_key + ".pub"};
        return trim(*text);
    }
    if (auto text = read_file(ctx.key_path() + ".pub")) return trim(*text);
    auto key = ensure_keypair(scratch + "/id_ed25519", "ddl-" + spec.name + " (plan only)");
    if (!key) return key.error();
    return trim(*key);
}

int plan(const Invocation& inv, const PlanArgs& a) {
    auto loaded = load_spec_file(a.file);
    if (!loaded.spec) {
        print_diagnostics(inv.g.json, loaded.diagnostics);
        return exit_code::k_bad_input;
    }
    const Spec& spec = *loaded.spec;
    auto driver = make_target_driver(spec.target);
    if (!driver) return inv.fail(driver.error().message, exit_code::k_failure);

    StateStore store(inv.g.state_dir);
    ClusterState state;
    state.cluster = spec.name;
    state.target = spec.target;
    ClusterLock lock;
    std::optional<Spec> deployed;
    const bool exists = store.exists(spec.name);
    if (exists) {
        // Held while the plan reads the cluster's state, as `terraform plan` holds the state lock.
        auto l = ClusterLock::acquire(store.cluster_dir(spec.name), "ddl plan " + a.file);
        if (!l) return inv.fail("cluster " + spec.name + ": " + l.error().message, exit_code::k_failure);
        lock = std::move(*l);
        auto st = store.load(spec.name);
        if (!st) return inv.fail(st.error().message, exit_code::k_failure);
        state = std::move(*st);
        if (state.target != spec.target)
            return inv.fail("cluster " + spec.name + " exists on target " + state.target +
                                "\nhint: destroy it first (ddl destroy " + spec.name +
                                ") or pick another name",
                            exit_code::k_bad_input);
        deployed = load_spec_string(state.spec_text, spec.name + " (stored spec)", SpecOrigin::stored).spec;
    }
    SystemProcessRunner proc;
    LibsshExecutor remote;
    ConsoleProgress progress;
    DeployOptions options;
    options.terraform_bin = a.terraform_bin;
    Context ctx{spec, state, store, proc, remote, progress, options};

    TempDir scratch("ddl-plan");
    RenderInputs inputs;
    // As deploy renders it (the servers' ddl_state), so that the plan does not show it as a change.
    std::error_code ec;
    inputs.state_dir = std::filesystem::absolute(ctx.cluster_dir(), ec).lexically_normal().string();
    inputs.expires = expiry_stamp(spec, state.created_at, static_cast<long long>(std::time(nullptr)));
    if ((*driver)->renders_public_key()) {
        auto key = plan_public_key(ctx, scratch.path());
        if (!key) return inv.fail(key.error().message, exit_code::k_bad_input);
        inputs.public_key = *key;
    }
    auto files = render_spec(spec, inputs);
    if (!files) return inv.fail(files.error().message, exit_code::k_failure);

    DeployPlan out;
    out.cluster = spec.name;
    out.target = spec.target;
    out.exists = exists && !state.nodes.empty();
    if (state.destroying)
        out.notes.push_back("a destroy of this cluster did not finish: `ddl destroy " + spec.name + "`");
    PlanRequest req{
        .ctx = ctx, .deployed = deployed ? &*deployed : nullptr, .files = *files, .scratch = scratch.path()};
    if (auto s = (*driver)->plan(req, out); !s)
        return inv.fail(s.error().message, s.error().refused ? exit_code::k_bad_input : exit_code::k_failure);
    if (deployed && out.exists) {
        auto settings = config_changes(*deployed, spec);
        out.changes.insert(out.changes.end(), settings.begin(), settings.end());
        auto work = work_changes(deployed->work, spec.work);
        out.changes.insert(out.changes.end(), work.begin(), work.end());
    }
    if (auto hourly = hourly_text(spec); !hourly.empty()) out.notes.push_back("cost: " + hourly);
    if (spec.life.lifetime_s > 0)
        out.notes.push_back(
            "lifetime: " +
            time_left(std::chrono::system_clock::time_point{} + std::chrono::seconds(spec.life.lifetime_s),
                      std::chrono::system_clock::time_point{}) +
            " from its creation, then `ddl gc --expired` destroys it");
    if (inv.g.json)
        std::cout << out.to_json().dump(2) << "\n";
    else
        std::cout << out.to_text();
    return exit_code::k_ok;
}

} // namespace

CommandBody plan_command() {
    auto a = std::make_shared<PlanArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .action = [a](Invocation& inv) { return plan(inv, *a); }};
}

} // namespace ddl::cli
