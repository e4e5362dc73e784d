#pragma once
// CudaLibraries: the CUDA runtime and NCCL, loaded when the NCCL backend is first asked for (dlopen), so
// the runtime's programs and libddlcomm start on nodes that have neither (CPU nodes, a fresh node before
// its GPU roles ran). The sonames are those of the headers this runtime was compiled against; each is
// looked up the way the dynamic loader does (LD_LIBRARY_PATH, ld.so.cache), then in CUDA's default install
// folders. DDL_CUDART_LIBRARY and DDL_NCCL_LIBRARY name a file to load instead.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <string>

namespace ddl::runtime {

struct CudaLibraries {
    // CUDA runtime
    decltype(&cudaGetDeviceCount) get_device_count = nullptr;
    decltype(&cudaSetDevice) set_device = nullptr;
    decltype(&cudaStreamCreateWithFlags) stream_create_with_flags = nullptr;
    decltype(&cudaStreamDestroy) stream_destroy = nullptr;
    decltype(&cudaStreamQuery) stream_query = nullptr;
    cudaError_t (*device_malloc)(void**, size_t) = nullptr; // cudaMalloc (its C++ name is overloaded)
    decltype(&cudaFree) device_free = nullptr;
    decltype(&cudaMemcpyAsync) memcpy_async = nullptr;
    decltype(&cudaMemcpy) memcpy = nullptr;
    decltype(&cudaDeviceSynchronize) device_synchronize = nullptr;
    decltype(&cudaPointerGetAttributes) pointer_get_attributes = nullptr;
    decltype(&cudaGetLastError) get_last_error = nullptr;
    decltype(&cudaGetErrorString) get_error_string = nullptr;
    // NCCL
    decltype(&ncclGetUniqueId) get_unique_id = nullptr;
    decltype(&ncclCommInitRankConfig) comm_init_rank_config = nullptr;
    decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
    decltype(&ncclCommAbort) comm_abort = nullptr;
    decltype(&ncclCommDestroy) comm_destroy = nullptr;
    decltype(&ncclGetErrorString) nccl_error_string = nullptr;
    decltype(&ncclAllReduce) all_reduce = nullptr;
    decltype(&ncclBroadcast) broadcast = nullptr;
    decltype(&ncclAllGather) all_gather = nullptr;
};

// The CUDA runtime's soname this runtime needs (libcudart.so.<major>) and NCCL's (libnccl.so.2).
[[nodiscard]] std::string cudart_soname();
[[nodiscard]] std::string nccl_soname();

// One attempt at loading both: which loaded, and for each that did not, what was tried and why it failed.
struct CudaLoad {
    CudaLibraries api;
    bool cudart = false;
    bool nccl = false; // tried only when the CUDA runtime loaded: NCCL needs it
    std::string cudart_error;
    std::string nccl_error;
};

// Loads from the given files where non-empty, else by soname then from CUDA's folders. The handles stay
// open for the life of the process.
[[nodiscard]] CudaLoad load_cuda_libraries(const std::string& cudart_file, const std::string& nccl_file);

// The one line that says what is missing on this host and how to get it ("" when both loaded).
[[nodiscard]] std::string cuda_missing_message(const CudaLoad& load);

// The line for a failed cudaGetDeviceCount: CUDA's own words, and where CUDA says the driver is missing or
// too old (cudaErrorInsufficientDriver, cudaErrorNoDevice), what this runtime needs and the way out.
[[nodiscard]] std::string cuda_device_count_message(const std::string& cuda_error, bool no_usable_driver);

// NCCL runs one rank of a job per GPU (two ranks on one device fail its initialisation with "invalid
// usage"): the line for a rank whose local rank has no GPU of its own, "" when it has one.
[[nodiscard]] std::string gpu_per_rank_message(int rank, int local_rank, int gpus);

// The CUDA runtime alone (for counting devices): nullptr where it cannot be loaded. Loaded once per
// process, from DDL_CUDART_LIBRARY / DDL_NCCL_LIBRARY where set.
[[nodiscard]] const CudaLibraries* cuda_runtime_if_present();

// Both libraries with every function, loaded once; throws CommError (invalid_argument) with one line naming
// what is missing on this host and how to get it.
[[nodiscard]] const CudaLibraries& cuda_libraries();

} // namespace ddl::runtime
