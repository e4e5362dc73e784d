// Follows: what a cloud instance presents once booted — OpenSSH's sshd with the key pair's public key in
// the login user's authorized_keys, as cloud-init's SSH module installs it (cloud-init documentation,
// "Module reference", SSH: https://cloudinit.readthedocs.io/en/latest/reference/modules.html#ssh; sshd(8)
// "AUTHORIZED_KEYS FILE FORMAT": https://man.openbsd.org/sshd). Its own command line is ddl's test helper
// interface, nothing more: it makes the "machines" that the stand-ins for cloud tools (terraform, jFed,
// GPULab; each names the document it follows) hand out.
// It builds them with the real local target, so everything after provisioning runs for real:
//   ddl-fake-nodes up   --id ID --state-dir DIR --names master,worker1 --pubkey-file PUB [--bastion]
//                       [--no-sshd NAME,...] [--start NAME,...] [--replace NAME]
//   ddl-fake-nodes down --id ID --state-dir DIR
//   ddl-fake-nodes stop --id ID --state-dir DIR --names worker1,...
// `up` prints {"nodes":[{"name","public_address","private_address","port","user","netns","node_dir"}]};
// with --bastion only the first node has a public address, the others are reachable through it. The nodes
// named by --no-sshd have their own sshd stopped once they are made: such a node is a network namespace with
// its files (node_dir: etc_ddl, opt_ddl, hosts, hostname, resolv.conf) in which the caller runs what a
// container would run (the GPULab stand-in runs the job's command there); `down` ends whatever runs in it.
// `stop` powers the named nodes off as a stopped instance is: every process in the node ends and its links
// go down (it answers nothing), while its namespace, addresses, host key and files stay, and it is marked
// powered off (node_dir/powered-off). `up` keeps marked nodes off; `up --start NAME,...` boots those (links
// up, sshd started with the same host key), files as they were. `up --replace NAME` makes that one node
// anew (a new host key, empty folders: a new machine at its address) and keeps the others as they are.
#include "core/Log.hpp"
#include "targets/local/LocalTarget.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace {

class QuietProgress : public ddl::Progress {
public:
    void phase_start(const std::string&, const std::string&) override {}
    void phase_done(const std::string&, double, double, bool) override {}
    void phase_failed(const std::string&, const std::string&) override {}
    void node(const std::string& node, const std::string& message) override {
        std::cerr << "fake-nodes: " << node << ": " << message << "\n";
    }
    void note(const std::string& message) override { std::cerr << "fake-nodes: " << message << "\n"; }
};

// Every process in the node ends, as at power-off; then its links go down and it is marked powered off.
void power_off(ddl::ProcessRunner& proc, const std::string& netns, const std::string& node_dir) {
    for (int round = 0; round < 5; ++round) {
        auto pids = proc.run({.argv = {"ip", "netns", "pids", netns}});
        if (!pids || ddl::trim(pids->out).empty()) break;
        for (const auto& line : ddl::split_lines(pids->out))
            if (auto pid = ddl::parse_int(ddl::trim(line)); pid && *pid > 1)
                kill(static_cast<pid_t>(*pid), SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (const char* link : {"eth0", "eth1"})
        (void)proc.run({.argv = {"ip", "-n", netns, "link", "set", link, "down"}});
    (void)std::remove((node_dir + "/sshd.pid").c_str());
    (void)ddl::write_file_atomic(node_dir + "/powered-off", "stopped by ddl-fake-nodes stop\n", 0644);
}

int fail(const std::string& message) {
    std::cerr << "ddl-fake-nodes: " << message << "\n";
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Local-target nodes for the cloud-tool stand-ins in tests/fakes/"};
    app.require_subcommand(1);
    std::string id, state_dir, names_csv, pubkey_file;
    bool bastion = false;
    std::string no_sshd_csv;
    auto* up = app.add_subcommand("up", "create the nodes (idempotent)");
    auto* down = app.add_subcommand("down", "remove them (idempotent)");
    auto* stop = app.add_subcommand("stop", "power the named nodes off, keeping their files (idempotent)");
    for (auto* sub : {up, down, stop}) {
        sub->add_option("--id", id, "name of this set of nodes (becomes a local cluster name)")->required();
        sub->add_option("--state-dir", state_dir, "where the stand-in keeps their state")->required();
    }
    up->add_option("--names", names_csv, "node names, comma separated; the first is the bastion")->required();
    stop->add_option("--names", names_csv, "the nodes to power off, comma separated")->required();
    up->add_option("--pubkey-file", pubkey_file, "public key every node authorizes (root)")->required();
    up->add_flag("--bastion", bastion, "only the first node on the machine's bridge");
    up->add_option("--no-sshd", no_sshd_csv,
                   "nodes whose sshd is stopped once made (the caller runs its own)");
    std::string start_csv;
    up->add_option("--start", start_csv, "powered-off nodes to boot again (the others stay off)");
    std::string replace;
    up->add_option("--replace", replace,
                   "a node (by its --names position) made anew, with a new host key and empty folders");
    CLI11_PARSE(app, argc, argv);

    ddl::Spec spec;
    spec.name = id;
    spec.target = "local";
    spec.section = ddl::SectionBox(std::make_unique<ddl::LocalSpec>());
    spec.target_section<ddl::LocalSpec>().bastion = bastion;
    std::vector<std::string> names;
    for (const auto& n : ddl::split(names_csv, ','))
        if (!ddl::trim(n).empty()) names.push_back(ddl::trim(n));
    spec.target_section<ddl::LocalSpec>().nodes = static_cast<int>(names.empty() ? 1 : names.size());

    ddl::StateStore store(state_dir);
    ddl::SystemProcessRunner proc;
    ddl::LibsshExecutor remote;
    QuietProgress progress;
    auto loaded = store.exists(id) ? store.load(id) : ddl::Result<ddl::ClusterState>(ddl::ClusterState{});
    if (!loaded) return fail(loaded.error().message);
    ddl::ClusterState state = std::move(*loaded);
    state.cluster = id;
    state.target = "local";
    ddl::Context ctx{
        .spec = spec, .state = state, .store = store, .proc = proc, .remote = remote, .progress = progress};
    // The stand-in calling this applies a plan ddl already had approved (its prompt or -y).
    ctx.options.yes = true;
    ddl::LocalTarget target;

    if (down->parsed()) {
        if (!store.exists(id)) return 0;
        if (auto s = target.destroy(ctx); !s) return fail(s.error().message);
        if (auto s = store.remove(id); !s) return fail(s.error().message);
        return 0;
    }
    if (stop->parsed()) {
        if (!store.exists(id)) return fail("no nodes with id " + id + " in " + state_dir);
        for (const auto& n : state.nodes)
            if (std::find(names.begin(), names.end(), n.name) != names.end())
                power_off(proc, n.netns, ddl::LocalTarget::node_dir(ctx, n.name));
        return 0;
    }
    if (names.empty()) return fail("--names lists no node");
    if (auto s = target.preflight(ctx); !s) return fail(s.error().message);
    if (auto s = store.ensure_cluster_dir(id); !s) return fail(s.error().message);
    auto pub = ddl::read_file(pubkey_file);
    if (!pub || ddl::trim(*pub).rfind("ssh-", 0) != 0)
        return fail("--pubkey-file " + pubkey_file + " holds no OpenSSH public key");
    // The nodes authorize the caller's key; the local target reads it from the cluster folder. The
    // private half stays with the caller, so a marker stands in its place.
    if (auto s = ddl::write_file_atomic(ctx.key_path() + ".pub", ddl::trim(*pub) + "\n", 0644); !s)
        return fail(s.error().message);
    if (auto s = ddl::write_file_atomic(ctx.key_path(), "held by the caller of ddl-fake-nodes\n", 0600); !s)
        return fail(s.error().message);
    if (auto s = store.save(state); !s) return fail(s.error().message);
    for (const auto& n : ddl::split(start_csv, ','))
        if (!ddl::trim(n).empty())
            (void)std::remove((ddl::LocalTarget::node_dir(ctx, ddl::trim(n)) + "/powered-off").c_str());
    if (!replace.empty()) {
        // The local node at that position: the local target names its nodes master, worker1, ...
        const auto at = std::find(names.begin(), names.end(), replace);
        if (at == names.end() || static_cast<std::size_t>(at - names.begin()) >= state.nodes.size())
            return fail("--replace " + replace + ": no such node among --names");
        const std::string local = state.nodes[static_cast<std::size_t>(at - names.begin())].name;
        if (auto s = target.remove_for_replace(ctx, local); !s) return fail(s.error().message);
    }
    if (auto s = target.provision(ctx); !s) return fail(s.error().message);
    if (auto s = store.save(state); !s) return fail(s.error().message);
    for (const auto& n : state.nodes)
        if (ddl::path_exists(ddl::LocalTarget::node_dir(ctx, n.name) + "/powered-off"))
            power_off(proc, n.netns, ddl::LocalTarget::node_dir(ctx, n.name));
    {
        const auto no_sshd = ddl::split(no_sshd_csv, ',');
        for (std::size_t i = 0; i < state.nodes.size(); ++i) {
            const auto& n = state.nodes[i];
            if (std::find(no_sshd.begin(), no_sshd.end(), names[i]) == no_sshd.end()) continue;
            const std::string pidfile = ddl::LocalTarget::node_dir(ctx, n.name) + "/sshd.pid";
            auto pid = ddl::read_file(pidfile);
            auto value = pid ? ddl::parse_int(ddl::trim(*pid)) : std::nullopt;
            if (!value || *value < 2) return fail("node " + n.name + ": no sshd pid in " + pidfile);
            if (kill(static_cast<pid_t>(*value), SIGTERM) != 0 && errno != ESRCH)
                return fail("node " + n.name + ": cannot stop its sshd");
            // Gone before the caller starts its own listener on the same port.
            const std::string proc_dir = "/proc/" + std::to_string(*value);
            for (int wait = 0; wait < 100 && access(proc_dir.c_str(), F_OK) == 0; ++wait)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            (void)std::remove(pidfile.c_str());
        }
    }

    nlohmann::json out{{"nodes", nlohmann::json::array()}};
    for (std::size_t i = 0; i < state.nodes.size(); ++i) {
        const auto& n = state.nodes[i];
        out["nodes"].push_back({{"name", names[i]},
                                {"public_address", n.jump.empty() ? n.address : ""},
                                {"private_address", n.cluster_address()},
                                {"port", n.port},
                                {"user", n.user},
                                {"netns", n.netns},
                                {"node_dir", ddl::LocalTarget::node_dir(ctx, n.name)}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
}
