#include "runtime/CudaLibraries.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace ddl::runtime;

TEST_CASE("the sonames are those of the CUDA and NCCL headers the runtime was compiled against") {
    CHECK(cudart_soname() == "libcudart.so." + std::to_string(CUDART_VERSION / 1000));
    CHECK(nccl_soname() == "libnccl.so.2");
}

TEST_CASE("a missing NCCL is one line naming the file, the packages and the tcp backend") {
    const CudaLoad l = load_cuda_libraries("", "/nonexistent/libnccl.so.2");
    if (!l.cudart) {
        // No CUDA runtime here: that is what the line names, and NCCL is not tried without it.
        CHECK_FALSE(l.nccl);
        CHECK(cuda_missing_message(l).find(cudart_soname() + " not found") != std::string::npos);
        return;
    }
    CHECK_FALSE(l.nccl);
    const std::string m = cuda_missing_message(l);
    CHECK(m.find("/nonexistent/libnccl.so.2 not found") != std::string::npos);
    CHECK(m.find("libnccl2") != std::string::npos);
    CHECK(m.find("runtime.backend: tcp") != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE("a library without the CUDA runtime's functions is refused, naming what it lacks") {
    const CudaLoad l = load_cuda_libraries("libm.so.6", "");
    CHECK_FALSE(l.cudart);
    CHECK_FALSE(l.nccl);
    CHECK(cuda_missing_message(l).find("lacks cudaGetDeviceCount") != std::string::npos);
}

TEST_CASE("the CUDA runtime and NCCL of this machine's toolkit load with every function") {
    const bool toolkit = std::filesystem::exists("/usr/local/cuda/lib64/" + nccl_soname()) ||
                         std::filesystem::exists("/usr/local/cuda/lib/" + nccl_soname());
    if (!toolkit) {
        WARN("no CUDA toolkit with NCCL in /usr/local/cuda on this machine: not checked");
        return;
    }
    const CudaLoad l = load_cuda_libraries("", "");
    CHECK(l.cudart);
    CHECK(l.nccl);
    CHECK(cuda_missing_message(l).empty());
    CHECK(l.api.all_reduce != nullptr);
    CHECK(l.api.get_device_count != nullptr);
}

TEST_CASE("a rank without a GPU of its own is one line naming the count and the ways out") {
    CHECK(gpu_per_rank_message(3, 0, 1).empty());
    CHECK(gpu_per_rank_message(3, 7, 8).empty());
    const std::string m = gpu_per_rank_message(1, 1, 1);
    CHECK(m.find("rank 1 is local rank 1") != std::string::npos);
    CHECK(m.find("which has 1 GPU(s)") != std::string::npos);
    CHECK(m.find("runtime.slots_per_node") != std::string::npos);
    CHECK(m.find("runtime.backend: tcp") != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
    CHECK_FALSE(gpu_per_rank_message(0, 0, 0).empty()); // no GPU at all
}

TEST_CASE("a missing driver is named as such; other CUDA errors are CUDA's words alone") {
    const std::string m =
        cuda_device_count_message("CUDA driver version is insufficient for CUDA runtime version", true);
    CHECK(m.find("cudaGetDeviceCount: CUDA driver version is insufficient") != std::string::npos);
    CHECK(m.find("no NVIDIA driver loaded") != std::string::npos);
    CHECK(m.find("docs/gpus.md") != std::string::npos);
    CHECK(cuda_device_count_message("out of memory", false).find("driver") == std::string::npos);
}
