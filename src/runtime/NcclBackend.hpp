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

namespace ddl::runtime {

// Number of CUDA devices this process sees; 0 without CUDA support or without a driver/GPU.
[[nodiscard]] int cuda_device_count();
// nullptr when the runtime was built without NCCL.
[[nodiscard]] std::unique_ptr<Backend> make_nccl_backend(Rendezvous& rendezvous, const CommOptions& opts);

} // namespace ddl::runtime
