#pragma once
// NcclBackend: the GPU backend, built only when CUDA and NCCL are found (DDL_HAVE_NCCL). The
// ncclUniqueId travels over the runtime's own rendezvous. Host buffers are staged through device
// memory, so callers may pass host or device pointers. Async errors are polled with
// ncclCommGetAsyncError while waiting; a failure, a relayed peer failure or no completion within the
// timeout aborts the communicator (ncclCommAbort) and throws CommError.
#include "runtime/Backend.hpp"
#include "runtime/CommOptions.hpp"
#include "runtime/Rendezvous.hpp"

#include <memory>
#include <string>

namespace ddl::runtime {

// Number of CUDA devices this process sees; 0 without CUDA support or without a driver/GPU.
[[nodiscard]] int cuda_device_count();
// Whether the NCCL backend can start for rank `rank` (local rank `local_rank`) on this host, for backend
// auto: `problem` is "" when the CUDA runtime and NCCL load and the rank has a GPU of its own, else one line.
struct NcclReadiness {
    bool has_gpu = false; // this host has a GPU at all (a CPU node falling back is no news)
    std::string problem;
};
[[nodiscard]] NcclReadiness nccl_readiness(int rank, int local_rank);
// "CUDA runtime 13.0 (libcudart.so.13), NCCL 2.28.3" once loaded; "" without.
[[nodiscard]] std::string nccl_libraries_description();
// nullptr when the runtime was built without NCCL.
[[nodiscard]] std::unique_ptr<Backend> make_nccl_backend(Rendezvous& rendezvous, const CommOptions& opts);

} // namespace ddl::runtime
