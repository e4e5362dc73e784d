// `ddl deploy`: validate, render, provision, configure, probe, write the hostfile; resumable.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Confirm.hpp"
#include "cli/DataSource.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "cli/PrintDiagnostics.hpp"
#include "core/Diagnostics.hpp"
#include "provision/ConfigChanges.hpp"
#include "provision/Pipeline.hpp"
#include "targets/Registry.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <optional>

namespace ddl::cli {
namespace {

struct DeployArgs {
    std::string file;
    std::string only;
    bool yes = false;
    int ssh_timeout_s = 90;
    std::string manifest; // virtualwall: the manifest RSpec saved by the jFed GUI
    bool skip_preflight = false;
    std::string terraform_bin; // Terraform targets: overrides the section's `terraform`
    bool force_configure = false;
    std::string replace; // a node destroyed and made anew, alone
};

void add_options(CLI::App& sub, DeployArgs& a) {
    sub.add_option("file", a.file, "cluster.yaml")->required();
    sub.add_option("--only", a.only, "Run just this phase")->check(CLI::IsMember(phase_names()));
    sub.add_flag("-y,--yes", a.yes,
                 "Approve a re-deploy that destroys or replaces existing resources without asking (needed "
                 "where there is no terminal)");
    sub.add_flag("--force-configure", a.force_configure,
                 "Run Ansible even when no node's configure inputs changed since the last configure "
                 "(to undo changes made on the nodes behind ddl's back)");
    sub.add_option(
        "--replace", a.replace,
        "Destroy this node alone and make it anew (configured, probed, in the hostfiles); the other "
        "nodes are kept as they are. Refused where the target cannot");
    sub.add_option("--ssh-timeout", a.ssh_timeout_s, "Seconds to wait for SSH on every node")
        ->check(k_seconds)
        ->capture_default_str();
    sub.add_option("--manifest", a.manifest,
                   "virtualwall without the jFed CLI: the manifest RSpec jFed's GUI saved for the slice");
    add_terraform_options(sub, a.terraform_bin, TerraformUse::deploy, &a.skip_preflight);
}

// The question a target asks before it destroys or replaces what exists (the plan's lines shown first).
Status approve_on_terminal(Context& ctx, const std::string& what, const std::vector<std::string>& changes) {
    std::string list;
    for (const auto& c : changes)
        list += "  " + c + "\n";
    switch (ask_on_terminal(what + " would change what exists:\n" + list + "Type yes to go on: ", "yes")) {
    case Approval::approved:
        return {};
    case Approval::declined:
        return Error{"not approved: nothing was changed"};
    case Approval::no_terminal:
        break;
    }
    ctx.approval_needs_yes = true;
    return Error{what + " would change what exists:\n" + list +
                 "there is no terminal to approve on: run again with -y (--yes) to approve"};
}

// Settings that configure would change on nodes that exist (ConfigChanges.hpp): asked like any change to
// what exists, before any phase runs.
Status approve_config_changes(OpenCluster& oc, const Spec& spec) {
    if (!oc.before || oc.before->nodes.empty()) return {};
    auto deployed =
        load_spec_string(oc.before->spec_text, spec.name + " (stored spec)", SpecOrigin::stored).spec;
    if (!deployed) return {};
    const auto changes = config_changes(*deployed, spec);
    return oc.ctx->approve_destructive("the configuration of cluster " + spec.name,
                                       config_change_lines(changes));
}

// --replace NODE: the target destroys the node (refused where it cannot), and the phases from provision
// run again, which make it anew; an exit code when it stops the deploy.
std::optional<int> replace_node(const Invocation& inv, Context& ctx, TargetDriver& driver,
                                const DeployArgs& a) {
    if (!a.only.empty())
        return inv.fail("--replace runs every phase from provision: leave out --only",
                        exit_code::k_bad_input);
    if (auto s = remove_node_for_replace(ctx, driver, a.replace); !s) {
        const std::string& m = s.error().message;
        const bool bad_input =
            ctx.approval_needs_yes || starts_with(m, "target ") || starts_with(m, "no node");
        return inv.fail(m, bad_input ? exit_code::k_bad_input : exit_code::k_failure);
    }
    return std::nullopt;
}

int deploy(const Invocation& inv, const DeployArgs& a) {
    auto loaded = load_spec_file(a.file);
    if (!loaded.spec) {
        print_diagnostics(inv.g.json, loaded.diagnostics);
        return exit_code::k_bad_input;
    }
    const Spec& spec = *loaded.spec;
    if (!a.manifest.empty() && !takes_manifest(spec))
        return inv.fail("--manifest is for target virtualwall (this spec's target is " + spec.target + ")",
                        exit_code::k_bad_input);
    DeployOptions opts;
    opts.yes = a.yes;
    opts.ssh_deadline = std::chrono::seconds(a.ssh_timeout_s);
    opts.manifest_path = a.manifest;
    opts.skip_preflight = a.skip_preflight;
    opts.terraform_bin = a.terraform_bin;
    opts.force_configure = a.force_configure;
    int rc = 0;
    auto oc = open_for_deploy(inv.g.state_dir, spec, a.file, opts, "ddl deploy " + a.file, rc);
    if (!oc) return inv.fail(oc.error().message, rc);
    auto& ctx = *(*oc)->ctx;
    bool refused = false;
    ctx.approve = [&ctx, &refused](const std::string& what, const std::vector<std::string>& changes) {
        Status s = approve_on_terminal(ctx, what, changes);
        refused = refused || !s;
        return s;
    };
    if (auto settings = approve_config_changes(**oc, spec); !settings) {
        ctx.progress.note(settings.error().message);
        if (auto s = (*oc)->store.save(*(*oc)->before); !s)
            inv.say("cannot restore the cluster's state: " + s.error().message);
        return ctx.approval_needs_yes ? exit_code::k_bad_input : exit_code::k_failure;
    }
    ctx.progress.note("deploying cluster " + spec.name + " (target " + spec.target + ", " +
                      std::to_string(spec.node_count()) + " node(s))");
    if (!a.replace.empty()) {
        if (auto rc_replace = replace_node(inv, ctx, *(*oc)->driver, a)) return *rc_replace;
    }
    rc = run_deploy(ctx, *(*oc)->driver, DeployRequest{a.only});
    // A new cluster refused before anything was made (a clash, a missing approval): no record is left.
    if (rc == exit_code::k_bad_input && !(*oc)->before && !ctx.state.phase_done("provision") &&
        ctx.state.target_data.empty()) {
        if (auto s = (*oc)->store.remove(spec.name); !s)
            inv.say("cannot remove the new cluster's record: " + s.error().message);
        return rc;
    }
    // Nothing was changed: the cluster's record goes back to what it was, so `run` and `hostfile` still
    // work on nodes that are all still up.
    if (refused && (*oc)->before) {
        if (auto s = (*oc)->store.save(*(*oc)->before); !s)
            inv.say("cannot restore the cluster's state: " + s.error().message);
    }
    // A spec without a workdir has no setup: a failure recorded earlier is over.
    if (rc == exit_code::k_ok && spec.work.workdir.empty() && !ctx.state.setup_failed.empty()) {
        ctx.state.setup_failed.clear();
        if (auto s = ctx.save(); !s) inv.say("cannot record the setup's outcome: " + s.error().message);
    }
    // The researcher's code and its setup come last: they need the configured nodes (rsync, the runtime).
    if (rc == exit_code::k_ok && !spec.work.workdir.empty() && a.only.empty()) {
        ctx.spec.work = spec.work; // with the workdir found from the spec file's folder
        rc = deliver_workdir(inv, ctx, true, nullptr);
        // The nodes were made: a setup that failed on them is a failure (1), not bad input.
        if (rc != exit_code::k_ok && !ctx.state.setup_failed.empty()) rc = exit_code::k_failure;
    }
    if (rc == exit_code::k_ok) {
        if (auto s = record_dataset_sources(ctx, spec); !s)
            inv.say("cannot record the datasets' folders: " + s.error().message);
    }
    if (rc == exit_code::k_ok)
        ctx.progress.note("cluster " + spec.name + " is ready: `ddl status " + spec.name +
                          "`, `ddl hostfile --cluster " + spec.name + "`, `ddl destroy " + spec.name + "`");
    return rc;
}

} // namespace

CommandBody deploy_command() {
    auto a = std::make_shared<DeployArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .action = [a](Invocation& inv) { return deploy(inv, *a); }};
}

} // namespace ddl::cli
