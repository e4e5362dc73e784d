#include "provision/Context.hpp"

#include "util/Files.hpp"

#include <cstdlib>

namespace ddl {

SshEndpoint Context::endpoint(const NodeState& node) const {
    SshEndpoint ep;
    ep.host = node.address;
    ep.port = node.port;
    ep.user = node.user;
    ep.key_path = node.key.empty() ? key_path() : node.key;
    ep.known_hosts_path = known_hosts_path();
    if (!node.jump.empty()) {
        if (const NodeState* j = state.node(node.jump)) ep.jump = std::make_shared<SshEndpoint>(endpoint(*j));
    }
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

} // namespace ddl
