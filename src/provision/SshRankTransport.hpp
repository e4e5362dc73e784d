#pragma once
// The launcher's transport for real clusters: each rank runs over its own libssh session under a small
// remote wrapper that puts the program in its own process group, relays signals written to its stdin
// ("TERM\n") to that group, and kills the group when the channel closes — so a dying ddl never leaves
// ranks behind.
#include "remote/SshSession.hpp"
#include "runtime/RankTransport.hpp"

#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace ddl {

class SshRankTransport : public runtime::RankTransport {
public:
    // Maps a hostfile host (address or node name) to how to reach it; nullopt when unknown.
    using Resolver = std::function<std::optional<SshEndpoint>(const std::string& host)>;
    explicit SshRankTransport(Resolver resolver) : m_resolver(std::move(resolver)) {}

    // Ranks run inside each node's training container instead (`ddl run --container`): `engine` is the
    // engine's argv prefix on the nodes (e.g. docker, or podman --runtime runc), `container` names a
    // host's container. The same wrapper then runs inside the container, reached through
    // `<engine> exec -i`, whose stdin carries the signal lines and the channel's EOF as before.
    struct ContainerExec {
        std::vector<std::string> engine;
        std::function<std::string(const std::string& host)> container;
    };
    void use_containers(ContainerExec c) { m_container = std::move(c); }

    Result<std::unique_ptr<runtime::RankHandle>> start(const runtime::RankStart& start,
                                                       runtime::RankEvents& events) override;

    // The remote command line for a rank (exposed for tests).
    static std::string remote_command(const runtime::RankStart& start);
    // The same inside `container`: the environment goes in as the engine's -e flags.
    static std::string container_command(const runtime::RankStart& start,
                                         const std::vector<std::string>& engine,
                                         const std::string& container);

private:
    Resolver m_resolver;
    std::optional<ContainerExec> m_container;
};

} // namespace ddl
