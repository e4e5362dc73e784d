#pragma once
// Backend: the transport that runs the collectives of a Communicator (TcpRing or NcclBackend).
// Contract: every rank calls the same collectives in the same order with the same sizes; a failure
// throws CommError; the Communicator does argument checks, error latching and reporting.
#include "runtime/DataType.hpp"

#include <cstddef>

namespace ddl::runtime {

class Backend {
public:
    virtual ~Backend() = default;
    [[nodiscard]] virtual const char* name() const = 0;
    // In place; `average` divides by the number of ranks after summing.
    virtual void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) = 0;
    virtual void broadcast(void* buffer, std::size_t bytes, int root) = 0;
    // `recv` holds size() blocks of `bytes`; this rank's block is already in place at rank*bytes.
    virtual void allgather(void* recv, std::size_t bytes) = 0;
};

} // namespace ddl::runtime
