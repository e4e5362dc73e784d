#pragma once
// Rendezvous: the bootstrap and the control plane of a communicator.
//
// Bootstrap: rank 0 listens on master_addr:master_port; every other rank connects to it and sends
// (rank, size, advertised address, ring port); rank 0 checks the ranks and sends everyone the table.
// The connections stay open as a star: the control plane. On a failure a rank reports it to rank 0,
// which relays it to all others, so every rank fails with the same error naming the culprit. Rank 0
// also notices a dead rank by its control connection closing without a goodbye.
//
// Ring: each rank connects to the next rank's ring listener (and only sends there) and accepts the
// previous rank (and only receives from it).
#include "runtime/CommError.hpp"
#include "runtime/CommOptions.hpp"
#include "runtime/Socket.hpp"

#include <chrono>
#include <poll.h>
#include <string>
#include <vector>

namespace ddl::runtime {

struct PeerAddress {
    std::string host;
    int port = 0;
};

class Rendezvous {
public:
    // Throws CommError(bootstrap) when the rendezvous does not complete by opts.bootstrap_timeout,
    // naming the ranks that did not arrive.
    explicit Rendezvous(const CommOptions& opts);
    // Says goodbye on the control plane so that peers do not take this rank's exit for a crash.
    ~Rendezvous();
    Rendezvous(const Rendezvous&) = delete;
    Rendezvous& operator=(const Rendezvous&) = delete;

    [[nodiscard]] int rank() const { return m_rank; }
    [[nodiscard]] int size() const { return m_size; }
    [[nodiscard]] const std::vector<PeerAddress>& peers() const { return m_peers; }
    // "rank 3 (10.0.0.4:41234)", for error messages.
    [[nodiscard]] std::string describe(int rank) const;

    // Opens the ring connections (idempotent). Throws CommError(bootstrap) at the deadline.
    void connect_ring();
    [[nodiscard]] int next_fd() const { return m_next.fd(); }
    [[nodiscard]] int prev_fd() const { return m_prev.fd(); }
    [[nodiscard]] int next_rank() const { return (m_rank + 1) % m_size; }
    [[nodiscard]] int prev_rank() const { return (m_rank + m_size - 1) % m_size; }

    // Sends `blob` from rank 0 to every rank over the control plane (NCCL's unique id).
    void broadcast_from_root(std::string& blob);
    // Sends `mine` from every rank to rank 0, which gets them indexed by rank (others get an empty list).
    [[nodiscard]] std::vector<std::string> gather_to_root(const std::string& mine);

    // Control plane polling: append the control fds to a poll set, then let process_control look at
    // the revents from `first` on. Throws CommError when a peer failed or a failure was relayed.
    void append_control_fds(std::vector<pollfd>& fds) const;
    void process_control(const std::vector<pollfd>& fds, std::size_t first);
    // Non-blocking check of the control plane.
    void check_control();

    // Tells the others about a local failure (best effort, bounded time). Idempotent.
    void report_failure(const CommError& error) noexcept;
    // Closes the ring connections so that neighbours blocked on them fail at once.
    void shutdown_ring() noexcept;

private:
    void bootstrap_root(Clock::time_point deadline, const std::string& my_host, int my_port);
    void bootstrap_worker(Clock::time_point deadline, const std::string& my_host, int my_port);
    void relay_abort(int culprit, const std::string& message, int except_rank) noexcept;
    [[noreturn]] void fail_from_control(int culprit, const std::string& message);

    int m_rank = 0;
    int m_size = 1;
    CommOptions m_opts;
    std::vector<PeerAddress> m_peers;
    // Rank 0: one per rank (index = rank, [0] unused); others: [0] is the link to rank 0.
    std::vector<Socket> m_control;
    std::vector<bool> m_departed; // said goodbye; EOF from them is expected
    Socket m_ring_listener;
    Socket m_next;
    Socket m_prev;
    bool m_reported = false;
};

} // namespace ddl::runtime
