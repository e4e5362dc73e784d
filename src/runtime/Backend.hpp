#pragma once
// Backend: the transport that runs the collectives of a Communicator (TcpRing or NcclBackend).
// Contract: every rank calls the same collectives in the same order with the same sizes; a failure
// throws CommError; the Communicator does argument checks, error latching and reporting.
#include "runtime/DataType.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ddl::runtime {

// One tensor of a fused allreduce: `count` elements at `data`.
struct TensorSpan {
    void* data;
    std::size_t count;
};

class Backend {
public:
    virtual ~Backend() = default;
    [[nodiscard]] virtual const char* name() const = 0;
    // In place; `average` divides by the number of ranks after summing.
    virtual void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) = 0;
    // One allreduce over several tensors as if they lay back to back in one buffer (tensor fusion).
    // This default packs them into a host buffer and back; TcpRing overrides it to reduce in place
    // (disjoint tensors; it falls back to this for overlapping ones).
    virtual void allreduce_fused(std::span<const TensorSpan> tensors, DataType type, ReduceOp op);
    virtual void broadcast(void* buffer, std::size_t bytes, int root) = 0;
    // `recv` holds size() blocks of `bytes`; this rank's block is already in place at rank*bytes.
    virtual void allgather(void* recv, std::size_t bytes) = 0;
    // Copies between caller buffers (an out-of-place call's input, a fused tensor into the pack): host memory
    // here; the NCCL backend also takes device memory.
    virtual void copy(void* dst, const void* src, std::size_t bytes);
    // Bytes this rank's collectives have put on the wire since the backend started: counted at the socket
    // by TcpRing, computed from the ring algorithm's volume by the NCCL backend (which moves them itself).
    [[nodiscard]] std::uint64_t bytes_sent() const { return m_bytes_sent; }

protected:
    std::uint64_t m_bytes_sent = 0;

private:
    std::vector<std::byte> m_pack; // allreduce_fused's packing buffer, kept between calls
};

} // namespace ddl::runtime
