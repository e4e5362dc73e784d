// What the local target checks before it changes anything: the tools it needs, and that the cluster's
// name is not already taken on this machine by a cluster of another state folder. Node names, namespaces
// and bridges follow from the cluster's name alone, so two folders deploying one name would share (and
// one's destroy would remove) the same nodes; the machine-wide registry (k_registry/users) says which
// folder deployed each running cluster. Its networks must not overlap another cluster's or this
// machine's own (LocalSubnets.hpp). Provision checks all of it again under the registry's lock, where it
// writes its record (claim): two deploys at one moment cannot both pass and both claim.
#include "targets/local/LocalContainers.hpp"
#include "targets/local/LocalNames.hpp"
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

std::string parent_of(const std::string& cluster_dir) {
    return std::filesystem::path(cluster_dir).parent_path().string();
}

std::string refusal(const Context& ctx, const std::string& owner) {
    const std::string parent = parent_of(owner);
    const std::string& name = ctx.state.cluster;
    if (path_exists(owner + "/state.json"))
        return "cluster " + name + " already runs on this machine, deployed from the state folder " + parent +
               ": one name is one cluster per machine\nhint: manage it from there (ddl --state-dir " +
               parent + " status " + name + "), or give this spec another name";
    // Its nodes' sshd read their keys under `owner`: only that folder, back in its place, reaches them.
    return "cluster " + name + " already runs on this machine, deployed from the state folder " + parent +
           ", which is gone (moved or deleted): its nodes read their keys and sshd config there\nhint: if " +
           "it was moved, run `ddl --state-dir <where it is now> destroy " + name + "` (or move it back to " +
           parent + "); if it was deleted, `ddl --state-dir " + parent + " gc --target local --prefix " +
           name + " --older-than 0s --dry-run` lists what that folder " +
           "leaked (without --dry-run it removes them); or give this spec another name";
}

// A state folder moved (mv .ddl elsewhere) while its nodes run: deploy stops here rather than start a
// second set of daemons beside the first; destroy follows the move (it works from the recorded plan).
std::string moved_refusal(const Context& ctx, const std::string& was) {
    const std::string now = ctx.cluster_dir(), name = ctx.state.cluster;
    const bool parent_left = path_exists(parent_of(was));
    const std::string back =
        parent_left ? "mv " + now + " " + was : "mv " + parent_of(now) + " " + parent_of(was);
    return "cluster " + name + ": its state folder was moved from " + parent_of(was) + " to " +
           parent_of(now) + " while its nodes run; they read their keys and sshd config under " + was +
           ", so ddl cannot reach or re-deploy them from here\nhint: move it back (" + back +
           ") and run ddl there, or remove its nodes from here with `ddl --state-dir " + parent_of(now) +
           " destroy " + name + "` and deploy again";
}

std::optional<std::string> network_clash(const Context& ctx, const LocalPlan& plan) {
    return subnet_clash(
        plan, host_networks(),
        registered_subnets(std::string(LocalTarget::k_registry) + "/users", ctx.state.cluster));
}

// What preflight and plan refuse (claim() checks it again under the lock): `plan` with the recorded tag,
// so that a re-deploy's own bridges are not taken for another network of this machine.
Status deploy_refusal(const Context& ctx, const std::optional<std::string>& moved,
                      const std::optional<std::string>& owner, const LocalPlan& plan) {
    if (moved) return refusal_error(moved_refusal(ctx, *moved));
    if (owner) return refusal_error(refusal(ctx, *owner));
    if (auto clash = network_clash(ctx, plan)) return refusal_error(*clash);
    return {};
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

std::string LocalTarget::registry_id(const Context& ctx) {
    return local_registry_id(ctx.state.cluster, moved_from(ctx).value_or(ctx.cluster_dir()));
}

std::optional<std::string> LocalTarget::moved_from(const Context& ctx) {
    const auto& td = ctx.state.target_data;
    if (!td.is_object() || !td.contains("cluster_dir") || !td["cluster_dir"].is_string()) return std::nullopt;
    return moved_state_folder(ctx.state.cluster, td["cluster_dir"].get<std::string>(), ctx.cluster_dir(),
                              std::string(k_registry) + "/users");
}

std::uint32_t LocalTarget::recorded_salt(const Context& ctx) {
    const auto& td = ctx.state.target_data;
    return td.is_object() && td.contains("plan") ? LocalPlan::from_json(td["plan"]).tag_salt : 0;
}

Status LocalTarget::claim(const Context& ctx, LocalPlan& plan) {
    if (auto moved = moved_from(ctx)) return refusal_error(moved_refusal(ctx, *moved));
    if (auto owner = owner_elsewhere(ctx)) return refusal_error(refusal(ctx, *owner));
    const std::string users = std::string(k_registry) + "/users";
    const std::string own_id = registry_id(ctx);
    const auto records = registry_records(users);
    const auto& td = ctx.state.target_data;
    // A re-deploy keeps the links it made: the tag in its recorded plan, or in its record when a deploy
    // stopped between writing the record and saving the state.
    std::optional<std::uint32_t> salt;
    if (td.is_object() && td.contains("plan")) salt = LocalPlan::from_json(td["plan"]).tag_salt;
    for (const auto& r : records)
        if (!salt && r.id == own_id && r.record.contains("plan") && r.record["plan"].is_object())
            salt = LocalPlan::from_json(r.record["plan"]).tag_salt;
    if (!salt) salt = allocate_tag_salt(plan.cluster, own_id, records, host_links());
    if (!salt)
        return Error{"cluster " + plan.cluster +
                     ": no free name for its bridge and links on this machine\nhint: destroy the local " +
                     "clusters no longer used (ddl list; ddl destroy NAME)"};
    if (*salt != plan.tag_salt) plan = LocalPlan::from_spec(ctx.spec, *salt);
    if (auto clash = network_clash(ctx, plan)) return refusal_error(*clash);
    return {};
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
    if (auto s = deploy_refusal(ctx, moved_from(ctx), owner_elsewhere(ctx),
                                LocalPlan::from_spec(ctx.spec, recorded_salt(ctx)));
        !s)
        return s;
    if (ctx.spec.target_section<LocalSpec>().nodes_as == "containers")
        return LocalContainers::check_tools(LocalPlan::from_spec(ctx.spec));
    return {};
}

Status LocalTarget::plan(const PlanRequest& req, DeployPlan& out) {
    const LocalPlan wanted = LocalPlan::from_spec(req.ctx.spec, recorded_salt(req.ctx));
    if (auto s = deploy_refusal(req.ctx, moved_from(req.ctx), owner_elsewhere(req.ctx), wanted); !s) return s;
    if (auto s = TargetDriver::plan(req, out); !s) return s;
    const auto& td = req.ctx.state.target_data;
    if (!td.contains("plan")) return {};
    // Against what provision made (its recorded plan), as provision itself compares: a node whose
    // addresses change is made anew, and the links are reshaped in place.
    const LocalChanges changes = local_changes(LocalPlan::from_json(td["plan"]), wanted);
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
