#include "runtime/DeviceMemory.hpp"

#include "runtime/CommError.hpp"

#if DDL_HAVE_NCCL
#include "runtime/CudaLibraries.hpp"

#include <string>
#endif

namespace ddl::runtime {

#if DDL_HAVE_NCCL
namespace {

void check_device_call(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess)
        throw CommError(CommErrorKind::internal,
                        std::string(what) + ": " + cuda_libraries().get_error_string(rc));
}

} // namespace

DeviceMemory::DeviceMemory(std::size_t bytes, int device) {
    const CudaLibraries& cu = cuda_libraries();
    check_device_call(cu.set_device(device), "cudaSetDevice");
    check_device_call(cu.device_malloc(&m_ptr, bytes), "cudaMalloc");
}

DeviceMemory::~DeviceMemory() {
    if (m_ptr != nullptr) cuda_libraries().device_free(m_ptr);
}

// A copy from pageable memory may return before its DMA ends: the device is synchronised before a
// collective on another stream reads the buffer.
void DeviceMemory::upload(const void* host, std::size_t bytes) {
    const CudaLibraries& cu = cuda_libraries();
    check_device_call(cu.memcpy(m_ptr, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    check_device_call(cu.device_synchronize(), "cudaDeviceSynchronize");
}

void DeviceMemory::download(void* host, std::size_t bytes) const {
    const CudaLibraries& cu = cuda_libraries();
    check_device_call(cu.device_synchronize(), "cudaDeviceSynchronize");
    check_device_call(cu.memcpy(host, m_ptr, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
}
#else
DeviceMemory::DeviceMemory(std::size_t, int) {
    throw CommError(CommErrorKind::invalid_argument,
                    "device buffers need the NCCL backend, and this runtime was built without CUDA and NCCL");
}

DeviceMemory::~DeviceMemory() = default;

void DeviceMemory::upload(const void*, std::size_t) {}

void DeviceMemory::download(void*, std::size_t) const {}
#endif

} // namespace ddl::runtime
