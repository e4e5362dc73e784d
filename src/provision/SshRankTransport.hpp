#pragma once
// The launcher's transport for real clusters: each rank runs over its own libssh session under a small
// remote wrapper that puts the program in its own process group, relays signals written to its stdin
// ("TERM\n") to that group, and kills the group when the channel closes — so a dying ddl never leaves
// ranks behind.
#include "remote/SshSession.hpp"
#include "runtime/RankTransport.hpp"

#include <functional>
#include <map>

namespace ddl {

class SshRankTransport : public runtime::RankTransport {
public:
    // Maps a hostfile host (address or node name) to how to reach it; nullopt when unknown.
    using Resolver = std::function<std::optional<SshEndpoint>(const std::string& host)>;
    explicit SshRankTransport(Resolver resolver) : m_resolver(std::move(resolver)) {}

    Result<std::unique_ptr<runtime::RankHandle>> start(const runtime::RankStart& start,
                                                       runtime::RankEvents& events) override;

    // The remote command line for a rank (exposed for tests).
    static std::string remote_command(const runtime::RankStart& start);

private:
    Resolver m_resolver;
};

} // namespace ddl
