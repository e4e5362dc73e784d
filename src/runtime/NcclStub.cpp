// Built instead of NcclBackend.cpp when CUDA/NCCL are absent.
#include "runtime/NcclBackend.hpp"

namespace ddl::runtime {

int cuda_device_count() {
    return 0;
}

NcclReadiness nccl_readiness(int, int) {
    return {false, "this libddlcomm was built without CUDA/NCCL"};
}

std::string nccl_libraries_description() {
    return {};
}

std::unique_ptr<Backend> make_nccl_backend(Rendezvous&, const CommOptions&) {
    return nullptr;
}

} // namespace ddl::runtime
