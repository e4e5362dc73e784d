// ddl-launch-local: run N ranks of a program on this machine through the real Launcher
// (LocalTransport), e.g. `ddl-launch-local -np 4 -- ddl-allreduce-test`.
#include "runtime/Launcher.hpp"
#include "runtime/LocalTransport.hpp"
#include "util/Strings.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ddl::runtime;

int main(int argc, char** argv) {
    LaunchOptions opts;
    opts.master_addr = "127.0.0.1";
    opts.iface = "lo";
    std::string hostfile;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (i + 1 >= argc) break;
        if (arg == "-np")
            opts.np = std::atoi(argv[++i]);
        else if (arg == "--hostfile")
            hostfile = argv[++i];
        else if (arg == "--port")
            opts.master_port = std::atoi(argv[++i]);
        else if (arg == "--iface")
            opts.iface = argv[++i];
        else
            break;
    }
    for (; i < argc; ++i)
        opts.argv.emplace_back(argv[i]);
    if (opts.argv.empty()) {
        std::fprintf(stderr,
                     "usage: ddl-launch-local [-np N] [--hostfile F] [--port P] [--iface IF] -- PROG ARGS\n");
        return 2;
    }
    if (!hostfile.empty()) {
        auto hosts = read_hostfile(hostfile);
        if (!hosts) {
            std::fprintf(stderr, "%s\n", hosts.error().message.c_str());
            return 2;
        }
        opts.hosts = *hosts;
    } else {
        opts.hosts = {HostfileEntry{"localhost", opts.np > 0 ? opts.np : 1, std::nullopt, 0}};
    }
    LocalTransport transport;
    Launcher launcher(transport);
    auto result = launcher.run(opts);
    if (!result) {
        std::fprintf(stderr, "ddl-launch-local: %s\n", result.error().message.c_str());
        return 2;
    }
    if (result->exit_code != 0) std::fprintf(stderr, "ddl-launch-local: %s\n", result->message.c_str());
    return result->exit_code;
}
