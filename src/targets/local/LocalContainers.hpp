#pragma once
// Container nodes of the local target (local.nodes_as: containers): each node is a rootful podman
// container running systemd, placed in the node's network namespace, with its own file system, so the
// configure roles install packages and start services for real. Packages come through an apt proxy on
// the cluster's bridge (apt-cacher-ng, run by ddl unless the spec names a proxy); the default image is a
// Debian 12 root file system made by debootstrap and imported once per machine.
// On this machine kind podman runs containers only with runc (crun lacks CAP_SYS_RESOURCE here).
#include "provision/Context.hpp"
#include "targets/local/LocalPlan.hpp"

#include <string>
#include <vector>

namespace ddl {

class LocalContainers {
public:
    LocalContainers(const Context& ctx, const LocalPlan& plan) : m_ctx(ctx), m_plan(plan) {}

    // Tools the container layout needs on this machine, each named with its Debian package.
    static Status check_tools(const LocalPlan& plan);

    // apt-cacher-ng bound to the bridge address (only Debian/Ubuntu archives pass; the cache is shared
    // by all clusters under /var/cache/ddl). Nothing to do when the spec names its own proxy.
    Status ensure_apt_proxy();
    void stop_apt_proxy();

    // The nodes' image exists in podman's store: built (debootstrap through the proxy, then imported)
    // under a machine-wide lock the first time, reused afterwards.
    Status ensure_image();

    // Files the node's container mounts: sshd_config for the container's paths and apt's proxy setting.
    Status write_node_files(const std::string& dir);
    // The node's container is running (created, or started again after a stop).
    Status ensure_running(const LocalNodePlan& node, const std::string& dir);
    // Removes the node's container whatever its state; absent is fine.
    Status remove(const LocalNodePlan& node);

private:
    Command podman(std::vector<std::string> args) const;
    std::string proxy_dir() const;
    Status build_image();
    Status wait_for_sshd(const LocalNodePlan& node) const;

    const Context& m_ctx;
    const LocalPlan& m_plan;
};

} // namespace ddl
