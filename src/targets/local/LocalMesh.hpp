#pragma once
// What makes namespace nodes of the local target behave like separate machines for tools that run on
// them: node-to-node SSH as mpirun, mpiexec and horovodrun use it (each node's own ~/.ssh with the
// cluster's mesh key and every node's host key pinned), a folder shared by all nodes at the spec's NFS
// mount path (the local stand-in for the NFS roles, which namespace nodes do not get), and each node's
// own /var/lib/ddl/data (where datasets staged to: local go, one copy per node as on separate disks).
// Container nodes get both from the Ansible roles instead.
#include "provision/Context.hpp"
#include "targets/local/LocalPlan.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ddl {

class LocalMesh {
public:
    LocalMesh(const Context& ctx, const LocalPlan& plan) : m_ctx(ctx), m_plan(plan) {}

    // The cluster's node-to-node key pair (made once, before the nodes fan out).
    [[nodiscard]] Result<std::string> ensure_key() const;
    // The authorized_keys line for the mesh key, usable only from the cluster's own addresses.
    [[nodiscard]] Result<std::string> authorized_line() const;
    // (host folder, path inside the node) bind mounts every namespace node gets.
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> mounts(const std::string& node) const;
    // Host folders the mounts need on this machine: created by provision when missing.
    [[nodiscard]] std::vector<std::string> mountpoints() const;
    // Writes every node's ~/.ssh (key, config, known_hosts of all nodes): after every node's host key
    // exists. The folders are bind-mounted already, so running nodes see the files at once.
    [[nodiscard]] Status write_ssh_folders() const;

    static std::string root_ssh_dir();

private:
    std::string key_path() const { return m_ctx.cluster_dir() + "/mesh_ed25519"; }
    std::string node_dir(const std::string& node) const { return m_ctx.cluster_dir() + "/nodes/" + node; }

    const Context& m_ctx;
    const LocalPlan& m_plan;
};

} // namespace ddl
