#include "runtime/CudaLibraries.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace ddl::runtime;

TEST_CASE("the sonames name the CUDA runtime's major and NCCL 2") {
    CHECK(cudart_soname(12) == "libcudart.so.12");
    CHECK(cudart_soname(11) == "libcudart.so.11.0"); // every CUDA 11.x keeps 11.0's soname
    CHECK(cudart_soname(CUDART_VERSION / 1000) == "libcudart.so." + std::to_string(CUDART_VERSION / 1000));
    CHECK(nccl_soname() == "libnccl.so.2");
}

namespace {
DriverInfo driver(int cuda_version, int min_cc) {
    DriverInfo d;
    d.known = true;
    d.cuda_version = cuda_version;
    d.gpus = 1;
    d.min_cc = min_cc;
    return d;
}
} // namespace

TEST_CASE("the CUDA majors are tried newest first among those the driver and the GPUs support") {
    std::string why;
    CHECK(cuda_major_order(DriverInfo{}, "", why) == std::vector<int>{13, 12, 11});      // no driver: all
    CHECK(cuda_major_order(driver(13000, 90), "", why) == std::vector<int>{13, 12, 11}); // H100, R580
    CHECK(cuda_major_order(driver(12020, 70), "", why) == std::vector<int>{12, 11});     // V100, R535
    CHECK(cuda_major_order(driver(13000, 70), "", why) ==
          std::vector<int>{12, 11}); // V100: CUDA 13 drops Volta
    CHECK(cuda_major_order(driver(13000, 61), "", why) == std::vector<int>{12, 11}); // Pascal
    CHECK(cuda_major_order(driver(11040, 35), "", why) == std::vector<int>{11});     // Kepler, R470
    CHECK(why.empty());
}

TEST_CASE("no CUDA major fitting the driver is one reason naming the driver and the oldest major's needs") {
    std::string why;
    CHECK(cuda_major_order(driver(10020, 70), "", why).empty());
    CHECK(why.find("runs CUDA 10.2") != std::string::npos);
    CHECK(why.find("CUDA 11 needs driver branch 450+") != std::string::npos);
}

TEST_CASE("DDL_CUDA_MAJOR picks one major, and an unknown one is refused with the majors there are") {
    std::string why;
    CHECK(cuda_major_order(driver(13000, 90), "12", why) == std::vector<int>{12});
    CHECK(cuda_major_order(driver(13000, 90), "10", why).empty());
    CHECK(why.find("DDL_CUDA_MAJOR=10") != std::string::npos);
    CHECK(why.find("libcudart.so.13, libcudart.so.12, libcudart.so.11.0") != std::string::npos);
}

TEST_CASE("a CUDA runtime of no major found is one line naming each soname tried") {
    const CudaLoad l = load_cuda_libraries("", "", {98, 99});
    CHECK_FALSE(l.cudart);
    CHECK(l.cudart_error.find("libcudart.so.98, libcudart.so.99 not found") != std::string::npos);
    CHECK(cuda_missing_message(l).find("runtime.backend: tcp") != std::string::npos);
}

TEST_CASE("a missing NCCL is one line naming the file, the packages and the tcp backend") {
    const CudaLoad l = load_cuda_libraries("", "/nonexistent/libnccl.so.2", {13, 12, 11});
    if (!l.cudart) {
        // No CUDA runtime here: that is what the line names, and NCCL is not tried without it.
        CHECK_FALSE(l.nccl);
        CHECK(cuda_missing_message(l).find("libcudart.so.13, libcudart.so.12, libcudart.so.11.0 not found") !=
              std::string::npos);
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
    const CudaLoad l = load_cuda_libraries("libm.so.6", "", {});
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
    const CudaLoad l = load_cuda_libraries("", "", {13, 12, 11});
    CHECK(l.cudart);
    CHECK(l.cuda_major == CUDART_VERSION / 1000);
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
