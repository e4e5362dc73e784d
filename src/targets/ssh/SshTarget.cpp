#include "targets/ssh/SshTarget.hpp"

#include "provision/NodeFiles.hpp"
#include "util/Strings.hpp"

#include <unistd.h>

namespace ddl {
namespace {

std::string key_for(const Spec& spec, const SshHost& h) {
    return h.key.empty() ? spec.access.private_key : h.key;
}

} // namespace

const std::vector<std::string>& SshTarget::installed_paths() {
    static const std::vector<std::string> paths{
        "/opt/ddl/bin",       "/opt/ddl/lib",         "/opt/ddl/python",   "/opt/ddl/cuda.json",
        "/opt/ddl/README",    "/opt/ddl/runtime.tar", "/etc/ddl/hostfile", "/etc/ddl/hostfile.mpich",
        "/etc/ddl/cuda.json", "/etc/ddl/node.env"};
    return paths;
}

// The machines as ddl will reach them; keys are paths on this machine, never key material.
Result<RenderedFiles> SshTarget::render(const Spec& s, const RenderInputs&) const {
    nlohmann::json hosts = nlohmann::json::array();
    for (std::size_t i = 0; i < s.target_section<SshTargetSpec>().hosts.size(); ++i) {
        const auto& h = s.target_section<SshTargetSpec>().hosts[i];
        hosts.push_back({{"name", h.name},
                         {"group", i == 0 ? "master" : "workers"},
                         {"address", h.address},
                         {"port", h.port},
                         {"user", h.user.empty() ? s.access.user : h.user},
                         {"key", h.key.empty() ? s.access.private_key : h.key},
                         {"jump", h.jump},
                         {"private_address", h.private_address},
                         {"gpus", h.gpus}});
    }
    RenderedFiles f;
    f["ssh/hosts.json"] = json_file(hosts);
    return f;
}

Status SshTarget::preflight(const Context& ctx) {
    std::vector<std::string> problems;
    for (std::size_t i = 0; i < ctx.spec.target_section<SshTargetSpec>().hosts.size(); ++i) {
        const auto& h = ctx.spec.target_section<SshTargetSpec>().hosts[i];
        std::string where = "ssh.hosts[" + std::to_string(i) + "] (" + h.name + ")";
        std::string key = key_for(ctx.spec, h);
        if (key.empty())
            problems.push_back(where + ": no key to log in with; set access.private_key or ssh.hosts[" +
                               std::to_string(i) + "].key (ddl never generates keys for existing machines)");
        else if (access(key.c_str(), R_OK) != 0)
            problems.push_back(where + ": cannot read the key " + key);
    }
    if (!problems.empty()) return Error{join(problems, "\n      ")};
    return {};
}

Status SshTarget::provision(Context& ctx) {
    ctx.state.nodes.clear();
    for (std::size_t i = 0; i < ctx.spec.target_section<SshTargetSpec>().hosts.size(); ++i) {
        const auto& h = ctx.spec.target_section<SshTargetSpec>().hosts[i];
        NodeState n;
        n.name = h.name;
        n.group = i == 0 ? "master" : "workers";
        n.address = h.address;
        n.port = h.port;
        n.user = h.user.empty() ? ctx.spec.access.user : h.user;
        n.key = key_for(ctx.spec, h);
        n.jump = h.jump;
        n.private_address = h.private_address;
        ctx.state.nodes.push_back(n);
    }
    return {};
}

std::string SshTarget::cleanup_script(const Spec& spec, const std::string& cluster) {
    std::vector<std::string> rm{"rm", "-rf"};
    for (const auto& p : installed_paths())
        rm.push_back(p);
    std::string script;
    if (!spec.runtime.image.empty()) {
        // The training containers first (they mount /opt/ddl): every one labelled with this cluster, on a
        // machine that still has the engine.
        auto engine = shell_join(spec.container_engine_argv());
        script = "if command -v " + shell_quote(spec.runtime.container_engine) + " >/dev/null; then ids=$(" +
                 engine + " ps --all --quiet --filter " +
                 shell_quote("label=ddl.training=" + (cluster.empty() ? spec.name : cluster)) +
                 ") || exit 1; if [ -n \"$ids\" ]; then " + engine +
                 " rm --force $ids >/dev/null || exit 1; fi; fi; ";
    }
    script += shell_join(rm);
    // The machines' own users are often not root: what the roles and ddl installed as root, sudo removes.
    return root_shell_command(script);
}

std::vector<PlannedNode> SshTarget::planned_nodes(const Spec& spec) const {
    std::vector<PlannedNode> nodes;
    for (const auto& h : spec.target_section<SshTargetSpec>().hosts) {
        std::string where =
            (h.user.empty() ? spec.access.user : h.user) + "@" + h.address + ":" + std::to_string(h.port);
        nodes.push_back({h.name, "host " + where + (h.jump.empty() ? "" : " through " + h.jump)});
    }
    return nodes;
}

Status SshTarget::destroy(Context& ctx) {
    const auto script = cleanup_script(ctx.spec);
    auto& nodes = ctx.state.nodes;
    std::vector<Status> results(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        auto r = ctx.remote.exec(ctx.endpoint(nodes[i]), script, std::chrono::seconds(60));
        if (!r)
            results[i] = Error{nodes[i].name + ": " + r.error().message};
        else if (!r->ok())
            results[i] = Error{nodes[i].name + ": cleanup exited " + std::to_string(r->exit_status) + ": " +
                               trim(r->err)};
        ctx.progress.node(nodes[i].name,
                          results[i] ? "removed what ddl installed" : results[i].error().message);
    });
    std::vector<std::string> failed;
    for (const auto& r : results)
        if (!r) failed.push_back(r.error().message);
    if (!failed.empty()) return Error{join(failed, "; ")};
    return {};
}

} // namespace ddl
