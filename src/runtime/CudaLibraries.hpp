#pragma once
// CudaLibraries: the CUDA runtime and NCCL, loaded when the NCCL backend is first asked for (dlopen), so
// the runtime's programs and libddlcomm start on nodes that have neither (CPU nodes, a fresh node before
// its GPU roles ran). One runtime serves CUDA 11, 12 and 13 (runtime/CudaCompat.h, from
// cmake/cuda_compat.cmake): every call bound here has the same signature and types in all three (no
// cudaDeviceProp, no versioned entry points), so the headers of any of them describe each. The CUDA
// runtime tried first is the newest major that the node's driver (cuDriverGetVersion) and GPUs (their
// compute capability, from the driver API) support; DDL_CUDA_MAJOR names one major instead. Each soname
// is looked up the way the dynamic loader does (LD_LIBRARY_PATH, ld.so.cache), then in CUDA's default
// install folders. DDL_CUDART_LIBRARY and DDL_NCCL_LIBRARY name a file to load instead.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <string>
#include <vector>

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
    decltype(&cudaRuntimeGetVersion) runtime_get_version = nullptr;
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
    decltype(&ncclGetVersion) nccl_get_version = nullptr;
};

// The CUDA runtime's soname of one major (libcudart.so.13, .12, and .11.0 for every CUDA 11) and NCCL's
// (libnccl.so.2).
[[nodiscard]] std::string cudart_soname(int major);
[[nodiscard]] std::string nccl_soname();

// What the node's driver says, read through the driver API (libcuda.so.1) before any CUDA runtime is
// loaded. known is false where libcuda cannot be loaded or cuInit fails (no driver, no device).
struct DriverInfo {
    bool known = false;
    int cuda_version = 0; // cuDriverGetVersion: 12020 for a driver that runs CUDA 12.2
    int gpus = 0;
    int min_cc = 0; // the lowest compute capability among the GPUs, as major*10+minor (70 for a V100)
    std::string error;
};
[[nodiscard]] DriverInfo read_driver();

// The CUDA majors to try, newest first: `forced` (DDL_CUDA_MAJOR) alone where non-empty; else those the
// driver and GPUs support, or every major where the driver is not known (the runtime's own error then
// names the driver). Empty with a reason in `why` where none fits (forced major unknown, driver or GPUs
// too old for every major).
[[nodiscard]] std::vector<int> cuda_major_order(const DriverInfo& driver, const std::string& forced,
                                                std::string& why);

// One attempt at loading both: which loaded, and for each that did not, what was tried and why it failed.
struct CudaLoad {
    CudaLibraries api;
    bool cudart = false;
    bool nccl = false;  // tried only when the CUDA runtime loaded: NCCL needs it
    int cuda_major = 0; // of the CUDA runtime that loaded
    std::string cudart_error;
    std::string nccl_error;
};

// Loads the CUDA runtime from `cudart_file` where non-empty, else the first of `majors` found by soname
// or in CUDA's folders; then NCCL from `nccl_file` or by soname. The handles stay open for the life of
// the process.
[[nodiscard]] CudaLoad load_cuda_libraries(const std::string& cudart_file, const std::string& nccl_file,
                                           const std::vector<int>& majors);

// "CUDA runtime 13.0 (libcudart.so.13), NCCL 2.28.3", for the programs' headers; "" when not loaded.
[[nodiscard]] std::string cuda_libraries_description();

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
