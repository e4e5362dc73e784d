#pragma once
// LocalTransport: starts ranks on this machine with fork/exec, each in its own process group, with
// stdout/stderr read line by line by one thread per rank. An optional argv prefix per host (or for
// all hosts) wraps the command, e.g. {"nsenter", "--net=/run/netns/node1"} to place a "host" in a
// network namespace.
#include "runtime/RankTransport.hpp"

#include <map>
#include <string>
#include <vector>

namespace ddl::runtime {

class LocalTransport : public RankTransport {
public:
    explicit LocalTransport(std::vector<std::string> prefix = {},
                            std::map<std::string, std::vector<std::string>> host_prefix = {})
        : m_prefix(std::move(prefix)), m_host_prefix(std::move(host_prefix)) {}

    [[nodiscard]] ddl::Result<std::unique_ptr<RankHandle>> start(const RankStart& start,
                                                                 RankEvents& events) override;

private:
    std::vector<std::string> m_prefix;
    std::map<std::string, std::vector<std::string>> m_host_prefix;
};

} // namespace ddl::runtime
