#pragma once
// Communicator: one rank's membership in a job, and the collectives (libddlcomm's C++ API).
//
//   auto comm = ddl::runtime::Communicator::from_env();   // DDL_*, OMPI_*, SLURM_* or torchrun variables
//   comm->allreduce(grad.data(), grad.size(), DataType::float32, ReduceOp::average);
//
// Contract: every rank calls the same collectives in the same order with the same counts. Buffers
// are host memory (the NCCL backend also accepts device memory). Not thread-safe: one thread at a
// time (a FusionQueue owns its communicator while it lives). Any failure throws CommError; after one
// the communicator stays failed and every later call throws the same error.
#include "runtime/Backend.hpp"
#include "runtime/CommError.hpp"
#include "runtime/CommOptions.hpp"
#include "runtime/DataType.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ddl::runtime {

class Rendezvous;

class Communicator {
public:
    // Bootstraps (rendezvous, backend selection). Throws CommError.
    explicit Communicator(const CommOptions& opts);
    // Options from the environment; a bad variable throws CommError(invalid_argument).
    static std::unique_ptr<Communicator> from_env();
    ~Communicator();
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;

    [[nodiscard]] int rank() const { return m_opts.rank; }
    [[nodiscard]] int size() const { return m_opts.size; }
    [[nodiscard]] int local_rank() const { return m_opts.local_rank; }
    [[nodiscard]] int local_size() const { return m_opts.local_size; }
    [[nodiscard]] const CommOptions& options() const { return m_opts; }
    [[nodiscard]] const char* backend_name() const;
    // Why backend auto chose TCP on a cluster with GPUs ("" otherwise); rank 0 also prints it once.
    [[nodiscard]] const std::string& backend_note() const { return m_backend_note; }
    // The CUDA runtime and NCCL the NCCL backend loaded ("CUDA runtime 13.0 (libcudart.so.13), NCCL
    // 2.28.3"); "" with the TCP backend.
    [[nodiscard]] std::string backend_libraries() const;
    // Bytes this rank's collectives have sent on the wire so far (Backend::bytes_sent): a step's figure is
    // the difference between two readings.
    [[nodiscard]] std::uint64_t bytes_sent() const { return m_backend->bytes_sent(); }
    // "rank 3 (10.0.0.4:41234)"
    [[nodiscard]] std::string describe_peer(int rank) const;

    // send == recv is in place. `count` elements; average divides the sum by size().
    void allreduce(const void* send, void* recv, std::size_t count, DataType type,
                   ReduceOp op = ReduceOp::sum);
    void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op = ReduceOp::sum) {
        allreduce(buffer, buffer, count, type, op);
    }
    // One allreduce of several tensors as if they were one buffer (what a FusionQueue batch runs): the
    // same result as an allreduce of each, at the cost of one. The TCP backend reduces them in place.
    void allreduce_fused(std::span<const TensorSpan> tensors, DataType type, ReduceOp op = ReduceOp::sum);
    void broadcast(void* buffer, std::size_t count, DataType type, int root);
    // recv holds size() * count elements, rank r's contribution at r * count.
    void allgather(const void* send, void* recv, std::size_t count, DataType type);
    void allgather_bytes(const void* send, void* recv, std::size_t bytes);
    void barrier();

private:
    template <typename F> void guarded(F&& body);

    CommOptions m_opts;
    std::unique_ptr<Rendezvous> m_rendezvous;
    std::unique_ptr<Backend> m_backend;
    std::string m_backend_note;
    std::optional<CommError> m_failure;
};

} // namespace ddl::runtime
