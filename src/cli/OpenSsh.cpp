#include "cli/OpenSsh.hpp"

#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "util/Strings.hpp"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace ddl::cli {

std::vector<std::string> openssh_argv(const Context& ctx, const NodeState& n,
                                      const std::vector<std::string>& extra) {
    std::vector<std::string> argv{"ssh",
                                  "-i",
                                  n.key.empty() ? ctx.key_path() : n.key,
                                  "-o",
                                  "IdentitiesOnly=yes",
                                  "-o",
                                  "UserKnownHostsFile=" + ctx.known_hosts_path(),
                                  "-o",
                                  "StrictHostKeyChecking=yes",
                                  "-p",
                                  std::to_string(n.port),
                                  "-l",
                                  n.user};
    if (auto j = ctx.jump_endpoint(n))
        argv.insert(argv.end(), {"-o", "ProxyCommand=" + ctx.openssh_proxy_command(*j)});
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(n.address);
    return argv;
}

void exec_openssh(std::vector<std::string> argv, const std::string& who) {
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (auto& s : argv)
        cargv.push_back(s.data());
    cargv.push_back(nullptr);
    log::debug("exec: " + shell_join(argv));
    // What ddl printed so far must not be lost with this process image.
    std::cout.flush();
    std::cerr.flush();
    execvp("ssh", cargv.data());
    std::cerr << who << ": cannot run ssh (install openssh-client)\n";
    std::exit(exit_code::k_failure);
}

const NodeState* find_node_or_explain(const Context& ctx, const std::string& node, const std::string& who) {
    if (const NodeState* n = ctx.state.node(node)) return n;
    std::vector<std::string> names;
    for (const auto& x : ctx.state.nodes)
        names.push_back(x.name);
    std::cerr << who << ": no node \"" << printable_utf8(node, 64) << "\" in cluster " << ctx.state.cluster
              << "\nhint: nodes are " << join(names, ", ") << "\n";
    return nullptr;
}

} // namespace ddl::cli
