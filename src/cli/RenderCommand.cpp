// `ddl render`: the target's inputs for a spec, written without deploying (same bytes every time), and the
// Ansible inventory of the cluster's nodes when it is deployed: a folder a Terraform or Ansible user can
// take over by hand (README, "Using the rendered files without ddl").
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/OpenCluster.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/PrintDiagnostics.hpp"
#include "core/Diagnostics.hpp"
#include "provision/Configure.hpp"
#include "remote/SshKeys.hpp"
#include "render/Renderer.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct RenderArgs {
    std::string file;
    std::string out_dir = "rendered";
    std::string public_key_file;
};

void add_options(CLI::App& sub, RenderArgs& a) {
    sub.add_option("file", a.file, "cluster.yaml")->required();
    sub.add_option("--out", a.out_dir, "Output folder")->check(k_non_empty)->capture_default_str();
    sub.add_option("--public-key", a.public_key_file,
                   "OpenSSH public key file for the nodes (openstack; default: access.private_key's .pub, "
                   "else the cluster's key in the state folder)");
}

// The public key a render of the spec uses: the file given, else access.private_key's .pub, else the
// cluster's own key if it was deployed before; empty (a placeholder is rendered) when there is none.
Result<std::string> public_key_for_render(const std::string& state_dir, const Spec& spec,
                                          const std::string& given) {
    if (!given.empty()) {
        auto text = read_file_limited(given, std::size_t{64} * 1024);
        if (!text) return Error{"--public-key " + given + ": " + text.error().message};
        return parse_openssh_public_key(*text, "--public-key " + given);
    }
    for (const auto& candidate : {spec.access.private_key.empty() ? "" : spec.access.private_key + ".pub",
                                  StateStore(state_dir).cluster_dir(spec.name) + "/id_ed25519.pub"}) {
        if (candidate.empty() || !path_exists(candidate)) continue;
        if (auto text = read_file(candidate)) return trim(*text);
    }
    return std::string();
}

int render(const Invocation& inv, const RenderArgs& a) {
    auto r = load_spec_file(a.file);
    if (!r.spec) {
        print_diagnostics(inv.g.json, r.diagnostics);
        return exit_code::k_bad_input;
    }
    RenderInputs inputs;
    if (render_needs_public_key(*r.spec)) {
        auto key = public_key_for_render(inv.g.state_dir, *r.spec, a.public_key_file);
        if (!key) return inv.fail(key.error().message, exit_code::k_bad_input);
        inputs.public_key = *key;
        if (key->empty())
            inv.say("note: no public key yet, so terraform.tfvars.json leaves public_key out: Terraform asks "
                    "for it (or -var \"public_key=$(cat KEY.pub)\"); `ddl deploy` renders the cluster's key "
                    "(or pass --public-key FILE)");
    }
    auto files = render_spec(*r.spec, inputs);
    if (!files) return inv.fail(files.error().message, exit_code::k_failure);
    // The nodes' addresses are known once the cluster is deployed: then the inventory configure uses.
    StateStore store(inv.g.state_dir);
    std::unique_ptr<OpenCluster> deployed;
    if (store.exists(r.spec->name)) {
        auto oc = open_cluster(inv.g.state_dir, r.spec->name, false, "ddl render");
        if (oc && !(*oc)->state.nodes.empty()) deployed = std::move(*oc);
    }
    if (deployed)
        (*files)["ansible/inventory.yml"] = render_inventory(*deployed->ctx);
    else
        inv.say("note: no ansible/inventory.yml: cluster " + r.spec->name +
                " has no nodes in the state folder yet (render again after `ddl deploy`)");
    if (auto s = write_rendered(*files, a.out_dir); !s)
        return inv.fail(s.error().message, exit_code::k_failure);
    for (const auto& [rel, content] : *files)
        std::cout << a.out_dir << "/" << rel << "\n";
    return exit_code::k_ok;
}

} // namespace

CommandBody render_command() {
    auto a = std::make_shared<RenderArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .action = [a](Invocation& inv) { return render(inv, *a); }};
}

} // namespace ddl::cli
