#pragma once
// TcpRing: the CPU backend. Allreduce is the bandwidth-optimal ring (reduce-scatter, then allgather:
// each rank sends and receives 2(N-1)/N of the buffer). All steps run as one pipelined stream: a
// segment may be sent on as soon as it has been received and reduced, so sending, receiving and
// reducing overlap across steps. One thread, non-blocking sockets, poll(2) only when nothing moves.
//
// A collective works on "pieces": one buffer, or for a fused allreduce the tensors themselves, laid
// back to back in one logical byte range. Sockets read and write the pieces directly (sendmsg/recvmsg
// with an iovec per run of pieces), so fusion costs no copies into or out of a fusion buffer.
#include "runtime/Backend.hpp"
#include "runtime/CommOptions.hpp"
#include "runtime/Rendezvous.hpp"

#include <cstddef>
#include <vector>

struct iovec;

namespace ddl::runtime {

class TcpRing : public Backend {
public:
    TcpRing(Rendezvous& rendezvous, const CommOptions& opts);

    [[nodiscard]] const char* name() const override { return "tcp"; }
    void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) override;
    void allreduce_fused(std::span<const TensorSpan> tensors, DataType type, ReduceOp op) override;
    void broadcast(void* buffer, std::size_t bytes, int root) override;
    void allgather(void* recv, std::size_t bytes) override;

private:
    struct Piece {
        std::byte* data;
        std::size_t begin; // logical offset of data[0]
        std::size_t size;  // > 0
    };
    // Ranges of the logical buffer.
    struct SendOp {
        std::size_t offset;
        std::size_t size;
        int after_recv; // index of the receive whose processed bytes gate this send; -1: none
    };
    struct RecvOp {
        std::size_t offset;
        std::size_t size;
        bool reduce; // add into the pieces (through the staging segment) instead of overwriting them
    };

    void set_single_piece(void* data, std::size_t bytes);
    void allreduce_pieces(std::size_t count, DataType type, ReduceOp op);
    // Fills iov with the pieces of [from, to), at most `max` entries; returns how many.
    int gather(std::size_t from, std::size_t to, iovec* iov, int max) const;
    void run(const std::vector<SendOp>& sends, const std::vector<RecvOp>& recvs, DataType type);
    [[noreturn]] void fail_peer(int peer, const std::string& what);

    Rendezvous& m_rv;
    CommOptions m_opts;
    std::size_t m_segment;
    std::vector<float> m_staging; // one segment, float-aligned for both element types
    std::vector<Piece> m_pieces;  // of the collective in progress
};

} // namespace ddl::runtime
