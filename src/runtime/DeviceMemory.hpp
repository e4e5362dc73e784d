#pragma once
// DeviceMemory: a buffer on this rank's GPU for callers that keep their data there, as training frameworks
// do; ddl-allreduce-test times the NCCL backend on such buffers, as nccl-tests does, so that its figures are
// NCCL's and not those of the copies to and from host memory. Uses the CUDA runtime the NCCL backend loads
// (CudaLibraries); where there is none, or the runtime was built without NCCL, construction throws
// CommError naming what is missing.
#include <cstddef>

namespace ddl::runtime {

class DeviceMemory {
public:
    // `bytes` on GPU `device` (a rank's local rank: the GPU its NCCL backend uses).
    DeviceMemory(std::size_t bytes, int device);
    ~DeviceMemory();
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;

    [[nodiscard]] void* data() const { return m_ptr; }
    // Whole copies, finished on the GPU when they return.
    void upload(const void* host, std::size_t bytes);
    void download(void* host, std::size_t bytes) const;

private:
    void* m_ptr = nullptr;
};

} // namespace ddl::runtime
