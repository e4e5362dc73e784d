#include "provision/Configure.hpp"

#include "core/Log.hpp"
#include "provision/NodeFiles.hpp"
#include "provision/RuntimeArchive.hpp"
#include "spec/TargetSection.hpp"
#include "util/CpuTime.hpp"
#include "util/Digest.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>

namespace ddl {
namespace {

std::string yaml_quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// Ansible's persistent SSH connections would outlive the run (and the cluster): close them now.
void stop_ssh_masters(const Context& ctx, const std::string& control_dir) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(control_dir, ec)) {
        (void)ctx.proc.run(
            {.argv = {"ssh", "-o", "ControlPath=" + e.path().string(), "-O", "exit", "ddl-node"},
             .timeout = std::chrono::seconds(5)});
    }
}

// Debian's ansible-mitogen: one persistent Python interpreter per node instead of a new SSH command and
// Python start per task (measured in bench/deploy_scaling.sh). DDL_ANSIBLE_STRATEGY names another strategy
// (e.g. `linear`, Ansible's own) where mitogen misbehaves.
constexpr const char* k_mitogen_strategies =
    "/usr/lib/python3/dist-packages/ansible_mitogen/plugins/strategy";

void choose_strategy(Command& c) {
    const char* chosen = std::getenv("DDL_ANSIBLE_STRATEGY");
    std::string strategy = chosen && *chosen ? chosen : "";
    if (strategy.empty() && path_exists(k_mitogen_strategies)) strategy = "mitogen_linear";
    if (strategy.empty()) return;
    if (strategy.rfind("mitogen", 0) == 0) c.env_set["ANSIBLE_STRATEGY_PLUGINS"] = k_mitogen_strategies;
    c.env_set["ANSIBLE_STRATEGY"] = strategy;
}

// The same "<st_dev>:<st_ino>\n<boot id>" the playbook reads on each node: a node that prints it shares
// this machine's root and kernel (a namespace node). Empty when unknown: then no node matches.
std::string controller_root() {
    struct stat st {};
    if (::stat("/", &st) != 0) return "";
    auto boot = read_file_limited("/proc/sys/kernel/random/boot_id", 256);
    if (!boot) return "";
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + "\n" + trim(*boot);
}

// Everything a configure run applies that is the same for every node: inventory (all nodes, how they are
// reached), the spec's variables, secrets, controller variables, pinned host keys (a replaced machine
// has new ones), the playbooks and the runtime they copy.
Result<std::string> shared_inputs(const Context& ctx, const std::string& dir,
                                  const std::string& rendered_vars, const nlohmann::json& controller_vars) {
    Digest d;
    d.add_file(dir + "/inventory.yml")
        .add_file(rendered_vars)
        .add_file(dir + "/secrets.json")
        .add(controller_vars.dump())
        .add_file(ctx.known_hosts_path());
    if (auto s = d.add_tree(data_dir() + "/playbooks"); !s) return s.error();
    if (auto s = d.add_tree(dist_dir()); !s) return s.error();
    return d.hex();
}

// Registry login for the training container's image: the user from DDL_REGISTRY_USER, the password from
// the file DDL_REGISTRY_PASSWORD_FILE names or from DDL_REGISTRY_PASSWORD (both read by Ansible on this
// machine and given to the engine on stdin); never the spec, the state or an argv.
Result<nlohmann::json> registry_login_vars(const Context& ctx) {
    auto env = [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v ? v : "");
    };
    std::string user = env("DDL_REGISTRY_USER"), file = env("DDL_REGISTRY_PASSWORD_FILE");
    std::string password = env("DDL_REGISTRY_PASSWORD");
    nlohmann::json vars{{"ddl_registry_user", ""}, {"ddl_registry_password_file", ""}};
    if (ctx.spec.runtime.image.empty() || user.empty()) {
        if (user.empty() && (!file.empty() || !password.empty()) && !ctx.spec.runtime.image.empty())
            return Error{
                "DDL_REGISTRY_PASSWORD_FILE or DDL_REGISTRY_PASSWORD is set but DDL_REGISTRY_USER is "
                "not; set the registry user too (or unset both for a public image)"};
        return vars;
    }
    if (file.empty() && password.empty())
        return Error{"DDL_REGISTRY_USER is set but no password: set DDL_REGISTRY_PASSWORD_FILE to a file "
                     "holding it (or DDL_REGISTRY_PASSWORD)"};
    if (!file.empty()) {
        if (!path_exists(file))
            return Error{"DDL_REGISTRY_PASSWORD_FILE names " + file + ", which does not exist"};
        if (auto text = read_file_limited(file, std::size_t{64} * 1024); text)
            log::register_secret(trim(*text));
        else
            return Error{"cannot read DDL_REGISTRY_PASSWORD_FILE " + file + ": " + text.error().message};
    } else {
        log::register_secret(password);
    }
    vars["ddl_registry_user"] = user;
    vars["ddl_registry_password_file"] = file;
    return vars;
}

} // namespace

std::string render_inventory(const Context& ctx) {
    std::string ssh_args = ctx.openssh_options();
    // Nodes the target makes on this machine (the local target's namespaces and containers): their SSH
    // sessions never leave this kernel, so the post-quantum half of OpenSSH's default key exchange
    // (sntrup761, 0.13 CPU-s in the client per connection here) protects nothing; the classical
    // curve25519 exchange is what ddl's own SSH client (libssh) uses with every node. Other targets
    // keep OpenSSH's default.
    const TargetSection* section = ctx.spec.section.get();
    if (section && section->nodes_are() != "machines")
        ssh_args += " -o KexAlgorithms=curve25519-sha256,curve25519-sha256@libssh.org";
    std::string out =
        "# Written by ddl from the cluster state; regenerated on every configure run.\nall:\n  vars:\n";
    out += "    ansible_ssh_private_key_file: " + yaml_quote(ctx.key_path()) + "\n";
    out += "    ansible_ssh_common_args: " + yaml_quote(ssh_args) + "\n";
    out += "    ansible_python_interpreter: /usr/bin/python3\n";
    // ansible-mitogen turns SSH compression on unless told otherwise; Ansible's own connection leaves it
    // off (OpenSSH's default). It cost the client 6 % of a 16-node configure's CPU here.
    out += "    mitogen_ssh_compression: false\n  children:\n";
    auto group = [&](const std::string& name, auto pred) {
        out += "    " + name + ":\n      hosts:\n";
        bool any = false;
        for (const auto& n : ctx.state.nodes) {
            if (!pred(n)) continue;
            any = true;
            out +=
                "        " + n.name + ":\n          ansible_host: " + yaml_quote(n.address) +
                "\n          ansible_port: " + std::to_string(n.port) +
                "\n          ansible_user: " + yaml_quote(n.user) + "\n" +
                (n.key.empty() ? "" : "          ansible_ssh_private_key_file: " + yaml_quote(n.key) + "\n") +
                "          ddl_cluster_address: " + yaml_quote(n.cluster_address()) + "\n";
            if (auto j = ctx.jump_endpoint(n))
                out += "          ansible_ssh_common_args: " +
                       yaml_quote(ssh_args + " -o ProxyCommand=\"" + ctx.openssh_proxy_command(*j) + "\"") +
                       "\n";
        }
        if (!any)
            out.replace(out.size() - std::string("      hosts:\n").size(), std::string::npos,
                        "      hosts: {}\n");
    };
    group("master", [](const NodeState& n) { return n.group == "master"; });
    group("workers", [](const NodeState& n) { return n.group != "master"; });
    group("gpu", [](const NodeState& n) { return n.gpus > 0; });
    return out;
}

Result<AnsibleSummary> parse_ansible_events(const std::string& out) {
    AnsibleSummary s;
    bool have_stats = false;
    for (const auto& line : split_lines(out)) {
        if (line.empty() || line.front() != '{') continue;
        auto ev = nlohmann::json::parse(line, nullptr, false);
        if (ev.is_discarded() || !ev.is_object()) continue;
        std::string kind = ev.value("event", "");
        if (kind == "result") {
            std::string status = ev.value("status", "");
            if (status == "failed" || status == "unreachable")
                s.failed_tasks.push_back(ev.value("host", "?") + ": " + ev.value("task", "?") + ": " +
                                         trim(ev.value("msg", "")));
        } else if (kind == "stats" && ev.contains("hosts")) {
            have_stats = true;
            const auto& hosts = ev.at("hosts");
            for (auto h = hosts.begin(); h != hosts.end(); ++h) {
                s.changed[h.key()] = h->value("changed", 0);
                s.failures[h.key()] = h->value("failures", 0) + h->value("unreachable", 0);
            }
        }
    }
    if (!have_stats) return Error{"ansible-playbook ended without a result"};
    return s;
}

namespace {

// A node's configure inputs: the inputs every node shares (digest), the node's name and its identity file.
std::string node_inputs(const Context& ctx, const std::string& shared, const NodeState& node) {
    return Digest{}.add(shared).add(node.name).add(node_env(ctx, node)).hex();
}

// What Ansible gets through the 0600 secrets file: the Jupyter token and, with autostop.node_credential,
// what the target wrote for the master (ddl_cloud_env, ddl_cloud_ca; its secret_keys' values are log
// secrets).
Result<nlohmann::json> secrets_vars(const Context& ctx) {
    nlohmann::json vars = {{"ddl_jupyter_token", ctx.state.jupyter_token}};
    const std::string path = ctx.node_credential_path();
    if (!ctx.spec.life.autostop.node_credential || !path_exists(path)) return vars;
    auto text = read_file(path);
    if (!text) return text.error();
    auto cred = nlohmann::json::parse(*text, nullptr, false);
    if (!cred.is_object() || !cred.contains("env") || !cred["env"].is_object())
        return Error{path + " is not what the target writes ({\"env\": {...}}): run `ddl deploy` again to "
                            "write it anew"};
    register_node_credential_secrets(cred);
    vars["ddl_cloud_env"] = cred["env"];
    vars["ddl_cloud_ca"] = cred.value("ca_pem", std::string());
    return vars;
}

bool nodes_unchanged(const Context& ctx, const std::string& shared) {
    const auto& nodes = ctx.state.nodes;
    if (nodes.empty()) return false;
    return std::all_of(nodes.begin(), nodes.end(), [&](const NodeState& n) {
        return n.configured_inputs == node_inputs(ctx, shared, n);
    });
}

} // namespace

void register_node_credential_secrets(const nlohmann::json& credential) {
    const auto keys = credential.find("secret_keys");
    const auto env = credential.find("env");
    if (keys == credential.end() || !keys->is_array() || env == credential.end() || !env->is_object()) return;
    for (const auto& key : *keys) {
        if (!key.is_string()) continue;
        const auto value = env->find(key.get<std::string>());
        if (value != env->end() && value->is_string()) log::register_secret(value->get<std::string>());
    }
}

Result<AnsibleSummary> run_configure(Context& ctx) {
    std::string playbook = data_dir() + "/playbooks/site.yml";
    if (!path_exists(playbook)) {
        ctx.progress.note("    no playbooks/site.yml under " + data_dir() + ": nothing to configure");
        return AnsibleSummary{};
    }
    std::string dir = ctx.cluster_dir() + "/ansible";
    if (auto s = make_dirs(dir, 0700); !s) return s.error();
    if (auto s = write_file_atomic(dir + "/inventory.yml", render_inventory(ctx), 0600); !s) return s.error();
    if (auto s = write_file_atomic(dir + "/vars.json", ctx.spec.to_json().dump(2), 0600); !s)
        return s.error();
    auto rendered_vars = ctx.cluster_dir() + "/rendered/ansible/vars.json";
    // Secrets reach Ansible through a 0600 file, never through its argv (visible in ps).
    std::string secrets = dir + "/secrets.json";
    auto secret_vars = secrets_vars(ctx);
    if (!secret_vars) return secret_vars.error();
    if (auto s = write_file_atomic(secrets, secret_vars->dump(), 0600); !s) return s.error();
    auto login = registry_login_vars(ctx);
    if (!login) return login.error();
    nlohmann::json controller_vars = *login;
    controller_vars["ddl_dist_dir"] = dist_dir();
    controller_vars["ddl_controller_root"] = controller_root();
    Command c{.argv = {"ansible-playbook", "-i", dir + "/inventory.yml", playbook, "-e", "@" + rendered_vars,
                       "-e", "@" + secrets, "-e", controller_vars.dump()},
              .cwd = data_dir() + "/playbooks",
              .env_set = {{"ANSIBLE_CONFIG", data_dir() + "/playbooks/ansible.cfg"},
                          {"ANSIBLE_PIPELINING", "True"},
                          {"ANSIBLE_FORKS", std::to_string(std::max<std::size_t>(4, ctx.state.nodes.size()))},
                          {"ANSIBLE_HOST_KEY_CHECKING", "True"},
                          {"ANSIBLE_SSH_ARGS", "-o ControlMaster=auto -o ControlPersist=60s"},
                          {"ANSIBLE_SSH_CONTROL_PATH_DIR", dir + "/cp"},
                          {"ANSIBLE_RETRY_FILES_ENABLED", "False"},
                          {"ANSIBLE_LOCAL_TEMP", dir + "/tmp"},
                          {"ANSIBLE_NOCOLOR", "1"}},
              .timeout = std::chrono::minutes(60)};
    choose_strategy(c);
    auto shared = shared_inputs(ctx, dir, rendered_vars, controller_vars);
    if (!shared) return shared.error();
    if (!ctx.options.force_configure && nodes_unchanged(ctx, *shared)) {
        ctx.progress.note("    nothing to apply: playbooks, variables, runtime and nodes are as at the last "
                          "configure on all " +
                          std::to_string(ctx.state.nodes.size()) +
                          " node(s); Ansible not run (--force-configure runs it anyway)");
        return AnsibleSummary{};
    }
    for (auto& n : ctx.state.nodes)
        n.configured_inputs.clear();
    // The runtime goes to the nodes as one archive, packed in memory for this run.
    auto archive = pack_runtime(dist_dir());
    if (!archive) return archive.error();
    // The runtime and each node's identity file come first, over ddl's own SSH (one command per node
    // instead of four Ansible tasks); the roles after may use the runtime (the training container mounts
    // it), and a cluster that fails in a role can still be found by its identity file (`ddl gc --spec`).
    auto identity = write_node_files(
        ctx,
        [&](const NodeState& n) {
            return std::vector<NodeFile>{{"/etc/ddl/node.env", node_env(ctx, n)}};
        },
        *archive);
    if (!identity) return identity.error();
    kill_point("configure:before-ansible");
    // Ansible's ssh masters detach from it; adopting them counts their CPU in the phase's figure.
    OrphanReaper reaper;
    auto r = ctx.proc.run(c);
    kill_point("configure:after-ansible");
    stop_ssh_masters(ctx, dir + "/cp");
    reaper.reap_exited(300);
    if (!r) return r.error();
    (void)write_file_atomic(ctx.cluster_dir() + "/logs/ansible.jsonl", log::redact(r->out), 0600);
    (void)write_file_atomic(ctx.cluster_dir() + "/logs/ansible.stderr", log::redact(r->err), 0600);
    auto summary = parse_ansible_events(r->out);
    if (!summary) {
        return Error{"ansible-playbook failed (exit " + std::to_string(r->exit_code) +
                     "): " + trim(r->err.substr(r->err.size() > 600 ? r->err.size() - 600 : 0)) +
                     " (full log: " + ctx.cluster_dir() + "/logs/ansible.stderr)"};
    }
    if (!r->success()) {
        std::string detail =
            summary->failed_tasks.empty() ? "see the log" : join(summary->failed_tasks, "\n      ");
        return Error{"configure failed:\n      " + detail + "\n    (full log: " + ctx.cluster_dir() +
                     "/logs/ansible.jsonl)"};
    }
    for (const auto& [host, n] : *identity)
        summary->changed[host] += n;
    for (const auto& [host, n] : summary->changed)
        ctx.progress.node(host, std::to_string(n) + " change(s)");
    for (auto& n : ctx.state.nodes)
        n.configured_inputs = node_inputs(ctx, *shared, n);
    return summary;
}

} // namespace ddl
