#include "runtime/Backend.hpp"

#include <cstring>

namespace ddl::runtime {

void Backend::allreduce_fused(std::span<const TensorSpan> tensors, DataType type, ReduceOp op) {
    const std::size_t esize = element_size(type);
    std::size_t total = 0;
    for (const TensorSpan& t : tensors)
        total += t.count;
    if (m_pack.size() < total * esize) m_pack.resize(total * esize);
    std::size_t offset = 0;
    for (const TensorSpan& t : tensors) {
        if (t.count > 0) copy(m_pack.data() + offset, t.data, t.count * esize);
        offset += t.count * esize;
    }
    allreduce(m_pack.data(), total, type, op);
    offset = 0;
    for (const TensorSpan& t : tensors) {
        if (t.count > 0) copy(t.data, m_pack.data() + offset, t.count * esize);
        offset += t.count * esize;
    }
}

void Backend::copy(void* dst, const void* src, std::size_t bytes) {
    std::memmove(dst, src, bytes);
}

} // namespace ddl::runtime
