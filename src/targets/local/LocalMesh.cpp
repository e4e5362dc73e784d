#include "targets/local/LocalMesh.hpp"

#include "remote/SshKeys.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <pwd.h>

namespace ddl {
namespace {

// Each node's own disk for datasets staged to: local (cli/Datasets.cpp puts them there).
const char* k_data_dir = "/var/lib/ddl/data";

} // namespace

std::string LocalMesh::root_ssh_dir() {
    const passwd* pw = getpwuid(0);
    const std::string home = pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "/root";
    return home + "/.ssh";
}

Result<std::string> LocalMesh::ensure_key() const {
    return ensure_keypair(key_path(), "ddl-mesh-" + m_plan.cluster);
}

Result<std::string> LocalMesh::authorized_line() const {
    auto pub = read_file(key_path() + ".pub");
    if (!pub) return pub.error();
    std::vector<std::string> from;
    for (const auto& n : m_plan.nodes) {
        const auto addrs = LocalPlan::addresses(n);
        from.insert(from.end(), addrs.begin(), addrs.end());
    }
    return "from=\"" + join(from, ",") + "\" " + trim(*pub) + "\n";
}

std::vector<std::pair<std::string, std::string>> LocalMesh::mounts(const std::string& node) const {
    std::vector<std::pair<std::string, std::string>> out{{node_dir(node) + "/dot_ssh", root_ssh_dir()},
                                                         {node_dir(node) + "/data", k_data_dir}};
    if (m_ctx.spec.services.nfs)
        out.emplace_back(m_ctx.cluster_dir() + "/shared", m_ctx.spec.services.nfs_mount);
    return out;
}

std::vector<std::string> LocalMesh::mountpoints() const {
    std::vector<std::string> out{root_ssh_dir(), k_data_dir};
    if (m_ctx.spec.services.nfs) out.push_back(m_ctx.spec.services.nfs_mount);
    return out;
}

Status LocalMesh::write_ssh_folders() const {
    auto key = read_file(key_path());
    auto pub = read_file(key_path() + ".pub");
    if (!key) return key.error();
    if (!pub) return pub.error();
    // Every name a user or a hostfile may use for a node: its name, the cluster-prefixed name in
    // /etc/hosts, and its addresses.
    std::string known;
    std::vector<std::string> patterns;
    for (const auto& n : m_plan.nodes) {
        auto host_key = read_file(node_dir(n.name) + "/ssh_host_ed25519_key.pub");
        if (!host_key) return host_key.error();
        const auto fields = split(trim(*host_key), ' ');
        if (fields.size() < 2) return Error{"host key of node " + n.name + " is malformed"};
        std::vector<std::string> names{n.name, m_plan.cluster + "-" + n.name};
        for (const auto& a : LocalPlan::addresses(n))
            names.push_back(a);
        known += join(names, ",") + " " + fields[0] + " " + fields[1] + "\n";
        patterns.insert(patterns.end(), names.begin(), names.end());
    }
    const std::string config = "# Written by ddl: node-to-node SSH in local cluster " + m_plan.cluster +
                               " (this folder is the node's own ~/.ssh).\n"
                               "Host " +
                               join(patterns, " ") +
                               "\n"
                               "    User root\n"
                               "    IdentityFile ~/.ssh/id_ed25519\n"
                               "    IdentitiesOnly yes\n"
                               "    UserKnownHostsFile ~/.ssh/known_hosts\n"
                               "    StrictHostKeyChecking yes\n"
                               "    BatchMode yes\n";
    for (const auto& n : m_plan.nodes) {
        const std::string dir = node_dir(n.name) + "/dot_ssh";
        if (auto s = make_dirs(dir, 0700); !s) return s;
        for (const auto& [name, content, mode] :
             std::vector<std::tuple<std::string, std::string, mode_t>>{{"id_ed25519", *key, 0600},
                                                                       {"id_ed25519.pub", *pub, 0644},
                                                                       {"known_hosts", known, 0644},
                                                                       {"config", config, 0600}}) {
            if (auto s = write_file_atomic(dir + "/" + name, content, mode); !s) return s;
        }
    }
    return {};
}

} // namespace ddl
