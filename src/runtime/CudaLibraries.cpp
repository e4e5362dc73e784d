#include "runtime/CudaLibraries.hpp"

#include "runtime/CommError.hpp"
#include "runtime/CudaCompat.h"

#include <algorithm>
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

void bind_cudart(void* h, const std::string& what, CudaLoad& l) {
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
    bind(h, "cudaRuntimeGetVersion", a.runtime_get_version, missing);
    l.cudart = missing.empty();
    if (!l.cudart) l.cudart_error = what + " lacks " + missing;
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
    bind(h, "ncclGetVersion", a.nccl_get_version, missing);
    l.nccl = missing.empty();
    if (!l.nccl) l.nccl_error = nccl_soname() + " lacks " + missing + " (NCCL 2.14 or newer is needed)";
}

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
}

// Loaded once per process; the handles stay open for its lifetime.
const CudaLoad& loaded() {
    static const CudaLoad l = [] {
        const std::string cudart_file = env_or_empty("DDL_CUDART_LIBRARY");
        std::string why;
        std::vector<int> majors;
        if (cudart_file.empty())
            majors = cuda_major_order(read_driver(), env_or_empty("DDL_CUDA_MAJOR"), why);
        if (cudart_file.empty() && majors.empty()) {
            CudaLoad none;
            none.cudart_error = why;
            return none;
        }
        return load_cuda_libraries(cudart_file, env_or_empty("DDL_NCCL_LIBRARY"), majors);
    }();
    return l;
}

// The driver API's few calls used before a runtime is chosen; their ABI has not changed since CUDA 4.
using CuInit = int (*)(unsigned int);
using CuIntOut = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
constexpr int k_cu_attribute_cc_major = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int k_cu_attribute_cc_minor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

std::string majors_text(const std::vector<int>& majors) {
    std::string out;
    for (const int m : majors)
        out += (out.empty() ? "" : ", ") + cudart_soname(m);
    return out;
}

} // namespace

std::string cudart_soname(int major) {
    // CUDA 11 kept the soname of 11.0 for every 11.x release; from 12 on it is the major alone.
    return "libcudart.so." + std::to_string(major) + (major == 11 ? ".0" : "");
}

std::string nccl_soname() {
    return "libnccl.so." + std::to_string(NCCL_MAJOR);
}

DriverInfo read_driver() {
    DriverInfo d;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
        d.error = std::string("libcuda.so.1 not found (") + dlerror() + ")";
        return d;
    }
    auto init = reinterpret_cast<CuInit>(dlsym(h, "cuInit"));
    auto version = reinterpret_cast<CuIntOut>(dlsym(h, "cuDriverGetVersion"));
    auto count = reinterpret_cast<CuIntOut>(dlsym(h, "cuDeviceGetCount"));
    auto device = reinterpret_cast<CuDeviceGet>(dlsym(h, "cuDeviceGet"));
    auto attribute = reinterpret_cast<CuDeviceGetAttribute>(dlsym(h, "cuDeviceGetAttribute"));
    if (init == nullptr || version == nullptr || count == nullptr || device == nullptr ||
        attribute == nullptr) {
        d.error = "libcuda.so.1 lacks the driver API";
        return d;
    }
    if (version(&d.cuda_version) != 0) {
        d.error = "cuDriverGetVersion failed";
        return d;
    }
    if (const int rc = init(0); rc != 0) {
        d.error = "cuInit failed with CUresult " + std::to_string(rc);
        return d;
    }
    if (count(&d.gpus) != 0) d.gpus = 0;
    for (int i = 0; i < d.gpus; ++i) {
        int dev = 0;
        int cc_major = 0;
        int cc_minor = 0;
        if (device(&dev, i) != 0 || attribute(&cc_major, k_cu_attribute_cc_major, dev) != 0 ||
            attribute(&cc_minor, k_cu_attribute_cc_minor, dev) != 0)
            continue;
        const int cc = cc_major * 10 + cc_minor;
        d.min_cc = d.min_cc == 0 ? cc : std::min(d.min_cc, cc);
    }
    d.known = true;
    return d;
}

std::vector<int> cuda_major_order(const DriverInfo& driver, const std::string& forced, std::string& why) {
    std::vector<int> out;
    if (!forced.empty()) {
        for (const CudaMajor& m : k_cuda_majors)
            if (std::to_string(m.major) == forced) return {m.major};
        why = "DDL_CUDA_MAJOR=" + forced + " is not a CUDA major this runtime loads (" + majors_text([] {
                  std::vector<int> all;
                  all.reserve(k_cuda_majors.size());
                  for (const CudaMajor& m : k_cuda_majors)
                      all.push_back(m.major);
                  return all;
              }()) +
              ")";
        return out;
    }
    for (const CudaMajor& m : k_cuda_majors) {
        const bool driver_ok = !driver.known || driver.cuda_version / 1000 >= m.major;
        const bool gpus_ok =
            !driver.known || driver.min_cc == 0 || driver.min_cc >= m.min_cc_major * 10 + m.min_cc_minor;
        if (driver_ok && gpus_ok) out.push_back(m.major);
    }
    if (out.empty()) {
        const CudaMajor& oldest = k_cuda_majors.back();
        why = "the NVIDIA driver runs CUDA " + std::to_string(driver.cuda_version / 1000) + "." +
              std::to_string(driver.cuda_version % 1000 / 10) +
              " and the oldest GPU has compute capability " + std::to_string(driver.min_cc / 10) + "." +
              std::to_string(driver.min_cc % 10) + ": no CUDA major this runtime loads fits (CUDA " +
              std::to_string(oldest.major) + " needs driver branch " + std::to_string(oldest.min_driver) +
              "+ and compute capability " + std::to_string(oldest.min_cc_major) + "." +
              std::to_string(oldest.min_cc_minor) + "+)";
    }
    return out;
}

CudaLoad load_cuda_libraries(const std::string& cudart_file, const std::string& nccl_file,
                             const std::vector<int>& majors) {
    CudaLoad l;
    if (!cudart_file.empty()) {
        const Opened cudart = open_library(cudart_file, "");
        if (cudart.handle != nullptr)
            bind_cudart(cudart.handle, cudart_file, l);
        else
            l.cudart_error = cudart_file + " not found (" + cudart.error + ")";
    } else {
        for (const int major : majors) {
            const Opened cudart = open_library("", cudart_soname(major));
            if (cudart.handle == nullptr) {
                l.cudart_error += (l.cudart_error.empty() ? "" : "; ") + cudart.error;
                continue;
            }
            l.cudart_error.clear();
            bind_cudart(cudart.handle, cudart_soname(major), l);
            if (l.cudart) {
                l.cuda_major = major;
                break;
            }
        }
        if (!l.cudart && l.cudart_error.find("lacks") == std::string::npos)
            l.cudart_error = majors_text(majors) + " not found (" + l.cudart_error + ")";
    }
    if (!l.cudart) return l; // NCCL itself needs the CUDA runtime
    if (l.cuda_major == 0 && l.api.runtime_get_version != nullptr) {
        int v = 0;
        if (l.api.runtime_get_version(&v) == cudaSuccess) l.cuda_major = v / 1000;
    }
    const Opened nccl = open_library(nccl_file, nccl_soname());
    if (nccl.handle != nullptr)
        bind_nccl(nccl.handle, l);
    else
        l.nccl_error = (nccl_file.empty() ? nccl_soname() : nccl_file) + " not found (" + nccl.error + ")";
    return l;
}

std::string cuda_missing_message(const CudaLoad& l) {
    if (l.cudart && l.nccl) return {};
    const std::string runtime = l.cuda_major != 0 ? "the CUDA " + std::to_string(l.cuda_major) + " runtime"
                                                  : "a CUDA runtime the driver runs";
    return "backend nccl on " + host_name() + ": " + (!l.cudart ? l.cudart_error : l.nccl_error) +
           "; install " + runtime +
           " and the NCCL 2 build made for it (cuda-cudart-<major>-<minor> and "
           "libnccl2=<version>+cuda<major>.<minor> "
           "from NVIDIA's CUDA repository: the runtime role does on GPU nodes, docs/gpus.md) or choose "
           "runtime.backend: tcp";
}

std::string cuda_libraries_description() {
    const CudaLoad& l = loaded();
    if (!l.cudart || !l.nccl) return {};
    int rt = 0;
    int nc = 0;
    if (l.api.runtime_get_version(&rt) != cudaSuccess) rt = 0;
    if (l.api.nccl_get_version(&nc) != ncclSuccess) nc = 0;
    // NCCL 2.9+ encodes its version as major*10000 + minor*100 + patch.
    return "CUDA runtime " + std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10) + " (" +
           cudart_soname(l.cuda_major) + "), NCCL " + std::to_string(nc / 10000) + "." +
           std::to_string(nc % 10000 / 100) + "." + std::to_string(nc % 100);
}

std::string cuda_device_count_message(const std::string& cuda_error, bool no_usable_driver) {
    std::string m = "backend nccl on " + host_name() + ": cudaGetDeviceCount: " + cuda_error;
    if (no_usable_driver)
        m += " (no NVIDIA driver loaded, or one older than CUDA " + std::to_string(loaded().cuda_major) +
             " needs: set DDL_CUDA_MAJOR to an older major, install the runtime the driver runs "
             "(docs/gpus.md), "
             "or choose runtime.backend: tcp)";
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
