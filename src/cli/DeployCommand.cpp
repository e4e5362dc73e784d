// `ddl deploy`: validate, render, provision, configure, probe, write the hostfile; resumable.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Confirm.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "cli/PrintDiagnostics.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Pipeline.hpp"
#include "targets/Registry.hpp"

#include <CLI/CLI.hpp>

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
    ctx.progress.note("deploying cluster " + spec.name + " (target " + spec.target + ", " +
                      std::to_string(spec.node_count()) + " node(s))");
    rc = run_deploy(ctx, *(*oc)->driver, DeployRequest{a.only});
    // Nothing was changed: the cluster's record goes back to what it was, so `run` and `hostfile` still
    // work on nodes that are all still up.
    if (refused && (*oc)->before) {
        if (auto s = (*oc)->store.save(*(*oc)->before); !s)
            inv.say("cannot restore the cluster's state: " + s.error().message);
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
