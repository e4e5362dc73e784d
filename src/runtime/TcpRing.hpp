#pragma once
// TcpRing: the CPU backend. Allreduce is the bandwidth-optimal ring (reduce-scatter, then allgather:
// each rank sends and receives 2(N-1)/N of the buffer). All steps run as one pipelined stream: a
// segment may be sent on as soon as it has been received and reduced, so sending, receiving and
// reducing overlap across steps. One thread, non-blocking sockets, poll(2) only when nothing moves.
#include "runtime/Backend.hpp"
#include "runtime/CommOptions.hpp"
#include "runtime/Rendezvous.hpp"

#include <cstddef>
#include <vector>

namespace ddl::runtime {

class TcpRing : public Backend {
public:
    TcpRing(Rendezvous& rendezvous, const CommOptions& opts);

    [[nodiscard]] const char* name() const override { return "tcp"; }
    void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) override;
    void broadcast(void* buffer, std::size_t bytes, int root) override;
    void allgather(void* recv, std::size_t bytes) override;

private:
    struct SendOp {
        const std::byte* data;
        std::size_t size;
        int after_recv; // index of the receive whose processed bytes gate this send; -1: none
    };
    struct RecvOp {
        std::byte* data;
        std::size_t size;
        bool reduce; // add into data (through the staging segment) instead of overwriting it
    };

    void run(const std::vector<SendOp>& sends, const std::vector<RecvOp>& recvs, DataType type);
    [[noreturn]] void fail_peer(int peer, const std::string& what);

    Rendezvous& m_rv;
    CommOptions m_opts;
    std::size_t m_segment;
    std::vector<float> m_staging; // one segment, float-aligned for both element types
};

} // namespace ddl::runtime
