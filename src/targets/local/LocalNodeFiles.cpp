// The files that make a namespace node its own machine: hostname, hosts, sshd config and keys, /etc/ddl.
#include "core/Log.hpp"
#include "remote/SshKeys.hpp"
#include "targets/local/LocalContainers.hpp"
#include "targets/local/LocalMesh.hpp"
#include "targets/local/LocalTarget.hpp"
#include "util/FileLock.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <signal.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ddl {

namespace {

// A file a running node sees through a bind mount (its /etc/hosts): rewritten in place, so the node's view
// (which holds the inode, not the name) changes with it; a rename would leave the node the old file.
Status rewrite_in_place(const std::string& path, const std::string& content, mode_t mode) {
    if (!path_exists(path)) return write_file_atomic(path, content, mode);
    if (read_file(path).value_or("") == content) return {};
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return Error{"cannot open " + path + ": " + std::strerror(errno)};
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string why = std::strerror(errno);
            close(fd);
            return Error{"cannot write " + path + ": " + why};
        }
        done += static_cast<std::size_t>(n);
    }
    const bool synced = fsync(fd) == 0;
    close(fd);
    if (!synced) return Error{"cannot write " + path + ": " + std::strerror(errno)};
    return {};
}

} // namespace

Status LocalTarget::write_node_files(const Context& ctx, const LocalPlan& plan, std::size_t index) {
    const auto& node = plan.nodes[index];
    std::string dir = node_dir(ctx, node.name);
    for (const auto& sub : {dir, dir + "/etc_ddl", dir + "/opt_ddl"}) {
        if (auto s = make_dirs(sub, 0700); !s) return s;
    }
    chmod((dir + "/opt_ddl").c_str(), 0755);
    chmod((dir + "/etc_ddl").c_str(), 0755);
    std::string hosts = "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n";
    for (const auto& n : plan.nodes)
        hosts += n.private_address + " " + n.name + " " + plan.cluster + "-" + n.name + "\n";
    auto pub = read_file(ctx.key_path() + ".pub");
    if (!pub) return pub.error();
    std::string authorized_keys = trim(*pub) + "\n";
    const LocalMesh mesh(ctx, plan);
    if (!plan.containers) {
        auto line = mesh.authorized_line();
        if (!line) return line.error();
        authorized_keys += *line;
        if (auto s = make_dirs(dir + "/dot_ssh", 0700); !s) return s;
        if (auto s = make_dirs(dir + "/data", 0755); !s) return s;
    }
    auto host_key = ensure_keypair(dir + "/ssh_host_ed25519_key", "host-" + node.name);
    if (!host_key) return host_key.error();
    // A container node sees this folder at /etc/ddl-node (read-only) and has a root file system of its own,
    // where the roles may add keys to root's authorized_keys (the cluster's node-to-node key).
    const std::string seen = plan.containers ? "/etc/ddl-node" : dir;
    const std::string pid_line = plan.containers ? "" : "PidFile " + dir + "/sshd.pid\n";
    const std::string authorized =
        plan.containers ? seen + "/authorized_keys .ssh/authorized_keys" : seen + "/authorized_keys";
    std::string listen;
    for (const auto& a : LocalPlan::addresses(node))
        listen += "ListenAddress " + a + "\n";
    std::string sshd_config = "# Written by ddl for node " + node.name + " of cluster " + plan.cluster +
                              "\n" + listen +
                              "Port 22\n"
                              "HostKey " +
                              (plan.containers ? std::string("/etc/ssh") : seen) + "/ssh_host_ed25519_key\n" +
                              pid_line + "AuthorizedKeysFile " + authorized +
                              "\n"
                              "PermitRootLogin prohibit-password\n"
                              "PubkeyAuthentication yes\n"
                              "PasswordAuthentication no\n"
                              "KbdInteractiveAuthentication no\n"
                              "UsePAM yes\n"
                              "StrictModes no\n"
                              "UseDNS no\n"
                              "MaxStartups 200:30:400\n"
                              "MaxSessions 128\n"
                              "AcceptEnv DDL_*\n"
                              "Subsystem sftp internal-sftp\n";
    std::string resolv = "# Names resolve from /etc/hosts; nothing answers here, so lookups fail at once.\n"
                         "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n";
    std::string init = "#!/bin/sh\n# Runs inside the node's private mount and UTS namespaces, then becomes "
                       "its sshd.\nset -eu\n";
    std::vector<std::pair<std::string, std::string>> mounts{{dir + "/etc_ddl", "/etc/ddl"},
                                                            {dir + "/opt_ddl", "/opt/ddl"},
                                                            {dir + "/hosts", "/etc/hosts"},
                                                            {dir + "/hostname", "/etc/hostname"},
                                                            {dir + "/resolv.conf", "/etc/resolv.conf"}};
    if (!plan.containers) {
        const auto more = mesh.mounts(node.name);
        mounts.insert(mounts.end(), more.begin(), more.end());
    }
    for (const auto& [src, dst] : mounts)
        init += "mount --bind " + shell_quote(src) + " " + shell_quote(dst) + "\n";
    init +=
        "if [ -e /root/.bashrc ]; then mount --bind " + shell_quote(dir + "/bashrc") + " /root/.bashrc; fi\n";
    init += "hostname " + shell_quote(node.name) + "\n";
    init += "exec " + std::string(k_sshd) + " -f " + shell_quote(dir + "/sshd_config") + "\n";
    struct F {
        std::string name, content;
        mode_t mode;
    };
    // Every node's /etc/hosts names every node: a grown cluster's running nodes learn the new names.
    if (auto s = rewrite_in_place(dir + "/hosts", hosts, 0644); !s) return s;
    for (const auto& f : std::vector<F>{{"hostname", node.name + "\n", 0644},
                                        {"resolv.conf", resolv, 0644},
                                        {"bashrc", "", 0644},
                                        {"authorized_keys", authorized_keys, 0600},
                                        {"sshd_config", sshd_config, 0600},
                                        {"init.sh", init, 0700}}) {
        if (auto s = write_file_atomic(dir + "/" + f.name, f.content, f.mode); !s) return s;
    }
    if (plan.containers) return LocalContainers(ctx, plan).write_node_files(dir);
    return {};
}

} // namespace ddl
