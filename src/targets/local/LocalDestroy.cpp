// `ddl destroy` on the local target: the recorded plan's containers, processes, namespaces, links and
// bridges, then a check that none of its nodes still runs before the machine-wide record goes.
#include "targets/local/LocalContainers.hpp"
#include "targets/local/LocalHost.hpp"
#include "targets/local/LocalNames.hpp"
#include "targets/local/LocalTarget.hpp"
#include "util/FileLock.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <signal.h>
#include <thread>
#include <unistd.h>

namespace ddl {

// The training containers (runtime.image) of a namespace cluster: killing the namespaces' processes
// stopped them (conmon and the container run in the node's namespace); podman still lists them.
// podman from this namespace can remove them; it must not start them (they would run outside the node).
Status LocalTarget::remove_training_containers(const Context& ctx) {
    // No podman on this machine: it cannot have started any.
    if (ctx.spec.runtime.image.empty() || find_in_path("podman").empty()) return {};
    auto with = [&](std::vector<std::string> args) {
        Command c{.argv = ctx.spec.container_engine_argv(), .timeout = std::chrono::seconds(60)};
        c.argv.insert(c.argv.end(), args.begin(), args.end());
        return c;
    };
    auto ids =
        ctx.proc.run(with({"ps", "--all", "--quiet", "--filter", "label=ddl.training=" + ctx.spec.name}));
    if (!ids)
        return Error{"listing the training containers of " + ctx.spec.name + ": " + ids.error().message};
    if (!ids->success()) return Error{"listing the training containers: podman: " + trim(ids->err)};
    std::vector<std::string> list;
    for (const auto& line : split_lines(ids->out))
        if (!trim(line).empty()) list.push_back(trim(line));
    if (list.empty()) return {};
    std::vector<std::string> rm{"rm", "--force", "--ignore", "--time", "0"};
    rm.insert(rm.end(), list.begin(), list.end());
    return ctx.run(with(rm));
}

void LocalTarget::release_mountpoints(const Context& ctx) {
    // Mount points go only when no other local cluster uses them. Clusters deployed before the registry
    // existed recorded what they made in their own state.
    const std::string registry = k_registry;
    if (!path_exists(registry + "/users")) return;
    FileLock lock(registry + "/lock");
    if (!lock.held()) return;
    std::error_code ec;
    std::filesystem::remove(registry + "/users/" + registry_id(ctx), ec);
    bool others = !std::filesystem::is_empty(registry + "/users", ec) && !ec;
    for (const auto& ns : local_netns_list(ctx))
        others = others || starts_with(ns, "ddl-");
    if (others) return;
    std::vector<std::string> created = split_lines(read_file(registry + "/created").value_or(""));
    const auto& td = ctx.state.target_data;
    if (td.contains("created_mountpoints"))
        for (const auto& mp : td["created_mountpoints"])
            created.push_back(mp.get<std::string>());
    // Deepest first; a folder that is not empty (something else put files there) stays.
    std::sort(created.begin(), created.end(),
              [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& mp : created)
        if (!mp.empty()) rmdir(mp.c_str());
    std::filesystem::remove(registry + "/created", ec);
}

void LocalTarget::remove_nodes(const Context& ctx, const std::vector<LocalNodePlan>& nodes,
                               std::vector<std::string>& problems) {
    auto present = local_netns_list(ctx);
    for (const auto& n : nodes) {
        if (std::find(present.begin(), present.end(), n.netns) != present.end()) {
            // Every process in the namespace: sshd, its sessions and anything they left running.
            for (int round = 0; round < 3; ++round) {
                auto pids = ctx.proc.run({.argv = {"ip", "netns", "pids", n.netns}});
                if (!pids || trim(pids->out).empty()) break;
                for (const auto& line : split_lines(pids->out)) {
                    if (auto pid = parse_int(trim(line)); pid && *pid > 1)
                        kill(static_cast<pid_t>(*pid), SIGKILL);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            kill_point("destroy:" + n.name + ":processes-killed");
            // A namespace whose name is deleted lives on, unlisted, while a process holds it: it stays
            // listed (and the destroy fails) until nothing runs in it.
            auto left = ctx.proc.run({.argv = {"ip", "netns", "pids", n.netns}});
            if (left && !trim(left->out).empty()) {
                problems.push_back("namespace " + n.netns + ": processes " +
                                   join(split_lines(trim(left->out)), " ") + " survive SIGKILL");
                continue;
            }
            if (auto s = ctx.run({.argv = {"ip", "netns", "del", n.netns}}); !s)
                problems.push_back(s.error().message);
            kill_point("destroy:" + n.name + ":netns-deleted");
        }
        for (const auto& veth : {n.veth_host, n.veth2_host}) {
            if (veth.empty() || !local_link_exists(ctx, veth)) continue;
            // The kernel removes a veth pair with its namespace, asynchronously: a link seen a moment ago
            // may be gone by the time it is deleted, which is what was wanted.
            if (auto s = ctx.run({.argv = {"ip", "link", "del", veth}}); !s && local_link_exists(ctx, veth))
                problems.push_back(s.error().message);
        }
    }
}

LocalPlan LocalTarget::destroyed_plan(const Context& ctx, const std::vector<RegistryRecord>& records) {
    const auto& td = ctx.state.target_data;
    if (td.is_object() && td.contains("plan")) return LocalPlan::from_json(td["plan"]);
    // A deploy stopped between writing its record and saving the state recorded the plan only there.
    const std::string own_id = registry_id(ctx);
    for (const auto& r : records)
        if (r.id == own_id && r.record.contains("plan") && r.record["plan"].is_object())
            return LocalPlan::from_json(r.record["plan"]);
    // Provision records the plan before it makes anything: without one nothing was made, and the names
    // the spec alone gives may be another cluster's.
    LocalPlan none;
    none.cluster = ctx.state.cluster;
    return none;
}

void LocalTarget::still_running(const Context& ctx, const LocalPlan& plan, const std::string& deployed_dir,
                                std::vector<std::string>& problems) {
    const auto present = local_netns_list(ctx);
    for (const auto& n : plan.nodes) {
        if (std::find(present.begin(), present.end(), n.netns) != present.end())
            problems.push_back("node " + n.name + ": its namespace " + n.netns + " still exists");
        if (plan.containers) continue; // its sshd runs in the container, gone with it
        if (auto pid = local_sshd_pid(node_dir(ctx, n.name), deployed_dir + "/nodes/" + n.name))
            problems.push_back("node " + n.name + ": its sshd (pid " + std::to_string(*pid) + ") still runs");
    }
}

Status LocalTarget::destroy(Context& ctx) {
    // A folder whose deploy was refused (the name runs from another folder) owns no node of that name.
    if (auto owner = owner_elsewhere(ctx); owner && !registered_here(ctx)) {
        ctx.progress.note("cluster " + ctx.state.cluster + " on this machine belongs to the state folder " +
                          std::filesystem::path(*owner).parent_path().string() +
                          ": its nodes are left alone; only this folder's record of it is removed");
        return {};
    }
    // A state folder moved while its nodes run: they are removed from the recorded plan all the same,
    // and the record of the folder they were deployed from goes with them.
    const auto moved = moved_from(ctx);
    if (moved)
        ctx.progress.note("cluster " + ctx.state.cluster + " was deployed from " + *moved +
                          " (this state folder was moved since): removing its nodes from the recorded plan");
    const auto records = registry_records(std::string(k_registry) + "/users");
    LocalPlan plan = destroyed_plan(ctx, records);
    // Only what this cluster recorded as its own: a link another record names (two clusters that shared a
    // tag before tags were allocated) stays with that cluster.
    std::set<std::string> others;
    const std::string own_id = registry_id(ctx);
    for (const auto& r : records)
        if (r.id != own_id && r.record.contains("plan"))
            for (const auto& link : plan_links(r.record["plan"]))
                others.insert(link);
    auto keep_others = [&](std::string& link) {
        if (link.empty() || others.count(link) == 0) return;
        ctx.progress.note("link " + link + " is another local cluster's (its record in " + k_registry +
                          "/users names it): left alone");
        link.clear();
    };
    for (auto& n : plan.nodes) {
        keep_others(n.veth_host);
        keep_others(n.veth2_host);
    }
    keep_others(plan.bridge);
    keep_others(plan.private_bridge);
    std::vector<std::string> problems;
    if (plan.containers) {
        // Before the namespaces: podman stops what runs in them and releases its storage.
        LocalContainers containers(ctx, plan);
        for (const auto& n : plan.nodes) {
            if (auto s = containers.remove(n); !s) problems.push_back(s.error().message);
        }
        kill_point("destroy:containers-removed");
        containers.stop_apt_proxy();
    }
    remove_nodes(ctx, plan.nodes, problems);
    if (auto s = remove_training_containers(ctx); !s) problems.push_back(s.error().message);
    kill_point("destroy:links-deleted");
    for (const auto& br : {plan.bridge, plan.private_bridge}) {
        if (br.empty() || !local_link_exists(ctx, br)) continue;
        if (auto s = ctx.run({.argv = {"ip", "link", "del", br}}); !s) problems.push_back(s.error().message);
    }
    // Never "destroyed" while a node still runs: its record, its pidfiles and the state stay for the next
    // try (the CLI keeps the state when destroy fails).
    still_running(ctx, plan, moved.value_or(ctx.cluster_dir()), problems);
    if (!problems.empty()) return Error{join(problems, "; ")};
    release_mountpoints(ctx);
    kill_point("destroy:bridges-deleted");
    (void)remove_tree(ctx.cluster_dir() + "/nodes");
    // Namespace nodes keep what `ddl sync`, setup and the job queue write under /var/lib/ddl on this
    // machine (container nodes keep it in their own file systems, gone with them).
    if (!plan.containers) {
        const std::string lib = "/var/lib/ddl/", name = ctx.state.cluster;
        for (const auto& path : {lib + "work/" + name, lib + "jobs/" + name, lib + "sync/" + name + ".done"})
            (void)remove_tree(path);
        for (const auto& n : plan.nodes)
            for (const char* ext : {".hash", ".log"})
                (void)remove_tree(lib + "setup/" + name + "-" + n.name + ext);
    }
    return {};
}

} // namespace ddl
