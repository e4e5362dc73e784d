#include "provision/Context.hpp"

#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cstdlib>

namespace ddl {

std::optional<SshEndpoint> parse_jump_spec(const std::string& text, const std::string& default_user) {
    // user@host:port, user@[v6]:port, host, ...
    SshEndpoint ep;
    std::string rest = text;
    if (auto at = rest.find('@'); at != std::string::npos) {
        ep.user = rest.substr(0, at);
        rest = rest.substr(at + 1);
    } else {
        ep.user = default_user;
    }
    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        if (close == std::string::npos) return std::nullopt;
        ep.host = rest.substr(1, close - 1);
        rest = rest.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return std::nullopt;
        if (!rest.empty()) rest = rest.substr(1);
    } else if (auto colon = rest.find(':');
               colon != std::string::npos && rest.find(':', colon + 1) == std::string::npos) {
        ep.host = rest.substr(0, colon);
        rest = rest.substr(colon + 1);
    } else {
        ep.host = rest;
        rest.clear();
    }
    if (!rest.empty()) {
        auto port = parse_int(rest);
        if (!port || *port < 1 || *port > 65535) return std::nullopt;
        ep.port = static_cast<int>(*port);
    }
    if (ep.host.empty() || ep.user.empty()) return std::nullopt;
    return ep;
}

std::optional<SshEndpoint> Context::jump_endpoint(const NodeState& node) const {
    if (node.jump.empty()) return std::nullopt;
    if (const NodeState* j = state.node(node.jump)) return endpoint(*j);
    // A bastion outside the cluster (ssh target: user@host:port), logged into with the node's key or the
    // one given for the jump.
    auto ep = parse_jump_spec(node.jump, node.user);
    if (!ep) return std::nullopt;
    ep->key_path = !node.jump_key.empty() ? node.jump_key : node.key.empty() ? key_path() : node.key;
    ep->known_hosts_path = known_hosts_path();
    return ep;
}

std::string Context::openssh_options() const {
    return "-o UserKnownHostsFile=" + known_hosts_path() +
           " -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes";
}

std::string Context::openssh_proxy_command(const SshEndpoint& jump) const {
    return "ssh -i " + jump.key_path + " " + openssh_options() + " -o BatchMode=yes -p " +
           std::to_string(jump.port) + " -W [%h]:%p -l " + jump.user + " " + jump.host;
}

SshEndpoint Context::endpoint(const NodeState& node) const {
    SshEndpoint ep;
    ep.host = node.address;
    ep.port = node.port;
    ep.user = node.user;
    ep.key_path = node.key.empty() ? key_path() : node.key;
    ep.known_hosts_path = known_hosts_path();
    if (auto j = jump_endpoint(node)) ep.jump = std::make_shared<SshEndpoint>(std::move(*j));
    return ep;
}

Status Context::run(const Command& cmd) const {
    auto r = proc.run(cmd);
    if (!r) return r.error();
    if (!r->success()) return Error{describe_failure(cmd, *r)};
    return {};
}

Result<ProcessResult> Context::run_capture(const Command& cmd) const {
    return proc.run(cmd);
}

std::string data_dir() {
    if (const char* env = std::getenv("DDL_DATA_DIR"); env && *env) return env;
    if (path_exists(std::string(DDL_DATA_DIR_DEFAULT) + "/playbooks")) return DDL_DATA_DIR_DEFAULT;
    return "/usr/local/share/ddl";
}

} // namespace ddl

namespace ddl {

std::string dist_dir() {
    if (const char* env = std::getenv("DDL_DIST_DIR"); env && *env) return env;
    return DDL_DIST_DIR_DEFAULT;
}

Status Context::approve_destructive(const std::string& what, const std::vector<std::string>& changes) {
    if (changes.empty() || options.yes) return {};
    if (approve) return approve(what, changes);
    approval_needs_yes = true;
    return Error{what + " would change " + std::to_string(changes.size()) +
                 " existing resource(s); run again with -y to approve"};
}

} // namespace ddl
