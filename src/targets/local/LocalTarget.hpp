#pragma once
// Target "local": N nodes on this machine, each a network namespace with its own address on a
// per-cluster bridge, its own sshd, host key, hostname, /etc/hosts and private /etc/ddl and /opt/ddl
// (bind mounts inside a private mount namespace), with links shaped by tc to the spec's bandwidth.
#include "provision/TargetDriver.hpp"
#include "targets/local/LocalPlan.hpp"
#include "targets/local/LocalSection.hpp"

namespace ddl {

struct RegistryRecord; // LocalNames.hpp

// What a re-deploy changes in the nodes provision made (`old`, its recorded plan) to reach `plan`.
struct LocalChanges {
    std::vector<LocalNodePlan> dropped;  // no longer in the spec
    std::vector<LocalNodePlan> replaced; // kept by name, with other addresses (subnet, IP family, bastion)
    std::vector<std::string> lines_replaced; // for each of `replaced`: "10.1.2.3 -> 10.4.5.6"
    bool bridges_change = false;             // the bridges' addresses change: they are made anew too
    std::string link_rate;                   // "1 Gbit/s -> 100 Mbit/s" when the links' shaping changes
    std::vector<std::string> lines;          // one per change, for the approval question
};
[[nodiscard]] LocalChanges local_changes(const LocalPlan& old, const LocalPlan& plan);

class LocalTarget : public TargetDriver, public LinkShaping, public LeakedClusters, public NodeReplacement {
public:
    TargetCapabilities capabilities() override {
        return {.link_shaping = this, .leaked_clusters = this, .node_replacement = this};
    }

    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    // The nodes of LocalPlan::from_spec, described by kind (namespace or container image) and address.
    std::vector<PlannedNode> planned_nodes(const Spec& spec) const override;
    // Refused while the cluster's name runs from another state folder on this machine (LocalChecks.cpp).
    Status plan(const PlanRequest& req, DeployPlan& out) override;
    Status reshape_links(const Context& ctx, std::uint64_t bps) override;

    // Shapes (or unshapes, for 0) both ends of every node's link; used by provision and by benchmarks
    // that sweep bandwidths.
    static Status shape_links(const Context& ctx, const LocalPlan& plan, std::uint64_t bps);
    // Where a node's own files live on this machine (keys, sshd config, its /etc/ddl and /opt/ddl).
    static std::string node_dir(const Context& ctx, const std::string& node) {
        return ctx.cluster_dir() + "/nodes/" + node;
    }
    static constexpr const char* k_sshd = "/usr/sbin/sshd";
    // The whole environment a node's sshd starts with (sshd_argv).
    static constexpr const char* k_daemon_path = "/usr/sbin:/usr/bin:/sbin:/bin";
    // How a namespace node's sshd starts (its init.sh in `dir`, in network namespace `netns`): with an
    // environment of PATH only, none of ddl's.
    static std::vector<std::string> sshd_argv(const std::string& netns, const std::string& dir);
    // Machine-wide bookkeeping shared by every local cluster and state folder (LocalTarget.cpp): the mount
    // points ddl made, and users/<cluster>.<hash>, one record per deployed cluster (registry_record).
    static constexpr const char* k_registry = "/run/ddl/local";

    // `ddl deploy --replace NODE` (LocalChanges.cpp): the node is removed after approval; provision makes it
    // anew.
    Status remove_for_replace(Context& ctx, const std::string& node) override;
    // gc from the machine's side (LocalFound.cpp): the records in k_registry/users, and destroy from one.
    bool needs_spec() const override { return false; }
    Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;
    // The record of a cluster for k_registry/users: name, state folder, plan, spec, and the time it was
    // first created (kept from `previous`, the record written by an earlier deploy).
    static std::string registry_record(const Context& ctx, const LocalPlan& plan,
                                       const std::string& previous);
    // tbf's bucket for a link of `bps` bit/s, in bytes.
    static std::uint64_t tbf_burst_bytes(std::uint64_t bps);

    // The state folder this one was moved from while its nodes run (their sshd read keys and config
    // there): the folder provision recorded (target_data.cluster_dir), when it differs from this one, is
    // gone, and still has its record in k_registry/users. None for a folder that was not moved, or copied.
    static std::optional<std::string> moved_from(const Context& ctx);

private:
    // The state folder of another cluster of this name running on this machine (k_registry/users), if any.
    static std::optional<std::string> owner_elsewhere(const Context& ctx);
    // Under k_registry/lock, before the cluster's record is written (LocalChecks.cpp): the checks of
    // preflight again (moved folder, the name's owner, the networks), now that no other deploy can claim
    // between the check and the record, and the plan's link tag: the recorded one on a re-deploy, else
    // the first one no other record and no link on this machine carries.
    static Status claim(const Context& ctx, LocalPlan& plan);
    // The tag salt of the plan provision recorded (0 before the first provision).
    static std::uint32_t recorded_salt(const Context& ctx);
    // Whether this state folder's cluster has its record in k_registry/users (it provisioned nodes).
    static bool registered_here(const Context& ctx);
    // Its record's file name in k_registry/users (local_registry_id): of the folder it was moved from
    // (moved_from), else of its own.
    static std::string registry_id(const Context& ctx);
    Status setup_bridge(const Context& ctx, const LocalPlan& plan);
    Status setup_node(const Context& ctx, const LocalPlan& plan, std::size_t index);
    Status write_node_files(const Context& ctx, const LocalPlan& plan, std::size_t index);
    Status start_sshd(const Context& ctx, const LocalNodePlan& node);
    static Status remove_training_containers(const Context& ctx);
    // Every process, namespace and host link of these nodes; what fails is added to `problems`.
    static void remove_nodes(const Context& ctx, const std::vector<LocalNodePlan>& nodes,
                             std::vector<std::string>& problems);
    // A re-deploy that changes what exists (local_changes): shown and approved first, then the nodes the
    // new plan lacks or re-addresses are removed (provision makes the latter anew).
    static Status remove_changed_nodes(Context& ctx, const LocalPlan& plan);
    // Removes `gone` (containers, processes, links, node folder, pinned host keys), naming each on the
    // progress as dropped (in `dropped`) or to be made anew; what fails is added to `problems`.
    static void remove_planned(Context& ctx, const LocalPlan& old, const std::vector<LocalNodePlan>& gone,
                               const std::vector<LocalNodePlan>& dropped, std::vector<std::string>& problems);
    static void release_mountpoints(const Context& ctx);
    // What destroy removes (LocalDestroy.cpp): the recorded plan (the state's, else its own record's in
    // `records`); without one, nothing: provision records it before it makes anything.
    static LocalPlan destroyed_plan(const Context& ctx, const std::vector<RegistryRecord>& records);
    // After destroy: each node of `plan` whose namespace is still listed or whose sshd (started from the
    // node folders under `deployed_dir`) still runs, added to `problems`.
    static void still_running(const Context& ctx, const LocalPlan& plan, const std::string& deployed_dir,
                              std::vector<std::string>& problems);
};

} // namespace ddl
