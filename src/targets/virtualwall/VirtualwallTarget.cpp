#include "targets/virtualwall/VirtualwallTarget.hpp"

#include "targets/virtualwall/GeniIdentity.hpp"
#include "targets/virtualwall/RequestRspec.hpp"
#include "targets/virtualwall/VirtualwallGeni.hpp"
#include "targets/virtualwall/VirtualwallSlices.hpp"
#include "util/Files.hpp"
#include "util/LoginPem.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <unistd.h>

namespace ddl {
namespace {

std::string dir_of(const Context& ctx) {
    return ctx.cluster_dir() + "/virtualwall";
}
std::string stored_manifest(const Context& ctx) {
    return dir_of(ctx) + "/manifest.rspec";
}

// The key the nodes let in: the user's own. jFed installs the keys of the user's account on every node
// (`--ssh-keys usercert`), and the jFed GUI does the same.
std::string login_key(const Context& ctx) {
    return ctx.spec.access.private_key;
}

bool executable(const std::string& path) {
    if (path.find('/') == std::string::npos) return !find_in_path(path).empty();
    return access(path.c_str(), X_OK) == 0 || (ends_with(path, ".jar") && access(path.c_str(), R_OK) == 0);
}

} // namespace

std::string VirtualwallTarget::slice_urn(const std::string& project, const std::string& slice) {
    return "urn:publicid:IDN+wall2.ilabt.iminds.be:" + project + "+slice+" + slice;
}

std::vector<std::string> VirtualwallTarget::jfed_argv(const std::string& jfed_cli, const JfedCall& call) {
    std::vector<std::string> argv;
    if (ends_with(jfed_cli, ".jar"))
        argv = {"java", "-jar", jfed_cli};
    else
        argv = {jfed_cli};
    argv.push_back(call.command);
    if (call.command == "create") {
        // Create the slice too, install the account's SSH keys, save the manifest, and set the expiry.
        argv.insert(argv.end(), {"--create-slice", "--ssh-keys", "usercert", "--manifest", call.manifest,
                                 "--expiration-hours", std::to_string(call.expiration_hours)});
    }
    argv.insert(argv.end(), {"--rspec", call.rspec, "-s", call.slice_urn, "-p", call.login_pem});
    return argv;
}

std::string VirtualwallTarget::configure_failure_hint(const Context& ctx, const std::string& message) const {
    const auto& vw = ctx.spec.target_section<VirtualwallSpec>();
    if (vw.client == "slices") return {}; // SLICES BI nodes have their site's egress; no NAT script
    // What a download that could not leave the node says (the NAT task itself, apt, wget/curl, an image
    // pull).
    static const char* const k_signs[] = {"enable-nat",
                                          "IPv4 egress",
                                          "Failed to fetch",
                                          "Could not resolve",
                                          "Temporary failure",
                                          "Network is unreachable",
                                          "Connection timed out",
                                          "pull",
                                          "apt-get"};
    const bool egress = std::any_of(std::begin(k_signs), std::end(k_signs), [&](const char* sign) {
        return message.find(sign) != std::string::npos;
    });
    if (!egress) return {};
    std::string hint = "hint: Virtual Wall nodes reach the IPv4 internet (Docker Hub, NVIDIA's registry, "
                       "some apt mirrors) only through NAT (Virtual Wall \"Network\": "
                       "https://doc.ilabt.imec.be/ilabt/virtualwall/network.html). ";
    if (!vw.enable_nat)
        return hint + "virtualwall.enable_nat is off: turn it on, or give the nodes another way out";
    return hint + "The NAT script ran from " + vw.nat_script_url +
           "; check a node with `ddl exec --cluster " + ctx.spec.name +
           " -- ip -4 route show default`, and pull over IPv6 or request a public IPv4 address if NAT "
           "stays off";
}

Result<std::vector<NodeState>> VirtualwallTarget::nodes_from_manifest(const Manifest& manifest,
                                                                      const Spec& spec,
                                                                      const std::string& key_path) {
    std::vector<NodeState> out;
    std::vector<std::string> problems;
    std::vector<std::string> present;
    for (const auto& n : manifest.nodes)
        present.push_back(n.client_id);
    const std::string& via = spec.target_section<VirtualwallSpec>().connect_via;
    for (const auto& want : rspec_nodes(spec)) {
        const ManifestNode* found = nullptr;
        for (const auto& n : manifest.nodes)
            if (n.client_id == want.client_id) found = &n;
        if (!found) {
            problems.push_back("node " + want.client_id + " is not in the manifest (it has " +
                               join(present, ", ") + "); is this the manifest of slice " +
                               spec.target_section<VirtualwallSpec>().slice_name(spec.name) + "?");
            continue;
        }
        // The login: the one for access.user, else the only user name the manifest offers.
        std::set<std::string> users;
        const ManifestLogin* login = nullptr;
        for (const auto& l : found->logins) {
            if (!l.authentication.empty() && l.authentication != "ssh-keys") continue;
            users.insert(l.username);
            if (l.username == spec.access.user) login = &l;
        }
        if (!login && users.size() == 1) {
            for (const auto& l : found->logins)
                if (l.username == *users.begin()) login = &l;
        }
        if (!login) {
            problems.push_back(users.empty()
                                   ? "node " + want.client_id + " has no SSH login in the manifest"
                                   : "node " + want.client_id + " has logins for " +
                                         join(std::vector<std::string>(users.begin(), users.end()), ", ") +
                                         "; set access.user to yours");
            continue;
        }
        std::string address;
        if (via == "ipv6") {
            // The `ipv6` attribute of <host>, else the login's name when it is an IPv6 address or a DNS name
            // (the documented form, which resolves to the node's IPv6 address); never an IPv4 literal.
            address = found->host_ipv6;
            if (address.empty() && !is_ipv4(login->hostname)) address = login->hostname;
        } else if (via == "ipv4") {
            address = found->host_ipv4;
            if (address.empty() && is_ipv4(login->hostname)) address = login->hostname;
        } else {
            address = login->hostname;
        }
        if (address.empty()) {
            std::vector<std::string> has;
            if (!found->host_ipv6.empty()) has.push_back("ipv6");
            if (!login->hostname.empty()) has.push_back("hostname");
            if (!found->host_ipv4.empty()) has.push_back("ipv4");
            problems.push_back(
                "node " + want.client_id + " has no " + via + " address in the manifest" +
                (has.empty() ? std::string() : "; set virtualwall.connect_via to " + join(has, " or ")));
            continue;
        }
        NodeState ns;
        ns.name = want.client_id;
        ns.group = ns.name == "master" ? "master" : "workers";
        ns.address = address;
        ns.port = login->port;
        ns.user = login->username;
        ns.key = key_path;
        // The experiment LAN the RSpec asked for (with its capacity) carries the training traffic; the
        // login address is the control network. Hostfiles and ranks use the LAN when the manifest has it.
        for (const auto& iface : found->interfaces)
            if (iface.client_id == want.client_id + ":if0")
                for (const auto& ip : iface.ips)
                    if (ip.type == "ipv4" && ns.private_address.empty()) ns.private_address = ip.address;
        out.push_back(ns);
    }
    if (!problems.empty()) return Error{join(problems, "\n      ")};
    return out;
}

// The request RSpec jFed reads, and what ddl tells jFed about the slice (no dates: those are set at deploy).
Result<RenderedFiles> VirtualwallTarget::render(const Spec& s, const RenderInputs&) const {
    const auto& vw = s.target_section<VirtualwallSpec>();
    RenderedFiles f;
    if (vw.client == "slices") {
        // What provision asks SLICES for (the calls themselves are in VirtualwallSlices.cpp).
        const std::string prefix = "ddl-" + s.name + "-";
        nlohmann::json groups = nlohmann::json::array();
        groups.push_back({{"name", prefix + "master"},
                          {"count", 1},
                          {"flavor", s.master.flavor.empty() ? vw.flavor : s.master.flavor}});
        if (s.workers.count > 0)
            groups.push_back({{"name", prefix + "w"},
                              {"count", s.workers.count},
                              {"flavor", s.workers.flavor.empty() ? vw.flavor : s.workers.flavor}});
        f["virtualwall/slices.json"] = json_file({{"site", vw.site},
                                                  {"experiment", vw.experiment_name(s.name)},
                                                  {"image", vw.image},
                                                  {"duration", vw.duration},
                                                  {"resources", groups}});
        return f;
    }
    f["virtualwall/request.rspec"] = render_request_rspec(s);
    f["virtualwall/slice.json"] = json_file({{"slice", vw.slice_name(s.name)},
                                             {"project", vw.project},
                                             {"testbed", vw.testbed},
                                             {"authority", virtualwall_cm_urn(vw.testbed)},
                                             {"expiry_hours", vw.expiry_hours}});
    return f;
}

Status VirtualwallTarget::preflight(const Context& ctx) {
    const auto& vw = ctx.spec.target_section<VirtualwallSpec>();
    if (vw.client == "slices") {
        if (!ctx.options.manifest_path.empty())
            return Error{
                "--manifest is for a slice made in the jFed GUI, and this virtualwall section is a "
                "SLICES one (it has no GENI keys): add `client: geni` to it, or leave out --manifest "
                "and let ddl make SLICES Basic Infrastructure resources"};
        return slices_preflight(ctx);
    }
    if (vw.client == "jfed-cli") {
        if (!executable(vw.jfed_cli))
            return Error{
                "virtualwall.jfed_cli: cannot run " + vw.jfed_cli +
                " (not found or not executable); install the jFed experimenter CLI, use client: geni, or "
                "pass the manifest from the jFed GUI with --manifest FILE"};
        if (!ctx.options.manifest_path.empty())
            return Error{
                "--manifest is for deploying without the jFed CLI, but virtualwall.client is jfed-cli; "
                "leave out one of the two"};
        if (auto s = check_login_pem(vw.login_pem, "virtualwall.login_pem: the jFed login file"); !s)
            return s;
        if (ctx.spec.access.private_key.empty())
            return Error{
                "jFed installs your Fed4FIRE account's SSH keys on the nodes: set access.private_key to "
                "the private key of one of them"};
        return {};
    }
    const bool created_here = ctx.state.target_data.value("slice_requested", false);
    if (ctx.options.manifest_path.empty() && (!vw.login_pem.empty() || created_here))
        return geni_preflight(ctx);
    if (ctx.options.manifest_path.empty() && !path_exists(stored_manifest(ctx)))
        return Error{
            "virtualwall.login_pem is not set, so ddl needs the manifest: set login_pem to your iLab.t "
            "login file to let ddl create the slice over the GENI AM API, or request " +
            ctx.cluster_dir() + "/rendered/virtualwall/request.rspec in the jFed GUI as slice " +
            vw.slice_name(ctx.spec.name) + " in project " + vw.project +
            ", save its manifest once the nodes are ready, then run `ddl deploy " + ctx.spec.source_file +
            " --manifest FILE`"};
    if (ctx.spec.access.private_key.empty())
        return Error{
            "with a manifest from the jFed GUI, the nodes admit the keys of your Fed4FIRE account: set "
            "access.private_key to that private key"};
    if (!ctx.options.manifest_path.empty() && access(ctx.options.manifest_path.c_str(), R_OK) != 0)
        return Error{"--manifest " + ctx.options.manifest_path + ": cannot read the file"};
    return {};
}

bool VirtualwallTarget::replaces_one_node(const Spec& spec) const {
    return spec.target_section<VirtualwallSpec>().client == "slices";
}

Status VirtualwallTarget::remove_for_replace(Context& ctx, const std::string& node) {
    const auto& vw = ctx.spec.target_section<VirtualwallSpec>();
    if (vw.client == "slices") return slices_remove_for_replace(ctx, node);
    return Error{"target virtualwall with client " + vw.client +
                 " cannot replace one node: the slice is one request for every node; `ddl destroy " +
                 ctx.state.cluster + "`, then deploy again (client: slices replaces one resource)"};
}

Status VirtualwallTarget::provision(Context& ctx) {
    const auto& vw = ctx.spec.target_section<VirtualwallSpec>();
    if (vw.client == "slices") return slices_provision(ctx);
    auto& td = ctx.state.target_data;
    td["slice"] = vw.slice_name(ctx.spec.name);
    td["project"] = vw.project;
    td["authority"] = virtualwall_cm_urn(vw.testbed);
    if (auto s = make_dirs(dir_of(ctx), 0700); !s) return s;

    const bool jfed = vw.client == "jfed-cli";
    if (jfed && td.value("slice_created", false) && path_exists(stored_manifest(ctx))) {
        // A repeated provision (changed spec, resumed deploy) keeps the slice it made: jFed refuses to
        // create an existing slice, and the nodes are already there.
        ctx.progress.note("    jFed: slice " + vw.slice_name(ctx.spec.name) + " exists; using its manifest");
    } else if (jfed) {
        JfedCall call;
        call.command = "create";
        // The authority of the user's certificate where it names one; jFed's legacy wall2 otherwise.
        auto id = geni_identity_from_pem(vw.login_pem);
        call.slice_urn = id ? geni_slice_urn(id->authority, vw.project, vw.slice_name(ctx.spec.name))
                            : slice_urn(vw.project, vw.slice_name(ctx.spec.name));
        call.rspec = ctx.cluster_dir() + "/rendered/virtualwall/request.rspec";
        call.login_pem = vw.login_pem;
        call.manifest = stored_manifest(ctx);
        call.expiration_hours = vw.expiry_hours;
        // Recorded before the CLI runs: from here on a slice may exist, and destroy must delete it.
        td["slice_requested"] = true;
        td["jfed_cli"] = vw.jfed_cli;
        td["slice_urn"] = call.slice_urn;
        td["login_pem"] = vw.login_pem;
        if (auto s = ctx.save(); !s) return s;
        ctx.progress.note("    jFed: creating slice " + call.slice_urn +
                          " and waiting until its nodes are ready");
        if (auto s = ctx.run({.argv = jfed_argv(vw.jfed_cli, call),
                              .cwd = dir_of(ctx),
                              .timeout = std::chrono::minutes(65)});
            !s)
            return Error{"the jFed CLI could not create slice " + call.slice_urn + ": " + s.error().message};
        if (!path_exists(stored_manifest(ctx)))
            return Error{"the jFed CLI finished but wrote no manifest to " + stored_manifest(ctx)};
        td["slice_created"] = true;
        if (auto s = ctx.save(); !s) return s;
    } else if (!ctx.options.manifest_path.empty()) {
        auto text = read_file_limited(ctx.options.manifest_path, std::size_t{16} * 1024 * 1024);
        if (!text) return Error{"--manifest " + ctx.options.manifest_path + ": " + text.error().message};
        // Kept with the cluster so a resumed or repeated deploy needs no --manifest.
        if (auto s = write_file_atomic(stored_manifest(ctx), *text, 0600); !s) return s;
    } else if (!vw.login_pem.empty() || td.value("slice_requested", false)) {
        if (auto s = geni_provision(ctx, *m_transport, stored_manifest(ctx)); !s) return s;
    }

    auto text = read_file(stored_manifest(ctx));
    if (!text) return text.error();
    auto manifest = parse_manifest(*text);
    if (!manifest)
        return Error{"the manifest " +
                     (ctx.options.manifest_path.empty() ? stored_manifest(ctx) : ctx.options.manifest_path) +
                     " cannot be used: " + manifest.error().message};
    auto nodes = nodes_from_manifest(*manifest, ctx.spec, login_key(ctx));
    if (!nodes) return Error{"the manifest does not fit the spec:\n      " + nodes.error().message};
    ctx.state.nodes = std::move(*nodes);
    for (const auto& n : ctx.state.nodes)
        ctx.progress.node(n.name, n.user + "@" + host_for_port(n.address) + ":" + std::to_string(n.port));
    return {};
}

Status VirtualwallTarget::destroy(Context& ctx) {
    const auto& td = ctx.state.target_data;
    const std::string slice =
        td.value("slice", ctx.spec.target_section<VirtualwallSpec>().slice_name(ctx.spec.name));
    const std::string project = td.value("project", ctx.spec.target_section<VirtualwallSpec>().project);
    const std::string jfed_cli = td.value("jfed_cli", ctx.spec.target_section<VirtualwallSpec>().jfed_cli);
    if (td.value("client", std::string()) == "slices") return slices_destroy(ctx);
    if (td.value("client", std::string()) == "geni") {
        if (td.value("slice_requested", false)) return geni_destroy(ctx, *m_transport);
        ctx.progress.note("    no slivers were requested for slice " + td.value("slice", std::string()) +
                          "; nothing to delete");
        return {};
    }
    if (!td.value("slice_requested", false)) {
        if (td.contains("slice") && jfed_cli.empty())
            ctx.progress.note(
                "ddl did not create this slice (its manifest came from the jFed GUI): delete slice " + slice +
                " of project " + project + " (" + td.value("authority", std::string()) +
                ") yourself in jFed (select the slice, \"Terminate\"), or let it expire");
        return {};
    }
    JfedCall call;
    call.command = "delete";
    call.slice_urn = td.value("slice_urn", slice_urn(project, slice));
    call.rspec = ctx.cluster_dir() + "/rendered/virtualwall/request.rspec";
    call.login_pem = td.value("login_pem", ctx.spec.target_section<VirtualwallSpec>().login_pem);
    if (!path_exists(call.rspec)) {
        // jFed's delete takes the request RSpec too; a state folder without the rendered files gets
        // them again from the stored spec.
        auto files = render(ctx.spec, RenderInputs{});
        if (!files) return files.error();
        if (auto s = make_dirs(ctx.cluster_dir() + "/rendered/virtualwall", 0700); !s) return s;
        if (auto s = write_file_atomic(call.rspec, files->at("virtualwall/request.rspec"), 0600); !s)
            return s;
    }
    if (auto s = ctx.run(
            {.argv = jfed_argv(jfed_cli, call), .cwd = dir_of(ctx), .timeout = std::chrono::minutes(15)});
        !s)
        return Error{"the jFed CLI could not delete slice " + call.slice_urn + ": " + s.error().message +
                     " (delete it in the jFed GUI if this keeps failing)"};
    ctx.progress.note("    jFed: slice " + slice + " of project " + project + " deleted");
    return {};
}

Status VirtualwallTarget::renew_lease(Context& ctx, std::chrono::hours hours) {
    if (ctx.state.target_data.value("client", std::string()) == "slices") return slices_renew(ctx, hours);
    return geni_renew(ctx, *m_transport, hours);
}

std::optional<std::chrono::system_clock::time_point>
VirtualwallTarget::lease_end(const ClusterState& state) const {
    if (state.target_data.value("client", std::string()) == "slices")
        return slices_lease_end(state.target_data);
    return geni_lease_end(state.target_data);
}

Result<std::vector<FoundCluster>> VirtualwallTarget::find_clusters(const Spec* spec,
                                                                   ProcessRunner& proc) const {
    if (!spec || spec->target_section<VirtualwallSpec>().client != "slices")
        return Error{"`ddl gc --spec` finds Virtual Wall clusters of client: slices (SLICES Basic "
                     "Infrastructure); a GENI slice expires on its own, or delete it in jFed"};
    return slices_find_clusters(*spec, proc);
}

Status VirtualwallTarget::destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) {
    return slices_destroy_found(found, proc, progress);
}

} // namespace ddl
