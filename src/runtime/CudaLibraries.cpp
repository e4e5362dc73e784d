#include "runtime/CudaLibraries.hpp"

#include "runtime/CommError.hpp"

#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

namespace ddl::runtime {

namespace {

// Where NVIDIA's installers put the libraries when ld.so does not know them (the runfile and the
// cuda-toolkit packages: /usr/local/cuda/lib64, with lib as a second name on some layouts).
constexpr std::array<const char*, 2> k_cuda_folders{"/usr/local/cuda/lib64", "/usr/local/cuda/lib"};

struct Opened {
    void* handle = nullptr;
    std::string error; // every place tried, with dlerror's words, when handle is null
};

Opened open_library(const std::string& file, const std::string& soname) {
    Opened out;
    if (!file.empty()) {
        out.handle = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (out.handle == nullptr) out.error = dlerror();
        return out;
    }
    out.handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (out.handle != nullptr) return out;
    out.error = dlerror();
    for (const char* folder : k_cuda_folders) {
        const std::string path = std::string(folder) + "/" + soname;
        if (access(path.c_str(), F_OK) != 0) continue;
        out.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (out.handle != nullptr) return out;
        out.error += "; " + path + ": " + dlerror();
    }
    return out;
}

template <typename Fn> bool bind(void* handle, const char* symbol, Fn& slot, std::string& missing) {
    slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (slot == nullptr) missing += missing.empty() ? symbol : std::string(", ") + symbol;
    return slot != nullptr;
}

std::string host_name() {
    std::array<char, 256> buf{};
    if (gethostname(buf.data(), buf.size() - 1) != 0) return "this host";
    return buf.data();
}

void bind_cudart(void* h, CudaLoad& l) {
    std::string missing;
    CudaLibraries& a = l.api;
    bind(h, "cudaGetDeviceCount", a.get_device_count, missing);
    bind(h, "cudaSetDevice", a.set_device, missing);
    bind(h, "cudaStreamCreateWithFlags", a.stream_create_with_flags, missing);
    bind(h, "cudaStreamDestroy", a.stream_destroy, missing);
    bind(h, "cudaStreamQuery", a.stream_query, missing);
    bind(h, "cudaMalloc", a.device_malloc, missing);
    bind(h, "cudaFree", a.device_free, missing);
    bind(h, "cudaMemcpyAsync", a.memcpy_async, missing);
    bind(h, "cudaMemcpy", a.memcpy, missing);
    bind(h, "cudaDeviceSynchronize", a.device_synchronize, missing);
    bind(h, "cudaPointerGetAttributes", a.pointer_get_attributes, missing);
    bind(h, "cudaGetLastError", a.get_last_error, missing);
    bind(h, "cudaGetErrorString", a.get_error_string, missing);
    l.cudart = missing.empty();
    if (!l.cudart) l.cudart_error = cudart_soname() + " lacks " + missing;
}

void bind_nccl(void* h, CudaLoad& l) {
    std::string missing;
    CudaLibraries& a = l.api;
    bind(h, "ncclGetUniqueId", a.get_unique_id, missing);
    bind(h, "ncclCommInitRankConfig", a.comm_init_rank_config, missing);
    bind(h, "ncclCommGetAsyncError", a.comm_get_async_error, missing);
    bind(h, "ncclCommAbort", a.comm_abort, missing);
    bind(h, "ncclCommDestroy", a.comm_destroy, missing);
    bind(h, "ncclGetErrorString", a.nccl_error_string, missing);
    bind(h, "ncclAllReduce", a.all_reduce, missing);
    bind(h, "ncclBroadcast", a.broadcast, missing);
    bind(h, "ncclAllGather", a.all_gather, missing);
    l.nccl = missing.empty();
    if (!l.nccl) l.nccl_error = nccl_soname() + " lacks " + missing + " (NCCL 2.14 or newer is needed)";
}

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
}

// Loaded once per process; the handles stay open for its lifetime.
const CudaLoad& loaded() {
    static const CudaLoad l =
        load_cuda_libraries(env_or_empty("DDL_CUDART_LIBRARY"), env_or_empty("DDL_NCCL_LIBRARY"));
    return l;
}

} // namespace

std::string cudart_soname() {
    return "libcudart.so." + std::to_string(CUDART_VERSION / 1000);
}

std::string nccl_soname() {
    return "libnccl.so." + std::to_string(NCCL_MAJOR);
}

CudaLoad load_cuda_libraries(const std::string& cudart_file, const std::string& nccl_file) {
    CudaLoad l;
    const Opened cudart = open_library(cudart_file, cudart_soname());
    if (cudart.handle != nullptr)
        bind_cudart(cudart.handle, l);
    else
        l.cudart_error =
            (cudart_file.empty() ? cudart_soname() : cudart_file) + " not found (" + cudart.error + ")";
    if (!l.cudart) return l; // NCCL itself needs the CUDA runtime
    const Opened nccl = open_library(nccl_file, nccl_soname());
    if (nccl.handle != nullptr)
        bind_nccl(nccl.handle, l);
    else
        l.nccl_error = (nccl_file.empty() ? nccl_soname() : nccl_file) + " not found (" + nccl.error + ")";
    return l;
}

std::string cuda_missing_message(const CudaLoad& l) {
    if (l.cudart && l.nccl) return {};
    const std::string major = std::to_string(CUDART_VERSION / 1000);
    const std::string minor = std::to_string(CUDART_VERSION % 1000 / 10);
    return "backend nccl on " + host_name() + ": " + (!l.cudart ? l.cudart_error : l.nccl_error) +
           "; install the CUDA " + major + " runtime and NCCL 2 (cuda-cudart-" + major + "-" + minor +
           " and libnccl2 from NVIDIA's CUDA repository: the runtime role does on GPU nodes) or choose "
           "runtime.backend: tcp";
}

std::string cuda_device_count_message(const std::string& cuda_error, bool no_usable_driver) {
    std::string m = "backend nccl on " + host_name() + ": cudaGetDeviceCount: " + cuda_error;
    if (no_usable_driver)
        m += " (no NVIDIA driver loaded, or one older than CUDA " + std::to_string(CUDART_VERSION / 1000) +
             " needs: see docs/gpus.md, or choose runtime.backend: tcp)";
    return m;
}

std::string gpu_per_rank_message(int rank, int local_rank, int gpus) {
    if (local_rank < gpus) return {};
    return "backend nccl: rank " + std::to_string(rank) + " is local rank " + std::to_string(local_rank) +
           " on " + host_name() + ", which has " + std::to_string(gpus) +
           " GPU(s): NCCL runs one rank per GPU; start at most " + std::to_string(gpus) +
           " rank(s) on this node (runtime.slots_per_node, or the hostfile's slots) or choose "
           "runtime.backend: tcp";
}

const CudaLibraries* cuda_runtime_if_present() {
    const CudaLoad& l = loaded();
    return l.cudart ? &l.api : nullptr;
}

const CudaLibraries& cuda_libraries() {
    const CudaLoad& l = loaded();
    if (l.cudart && l.nccl) return l.api;
    throw CommError(CommErrorKind::invalid_argument, cuda_missing_message(l));
}

} // namespace ddl::runtime
