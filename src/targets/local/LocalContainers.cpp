#include "targets/local/LocalContainers.hpp"

#include "core/Log.hpp"
#include "util/FileLock.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace ddl {
namespace {

const char* k_image_dir = "/var/lib/ddl/images";
const char* k_cache_dir = "/var/cache/ddl/apt-cacher-ng";
// What a node needs before Ansible can reach it: an init, sshd, python3 for the modules, and the tools
// the roles call; everything else the roles install through apt.
const char* k_image_packages = "systemd,systemd-sysv,dbus,openssh-server,python3,python3-apt,iproute2,"
                               "iputils-ping,ca-certificates,gnupg,curl,sudo,procps,kmod,pciutils";

bool tcp_port_open(const std::string& address, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    bool ok = inet_pton(AF_INET, address.c_str(), &sa.sin_addr) == 1 &&
              connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    close(fd);
    return ok;
}

// The pid in `pid_file` when that process is alive and its command line mentions `marker`.
std::optional<pid_t> live_pid(const std::string& pid_file, const std::string& marker) {
    auto text = read_file(pid_file);
    if (!text) return std::nullopt;
    auto pid = parse_int(trim(*text));
    if (!pid || *pid <= 1) return std::nullopt;
    auto cmdline = read_file("/proc/" + std::to_string(*pid) + "/cmdline");
    if (!cmdline || cmdline->find(marker) == std::string::npos) return std::nullopt;
    return static_cast<pid_t>(*pid);
}

// The apt-cacher-ng processes started with `-c dir`, found by their command line: the pid file may be gone
// with the state folder (`ddl gc` of a cluster whose folder was thrown away).
std::vector<pid_t> proxy_processes(const std::string& dir) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
        auto pid = parse_int(it->path().filename().string());
        if (!pid || *pid <= 1) continue;
        auto cmdline = read_file(it->path().string() + "/cmdline");
        if (!cmdline) continue; // gone meanwhile
        const auto argv = split(*cmdline, '\0');
        if (argv.empty() || std::filesystem::path(argv[0]).filename() != "apt-cacher-ng") continue;
        for (std::size_t i = 1; i + 1 < argv.size(); ++i)
            if (argv[i] == "-c" && argv[i + 1] == dir) out.push_back(static_cast<pid_t>(*pid));
    }
    return out;
}

// Detaches every mount below `dir` (deepest first): debootstrap mounts /proc and /sys inside its target
// and leaves them there when it is killed; removing the tree with them attached would reach the machine's.
Status unmount_below(const std::string& dir) {
    auto info = read_file("/proc/self/mountinfo");
    if (!info) return info.error();
    std::vector<std::string> points;
    for (const auto& line : split_lines(*info)) {
        auto fields = split(line, ' ');
        if (fields.size() < 5) continue;
        // mountinfo escapes blanks as octal (\040); a build folder's mounts never contain any.
        if (starts_with(fields[4], dir + "/")) points.push_back(fields[4]);
    }
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& p : points) {
        if (umount2(p.c_str(), MNT_DETACH) != 0)
            return Error{"cannot unmount " + p +
                         " (left by an interrupted image build): " + std::strerror(errno)};
    }
    return {};
}

} // namespace

Status LocalContainers::check_tools(const LocalPlan& plan) {
    std::vector<std::pair<std::string, std::string>> tools{{"podman", "podman"}, {"runc", "runc"}};
    if (plan.image == k_default_node_image) {
        tools.emplace_back("debootstrap", "debootstrap");
        tools.emplace_back("tar", "tar");
    }
    if (plan.own_apt_proxy) tools.emplace_back("apt-cacher-ng", "apt-cacher-ng");
    std::vector<std::string> missing;
    std::vector<std::string> packages;
    for (const auto& [tool, package] : tools) {
        if (find_in_path(tool).empty() && access(("/usr/sbin/" + tool).c_str(), X_OK) != 0) {
            missing.push_back(tool);
            packages.push_back(package);
        }
    }
    if (missing.empty()) return {};
    return Error{"local.nodes_as: containers needs " + join(missing, ", ") +
                 " on this machine; install with: apt-get install " + join(packages, " ")};
}

Command LocalContainers::podman(std::vector<std::string> args) const {
    // crun cannot run containers here (no CAP_SYS_RESOURCE, hybrid cgroups); runc can.
    Command c{.argv = {"podman", "--runtime", "runc"}};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.timeout = std::chrono::minutes(2);
    return c;
}

std::string LocalContainers::proxy_dir() const {
    return m_ctx.cluster_dir() + "/apt-proxy";
}

Status LocalContainers::ensure_apt_proxy() {
    if (!m_plan.own_apt_proxy) return {};
    const std::string dir = proxy_dir();
    if (live_pid(dir + "/pid", dir) && tcp_port_open(m_plan.bridge_address, k_apt_proxy_port)) return {};
    for (const auto& d : {dir, std::string(k_cache_dir)}) {
        if (auto s = make_dirs(d, 0755); !s) return s;
    }
    // A configuration of its own: no remapping to the distribution's mirror lists (their default mirrors
    // may not resolve here), so a request goes to the host the node asked for, and only archive paths
    // pass (anything else gets 403: not an open proxy).
    std::string conf =
        "# Written by ddl for cluster " + m_plan.cluster +
        "\n"
        "CacheDir: " +
        std::string(k_cache_dir) + "\nLogDir: " + dir + "\nPidFile: " + dir + "/pid\nSocketPath: " + dir +
        "/socket\nSupportDir: /usr/lib/apt-cacher-ng\nPort: " + std::to_string(k_apt_proxy_port) +
        "\nBindAddress: " + m_plan.bridge_address + "\nForeGround: 0\nExThreshold: 4\n";
    if (auto s = write_file_atomic(dir + "/acng.conf", conf, 0644); !s) return s;
    if (auto s = m_ctx.run({.argv = {"apt-cacher-ng", "-c", dir}, .timeout = std::chrono::seconds(20)}); !s)
        return Error{"apt proxy: " + s.error().message};
    for (int i = 0; i < 100; ++i) {
        if (tcp_port_open(m_plan.bridge_address, k_apt_proxy_port)) return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Error{"apt proxy (apt-cacher-ng) does not answer on " + m_plan.bridge_address + ":" +
                 std::to_string(k_apt_proxy_port) + "; see " + dir + "/apt-cacher.err"};
}

void LocalContainers::stop_apt_proxy() {
    const std::string dir = proxy_dir();
    for (pid_t pid : proxy_processes(dir))
        kill(pid, SIGTERM);
    for (int i = 0; i < 40 && !proxy_processes(dir).empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (pid_t pid : proxy_processes(dir))
        kill(pid, SIGKILL);
}

Status LocalContainers::ensure_image() {
    auto exists = [&] {
        auto r = m_ctx.proc.run(podman({"image", "exists", m_plan.image}));
        return r && r->success();
    };
    if (exists()) return {};
    if (m_plan.image != k_default_node_image)
        return Error{"local.image " + m_plan.image +
                     " is not in podman's image store; load it first (podman pull, podman load or podman "
                     "import), or leave local.image out and ddl builds a Debian 12 node image"};
    if (auto s = make_dirs(k_image_dir, 0700); !s) return s;
    // Two deploys at once build it once: the second finds it after waiting for the lock.
    FileLock lock(std::string(k_image_dir) + "/lock");
    if (!lock.held()) return Error{std::string("cannot lock ") + k_image_dir + "/lock"};
    if (exists()) return {};
    return build_image();
}

Status LocalContainers::build_image() {
    const std::string work = std::string(k_image_dir) + "/build";
    // A build killed half way leaves its tree behind; under the lock nobody else uses it.
    if (auto s = unmount_below(work); !s) return s;
    if (auto s = remove_tree(work); !s) return s;
    if (auto s = make_dirs(work, 0700); !s) return s;
    const std::string rootfs = work + "/rootfs";
    m_ctx.progress.note("building the container nodes' image " + m_plan.image +
                        " (debootstrap of Debian 12, once per machine; about 2 minutes)");
    Command boot{.argv = {"debootstrap", "--variant=minbase", std::string("--include=") + k_image_packages,
                          "bookworm", rootfs, m_plan.mirror},
                 .timeout = std::chrono::minutes(30)};
    boot.env_set["http_proxy"] = m_plan.apt_proxy;
    auto booted = m_ctx.run(boot);
    if (auto s = unmount_below(work); !s) return s;
    if (!booted) return Error{"building the node image: " + booted.error().message};
    kill_point("provision:image-bootstrapped");
    // Every node gets its own host key from ddl (pinned in known_hosts); none may share the image's.
    auto keys = m_ctx.proc.run({.argv = {"find", rootfs + "/etc/ssh", "-name", "ssh_host_*", "-delete"}});
    if (!keys || !keys->success()) return Error{"cannot remove the image's SSH host keys"};
    // systemd makes a machine id per container when the file is empty.
    if (auto s = write_file_atomic(rootfs + "/etc/machine-id", "", 0444); !s) return s;
    std::string sources =
        "deb " + m_plan.mirror + " bookworm main\ndeb " + m_plan.mirror + " bookworm-updates main\n";
    if (ends_with(m_plan.mirror, "/debian"))
        sources += "deb " + m_plan.mirror + "-security bookworm-security main\n";
    if (auto s = write_file_atomic(rootfs + "/etc/apt/sources.list", sources, 0644); !s) return s;
    const std::string wants = rootfs + "/etc/systemd/system/multi-user.target.wants";
    if (auto s = make_dirs(wants, 0755); !s) return s;
    if (!path_exists(wants + "/ssh.service") &&
        symlink("/lib/systemd/system/ssh.service", (wants + "/ssh.service").c_str()) != 0)
        return Error{"cannot enable ssh.service in the node image"};
    (void)remove_tree(rootfs + "/var/cache/apt/archives");
    (void)make_dirs(rootfs + "/var/cache/apt/archives/partial", 0755);
    if (auto s =
            m_ctx.run({.argv = {"tar", "--numeric-owner", "-C", rootfs, "-cf", work + "/rootfs.tar", "."},
                       .timeout = std::chrono::minutes(10)});
        !s)
        return s;
    if (auto s = m_ctx.run(
            podman({"import", "--change", "CMD [\"/sbin/init\"]", work + "/rootfs.tar", m_plan.image}));
        !s)
        return Error{"importing the node image: " + s.error().message};
    kill_point("provision:image-imported");
    (void)remove_tree(work);
    return {};
}

Status LocalContainers::write_node_files(const std::string& dir) {
    std::string apt =
        "// Written by ddl: packages come through the cluster's apt proxy.\nAcquire::http::Proxy \"" +
        m_plan.apt_proxy + "\";\n";
    // Nodes follow the machine's own policy on stale Release files (a snapshot mirror's are old).
    auto valid = m_ctx.proc.run({.argv = {"apt-config", "dump", "Acquire::Check-Valid-Until"}});
    if (valid && valid->success() && valid->out.find("\"false\"") != std::string::npos)
        apt += "Acquire::Check-Valid-Until \"false\";\n";
    if (auto s = write_file_atomic(dir + "/apt-proxy.conf", apt, 0644); !s) return s;
    // Each node its own machine id, kept across restarts (systemd would derive the same one for every
    // container from the machine's DMI product UUID).
    if (path_exists(dir + "/machine-id")) return {};
    unsigned char random[16];
    if (getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random))
        return Error{"cannot get random bytes for a machine id"};
    std::string id;
    for (unsigned char c : random) {
        static const char* hex = "0123456789abcdef";
        id += hex[c >> 4];
        id += hex[c & 15];
    }
    return write_file_atomic(dir + "/machine-id", id + "\n", 0444);
}

Status LocalContainers::ensure_running(const LocalNodePlan& node, const std::string& dir) {
    auto state =
        m_ctx.proc.run(podman({"container", "inspect", "--format", "{{.State.Running}}", node.container}));
    if (state && state->success()) {
        if (trim(state->out) == "true") return {};
        if (auto s = m_ctx.run(podman({"start", node.container})); !s) return s;
        return wait_for_sshd(node);
    }
    std::vector<std::string> args{
        "run", "--detach", "--name", node.container, "--hostname", node.name, "--label",
        "ddl.cluster=" + m_plan.cluster, "--network", "ns:/run/netns/" + node.netns, "--systemd", "always",
        // The limits podman may set here: raising memlock needs CAP_SYS_RESOURCE, which this machine
        // withholds, so the nodes keep its own (NCCL wants it unlimited on GPU hosts).
        "--ulimit", "nofile=8192:8192", "--ulimit", "nproc=8192:8192", "--shm-size", "1g",
        // FUSE for the shared folder's fallback when the kernel has no NFS.
        "--device", "/dev/fuse", "--cap-add", "SYS_ADMIN", "--no-hosts", "--dns", "none", "--volume",
        dir + ":/etc/ddl-node:ro", "--volume", dir + "/sshd_config:/etc/ssh/sshd_config:ro",
        // ddl's host key where a machine keeps its own: Ansible's facts (ssh_mesh pins them) read it there.
        "--volume", dir + "/ssh_host_ed25519_key:/etc/ssh/ssh_host_ed25519_key:ro", "--volume",
        dir + "/ssh_host_ed25519_key.pub:/etc/ssh/ssh_host_ed25519_key.pub:ro", "--volume",
        dir + "/machine-id:/etc/machine-id:ro", "--volume", dir + "/resolv.conf:/etc/resolv.conf:ro",
        "--volume", dir + "/apt-proxy.conf:/etc/apt/apt.conf.d/00ddl-proxy:ro"};
    // Nothing of this machine's /usr: what the runtime needs on a node, the roles install there.
    args.insert(args.end(), {m_plan.image, "/sbin/init"});
    if (auto s = m_ctx.run(podman(args)); !s)
        return Error{"starting container " + node.container + ": " + s.error().message};
    // Copied, not mounted: the roles add their own block to it (a bind-mounted file cannot be replaced).
    if (auto s = m_ctx.run(podman({"cp", dir + "/hosts", node.container + ":/etc/hosts"})); !s) return s;
    return wait_for_sshd(node);
}

// Like a namespace node's sshd, which listens before its start returns: later phases (and a resumed
// deploy that skips wait-ssh) find the node reachable.
Status LocalContainers::wait_for_sshd(const LocalNodePlan& node) const {
    for (int i = 0; i < 600; ++i) {
        if (tcp_port_open(node.address, 22)) return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return Error{"container " + node.container + " runs but its sshd does not listen on " + node.address +
                 ":22 after 60 s; see `podman logs " + node.container + "` and `podman exec " +
                 node.container + " journalctl -u ssh`"};
}

Status LocalContainers::remove(const LocalNodePlan& node) {
    if (node.container.empty()) return {};
    auto r = m_ctx.proc.run(podman({"rm", "--force", "--ignore", "--time", "0", node.container}));
    if (!r) return r.error();
    if (!r->success()) return Error{"removing container " + node.container + ": " + trim(r->err)};
    return {};
}

} // namespace ddl
