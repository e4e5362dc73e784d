#pragma once
// CommError: what every collective throws when the job cannot go on. Once a communicator has thrown,
// it stays failed: every later call throws the same error (the ring's state is unknown).
#include <stdexcept>
#include <string>

namespace ddl::runtime {

enum class CommErrorKind { invalid_argument, bootstrap, peer_failed, timeout, internal };

class CommError : public std::runtime_error {
public:
    CommError(CommErrorKind kind, const std::string& message, int peer_rank = -1,
              std::string peer_address = {})
        : std::runtime_error(message), m_kind(kind), m_peer_rank(peer_rank),
          m_peer_address(std::move(peer_address)) {}

    [[nodiscard]] CommErrorKind kind() const { return m_kind; }
    // The rank blamed for the failure, -1 when no single peer is to blame.
    [[nodiscard]] int peer_rank() const { return m_peer_rank; }
    [[nodiscard]] const std::string& peer_address() const { return m_peer_address; }

private:
    CommErrorKind m_kind;
    int m_peer_rank;
    std::string m_peer_address;
};

} // namespace ddl::runtime
