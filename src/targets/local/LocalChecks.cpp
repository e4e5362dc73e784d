// What the local target checks before it changes anything: the tools it needs, and that the cluster's
// name is not already taken on this machine by a cluster of another state folder. Node names, namespaces
// and bridges follow from the cluster's name alone, so two folders deploying one name would share (and
// one's destroy would remove) the same nodes; the machine-wide registry (k_registry/users) says which
// folder deployed each running cluster. Its networks must not overlap another cluster's or this
// machine's own (LocalSubnets.hpp).
#include "targets/local/LocalContainers.hpp"
#include "targets/local/LocalSubnets.hpp"
#include "targets/local/LocalTarget.hpp"
#include "util/Files.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace ddl {

namespace {

std::string canonical_or_same(const std::string& p) {
    std::error_code ec;
    auto c = std::filesystem::weakly_canonical(p, ec);
    return ec ? p : c.string();
}

std::string refusal(const Context& ctx, const std::string& owner) {
    const std::string parent = std::filesystem::path(owner).parent_path().string();
    const bool owner_state = path_exists(owner + "/state.json");
    return "cluster " + ctx.state.cluster + " already runs on this machine, deployed from the state folder " +
           parent + (owner_state ? "" : " (whose state is gone)") +
           ": one name is one cluster per machine\nhint: " +
           (owner_state ? "manage it from there (ddl --state-dir " + parent + " status " + ctx.state.cluster +
                              "), or give this spec another name"
                        : "remove it with `ddl gc --older-than 0s`, or give this spec another name");
}

std::optional<std::string> network_clash(const Context& ctx) {
    return subnet_clash(
        LocalPlan::from_spec(ctx.spec), host_networks(),
        registered_subnets(std::string(LocalTarget::k_registry) + "/users", ctx.state.cluster));
}

} // namespace

std::optional<std::string> LocalTarget::owner_elsewhere(const Context& ctx) {
    const std::string dir = std::string(k_registry) + "/users";
    const std::string mine = canonical_or_same(ctx.cluster_dir());
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        auto text = read_file_limited(e.path().string(), std::size_t{1024} * 1024);
        if (!text) continue;
        auto j = nlohmann::json::parse(*text, nullptr, false);
        if (!j.is_object() || j.value("cluster", "") != ctx.state.cluster) continue;
        const std::string theirs = j.value("cluster_dir", "");
        if (!theirs.empty() && canonical_or_same(theirs) != mine) return theirs;
    }
    return std::nullopt;
}

bool LocalTarget::registered_here(const Context& ctx) {
    return path_exists(std::string(k_registry) + "/users/" + registry_id(ctx));
}

Status LocalTarget::preflight(const Context& ctx) {
    if (geteuid() != 0)
        return Error{
            "target local needs root: it creates network namespaces, a bridge and veth links, shapes them "
            "with tc and starts an sshd per node. Run ddl as root (e.g. sudo ddl deploy " +
            ctx.spec.source_file + ")"};
    for (const char* tool : {"ip", "tc", "nsenter", "unshare", "mount"}) {
        if (find_in_path(tool).empty())
            return Error{std::string("target local needs `") + tool +
                         "` on PATH; install iproute2 and util-linux"};
    }
    if (access(LocalTarget::k_sshd, X_OK) != 0)
        return Error{"target local needs the OpenSSH server (" + std::string(k_sshd) +
                     "); install it with: apt-get install openssh-server"};
    if (auto owner = owner_elsewhere(ctx)) return refusal_error(refusal(ctx, *owner));
    if (auto clash = network_clash(ctx)) return refusal_error(*clash);
    if (ctx.spec.target_section<LocalSpec>().nodes_as == "containers")
        return LocalContainers::check_tools(LocalPlan::from_spec(ctx.spec));
    return {};
}

Status LocalTarget::plan(const PlanRequest& req, DeployPlan& out) {
    if (auto owner = owner_elsewhere(req.ctx)) return refusal_error(refusal(req.ctx, *owner));
    if (auto clash = network_clash(req.ctx)) return refusal_error(*clash);
    if (auto s = TargetDriver::plan(req, out); !s) return s;
    const auto& td = req.ctx.state.target_data;
    if (!td.contains("plan")) return {};
    // Against what provision made (its recorded plan), as provision itself compares: a node whose
    // addresses change is made anew, and the links are reshaped in place.
    const LocalChanges changes =
        local_changes(LocalPlan::from_json(td["plan"]), LocalPlan::from_spec(req.ctx.spec));
    // A node that keeps its name but not its addresses (subnet, IP family, bastion) is made anew.
    for (auto& c : out.changes) {
        if (c.kind != "node" || (c.action != "update" && c.action != "keep")) continue;
        for (std::size_t i = 0; i < changes.replaced.size(); ++i)
            if (changes.replaced[i].name == c.address) {
                c.action = "replace";
                c.detail = changes.lines_replaced[i];
            }
    }
    if (!changes.link_rate.empty()) out.changes.push_back({"update", "resource", "links", changes.link_rate});
    return {};
}

} // namespace ddl
