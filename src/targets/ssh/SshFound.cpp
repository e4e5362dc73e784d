// `ddl gc --spec FILE` on the ssh target, from the hosts' side: configure writes /etc/ddl/node.env on every
// host, naming the cluster (DDL_CLUSTER) and the controller's state folder that configured it
// (DDL_STATE_DIR). gc asks each host of the spec for that file over OpenSSH, ages a cluster by the file's
// modification time (when that state folder last changed what it says), and removes what ddl installed
// with the same cleanup as `ddl destroy`. Host keys are learnt on first contact, as a first deploy does,
// and pinned between finding and removing.
#include "provision/Context.hpp"
#include "targets/ssh/SshTarget.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <map>

namespace ddl {
namespace {

// Prints the node file and its age in seconds (the host's own clock); nothing where there is none.
constexpr const char* k_ask = "f=/etc/ddl/node.env; if [ -r \"$f\" ]; then cat \"$f\"; "
                              "echo \"DDL_MARKER_AGE=$(( $(date +%s) - $(stat -c %Y \"$f\") ))\"; fi";

struct HostAddress {
    std::string user, host, key;
    int port = 22;
};

// Where ddl reaches host `h` of the spec, and its jump host.
struct Route {
    std::string name;
    HostAddress to;
    std::optional<HostAddress> via;
};

HostAddress address_of(const Spec& spec, const SshHost& h) {
    return {h.user.empty() ? spec.access.user : h.user, h.address,
            h.key.empty() ? spec.access.private_key : h.key, h.port};
}

Result<Route> route_of(const Spec& spec, const SshHost& h) {
    Route r{h.name, address_of(spec, h), std::nullopt};
    if (h.jump.empty()) return r;
    for (const auto& other : spec.target_section<SshTargetSpec>().hosts)
        if (other.name == h.jump) r.via = address_of(spec, other);
    if (!r.via) {
        auto ep = parse_jump_spec(h.jump, r.to.user);
        if (!ep) return Error{h.name + ": cannot read its jump host \"" + h.jump + "\""};
        r.via = HostAddress{ep->user, ep->host, r.to.key, ep->port};
    }
    return r;
}

nlohmann::json to_json(const HostAddress& a) {
    return {{"user", a.user}, {"host", a.host}, {"key", a.key}, {"port", a.port}};
}

HostAddress address_from(const nlohmann::json& j) {
    return {j.value("user", ""), j.value("host", ""), j.value("key", ""), j.value("port", 22)};
}

nlohmann::json to_json(const Route& r) {
    nlohmann::json j{{"name", r.name}, {"to", to_json(r.to)}};
    if (r.via) j["via"] = to_json(*r.via);
    return j;
}

Route route_from(const nlohmann::json& j) {
    Route r{j.value("name", ""), address_from(j.value("to", nlohmann::json::object())), std::nullopt};
    if (j.contains("via")) r.via = address_from(j["via"]);
    return r;
}

std::vector<std::string> options(const std::string& known_hosts, const std::string& checking) {
    return {"-o", "BatchMode=yes",
            "-o", "ConnectTimeout=15",
            "-o", "IdentitiesOnly=yes",
            "-o", "UserKnownHostsFile=" + known_hosts,
            "-o", "StrictHostKeyChecking=" + checking};
}

void append_login(std::vector<std::string>& argv, const HostAddress& a, bool forward) {
    for (const std::string& x : {std::string("-i"), a.key, std::string("-p"), std::to_string(a.port)})
        argv.push_back(x);
    if (forward) {
        argv.emplace_back("-W");
        argv.emplace_back("[%h]:%p");
    }
    for (const std::string& x : {std::string("-l"), a.user, a.host})
        argv.push_back(x);
}

// OpenSSH's argv running `command` on the route's host, through its jump host when it has one.
Command ssh_command(const Route& r, const std::string& known_hosts, const std::string& checking,
                    const std::string& command) {
    std::vector<std::string> argv{"ssh"};
    for (auto& o : options(known_hosts, checking))
        argv.push_back(std::move(o));
    if (r.via) {
        std::vector<std::string> proxy{"ssh"};
        for (auto& o : options(known_hosts, checking))
            proxy.push_back(std::move(o));
        append_login(proxy, *r.via, true);
        argv.emplace_back("-o");
        argv.push_back("ProxyCommand=" + shell_join(proxy));
    }
    append_login(argv, r.to, false);
    argv.push_back(command);
    return Command{.argv = argv, .timeout = std::chrono::seconds(120)};
}

// KEY=VALUE lines of the node file.
std::map<std::string, std::string> env_lines(const std::string& text) {
    std::map<std::string, std::string> out;
    for (const auto& line : split_lines(text)) {
        const auto eq = line.find('=');
        if (eq == std::string::npos || starts_with(line, "#")) continue;
        out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
    return out;
}

} // namespace

Result<std::vector<FoundCluster>> SshTarget::find_clusters(const Spec* given, ProcessRunner& proc) const {
    const Spec& spec = *given;
    TempDir dir("ddl-gc-ssh");
    const std::string known_hosts = dir.path() + "/known_hosts";
    std::map<std::string, FoundCluster> by_cluster;
    std::vector<std::string> unreachable;
    for (const auto& h : spec.target_section<SshTargetSpec>().hosts) {
        auto route = route_of(spec, h);
        if (!route) return route.error();
        const Command c = ssh_command(*route, known_hosts, "accept-new", k_ask);
        auto r = proc.run(c);
        if (!r) return r.error();
        if (!r->success()) {
            unreachable.push_back(h.name + " (" + h.address + "): " + describe_failure(c, *r));
            continue;
        }
        auto env = env_lines(r->out);
        const std::string cluster = env["DDL_CLUSTER"];
        const std::string state_dir = env["DDL_STATE_DIR"];
        if (cluster.empty()) continue; // nothing of ddl's
        // A node file without DDL_STATE_DIR (an older ddl): found with no folder, which gc leaves alone.
        auto& found = by_cluster[cluster];
        const long long age = parse_int(env["DDL_MARKER_AGE"]).value_or(0);
        found.age_s = found.record.contains("hosts") ? std::min(found.age_s, age) : age;
        found.cluster = cluster;
        if (found.state_dir.empty()) found.state_dir = state_dir;
        found.record["hosts"].push_back(to_json(*route));
        found.record["script"] = cleanup_script(spec, cluster);
    }
    if (!unreachable.empty())
        return Error{"gc asks every host of " + spec.source_file + " for ddl's node file, and " +
                     std::to_string(unreachable.size()) + " did not answer (nothing was removed):\n      " +
                     join(unreachable, "\n      ")};
    const std::string pinned = read_file(known_hosts).value_or("");
    std::vector<FoundCluster> out;
    for (auto& entry : by_cluster) {
        auto& found = entry.second;
        std::vector<std::string> names;
        for (const auto& h : found.record["hosts"])
            names.push_back(h.value("name", ""));
        found.detail = "ddl's files on " + std::to_string(names.size()) + " host(s): " + join(names, ", ");
        found.record["known_hosts"] = pinned;
        out.push_back(std::move(found));
    }
    return out;
}

Status SshTarget::destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) {
    const std::string script = found.record.value("script", "");
    if (script.empty() || !found.record.contains("hosts"))
        return Error{"the record of " + found.cluster + " names no hosts"};
    TempDir dir("ddl-gc-ssh");
    const std::string known_hosts = dir.path() + "/known_hosts";
    if (auto s = write_file_atomic(known_hosts, found.record.value("known_hosts", ""), 0600); !s) return s;
    std::vector<std::string> failed;
    for (const auto& h : found.record["hosts"]) {
        const Route route = route_from(h);
        // The keys learnt while finding: a host that answers with another key now is not touched.
        const Command c = ssh_command(route, known_hosts, "yes", script);
        auto r = proc.run(c);
        std::string problem = !r ? r.error().message : r->success() ? "" : describe_failure(c, *r);
        if (!problem.empty()) failed.push_back(route.name + ": " + problem);
        progress.node(route.name,
                      problem.empty() ? "removed what ddl installed for " + found.cluster : problem);
    }
    if (!failed.empty()) return Error{join(failed, "; ")};
    return {};
}

} // namespace ddl
