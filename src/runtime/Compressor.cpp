// Compressor: the spec, the dispatch per bucket, top-k, fp16 and the saved state (PowerSGD: LowRank.cpp).
#include "runtime/Compressor.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

namespace ddl::runtime {

namespace {

Error spec_error(std::string_view text, const std::string& why) {
    return Error{"compression '" + std::string(text) + "': " + why +
                 " (expected none, fp16, powersgd[:rank=R][,start=N][,min=E] or "
                 "topk[:ratio=F][,start=N][,min=E])"};
}

std::optional<double> parse_ratio(const std::string& v) {
    if (v.empty()) return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (end != v.c_str() + v.size() || !(d > 0.0) || d > 1.0) return std::nullopt;
    return d;
}

} // namespace

const char* compression_kind_name(CompressionKind kind) {
    switch (kind) {
    case CompressionKind::fp16:
        return "fp16";
    case CompressionKind::powersgd:
        return "powersgd";
    case CompressionKind::topk:
        return "topk";
    default:
        return "none";
    }
}

Result<CompressionSpec> parse_compression(std::string_view text) {
    CompressionSpec spec;
    const std::size_t colon = text.find(':');
    const std::string name(text.substr(0, colon));
    if (name == "none" || name.empty())
        spec.kind = CompressionKind::none;
    else if (name == "fp16")
        spec.kind = CompressionKind::fp16;
    else if (name == "powersgd")
        spec.kind = CompressionKind::powersgd;
    else if (name == "topk")
        spec.kind = CompressionKind::topk;
    else
        return spec_error(text, "unknown kind '" + name + "'");
    if (colon == std::string_view::npos) return spec;
    if (spec.kind == CompressionKind::none || spec.kind == CompressionKind::fp16)
        return spec_error(text, name + " takes no options");
    for (const std::string& item : split(text.substr(colon + 1), ',')) {
        const std::size_t eq = item.find('=');
        const std::string key = item.substr(0, eq);
        const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
        const auto number = parse_int(value);
        if (key == "rank" && spec.kind == CompressionKind::powersgd) {
            if (!number || *number < 1 || *number > 64)
                return spec_error(text, "rank must be a whole number from 1 to 64");
            spec.rank = static_cast<int>(*number);
        } else if (key == "ratio" && spec.kind == CompressionKind::topk) {
            const auto ratio = parse_ratio(value);
            if (!ratio) return spec_error(text, "ratio must be a number above 0 and at most 1");
            spec.ratio = *ratio;
        } else if (key == "start") {
            if (!number || *number < 0) return spec_error(text, "start must be a whole number of steps");
            spec.start = static_cast<std::uint64_t>(*number);
        } else if (key == "min") {
            if (!number || *number < 0) return spec_error(text, "min must be a whole number of elements");
            spec.min_elements = static_cast<std::size_t>(*number);
        } else {
            return spec_error(text, "unknown option '" + key + "' for " + name);
        }
    }
    return spec;
}

Compressor::Compressor(Communicator& comm, CompressionSpec spec) : m_comm(comm), m_spec(spec) {}

Compressor::Bucket& Compressor::bucket_for(std::uint64_t key, std::size_t count,
                                           std::span<const MatrixShape> shapes) {
    Bucket& b = m_buckets[key];
    const bool same = b.shapes.size() == shapes.size() &&
                      std::equal(shapes.begin(), shapes.end(), b.shapes.begin(),
                                 [](auto& x, auto& y) { return x.rows == y.rows && x.cols == y.cols; });
    if (!same) {
        // DDP rebuilds its buckets after the first step: a key's new layout starts without memory.
        b.shapes.assign(shapes.begin(), shapes.end());
        b.residual.clear();
        b.q.clear();
    }
    (void)count;
    return b;
}

void Compressor::reduce(std::uint64_t key, float* buffer, std::size_t count,
                        std::span<const MatrixShape> shapes) {
    std::size_t total = 0;
    for (const MatrixShape& s : shapes)
        total += s.rows * s.cols;
    if (!shapes.empty() && total != count)
        throw CommError(CommErrorKind::invalid_argument,
                        "compressor: the tensors' shapes add up to " + std::to_string(total) +
                            " elements, the bucket has " + std::to_string(count));
    if (count > 0 && buffer == nullptr)
        throw CommError(CommErrorKind::invalid_argument, "compressor: null buffer");
    const MatrixShape whole{count, 1};
    Bucket& b = bucket_for(key, count, shapes.empty() ? std::span<const MatrixShape>(&whole, 1) : shapes);
    const bool warming_up = b.steps < m_spec.start;
    ++b.steps;
    if (warming_up || m_spec.kind == CompressionKind::none ||
        (m_spec.kind == CompressionKind::topk && count < m_spec.min_elements)) {
        m_comm.allreduce(buffer, count, DataType::float32, ReduceOp::average);
        return;
    }
    switch (m_spec.kind) {
    case CompressionKind::fp16:
        reduce_fp16(buffer, count);
        break;
    case CompressionKind::topk:
        reduce_topk(b, buffer, count);
        break;
    default:
        reduce_powersgd(key, b, buffer);
        break;
    }
}

void Compressor::reduce_fp16(float* buffer, std::size_t count) {
    const float inv = 1.0f / static_cast<float>(m_comm.size());
    m_bytes.resize(count * 2);
    auto* half = reinterpret_cast<std::uint16_t*>(m_bytes.data());
    for (std::size_t i = 0; i < count; ++i)
        half[i] = float_to_half(buffer[i] * inv);
    m_comm.allreduce(half, count, DataType::float16, ReduceOp::sum);
    for (std::size_t i = 0; i < count; ++i)
        buffer[i] = half_to_float(half[i]);
}

void Compressor::reduce_topk(Bucket& b, float* buffer, std::size_t count) {
    if (count == 0) return;
    if (b.residual.size() != count) b.residual.assign(count, 0.0f);
    for (std::size_t i = 0; i < count; ++i)
        buffer[i] += b.residual[i];
    const auto k = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::ceil(m_spec.ratio * static_cast<double>(count))), 1, count);
    // The k-th largest magnitude, then the indices above it (and as many equal to it as make k), in order.
    m_scratch.resize(count);
    for (std::size_t i = 0; i < count; ++i)
        m_scratch[i] = std::abs(buffer[i]);
    std::nth_element(m_scratch.begin(), m_scratch.begin() + static_cast<std::ptrdiff_t>(k - 1),
                     m_scratch.end(), std::greater<>());
    const float threshold = m_scratch[k - 1];
    std::size_t above = 0;
    for (std::size_t i = 0; i < count; ++i)
        above += std::abs(buffer[i]) > threshold ? 1 : 0;
    std::size_t ties = k - above;
    std::vector<std::uint32_t> index;
    index.reserve(k);
    for (std::size_t i = 0; i < count && index.size() < k; ++i) {
        const float a = std::abs(buffer[i]);
        if (a > threshold || (a == threshold && ties > 0)) {
            if (!(a > threshold)) --ties;
            index.push_back(static_cast<std::uint32_t>(i));
        }
    }
    // The residual is the input except what is sent.
    std::copy(buffer, buffer + count, b.residual.begin());
    for (std::uint32_t i : index)
        b.residual[i] = 0.0f;

    const auto n = static_cast<std::uint64_t>(m_comm.size());
    constexpr std::size_t k_pair = sizeof(std::uint32_t) + sizeof(float);
    const std::uint64_t sparse = (n - 1) * k * k_pair; // the ring allgather of every rank's pairs
    const std::uint64_t dense = 2 * (n - 1) * count * sizeof(float) / n; // the ring allreduce
    if (sparse >= dense) {
        for (std::size_t i = 0; i < count; ++i)
            buffer[i] -= b.residual[i]; // exactly 0 where not sent
        m_comm.allreduce(buffer, count, DataType::float32, ReduceOp::average);
        return;
    }
    m_bytes.resize(k * k_pair * n);
    std::byte* mine = m_bytes.data() + k * k_pair * static_cast<std::size_t>(m_comm.rank());
    for (std::size_t j = 0; j < k; ++j) {
        const float v = buffer[index[j]];
        std::memcpy(mine + j * k_pair, &index[j], sizeof(std::uint32_t));
        std::memcpy(mine + j * k_pair + sizeof(std::uint32_t), &v, sizeof(float));
    }
    m_comm.allgather_bytes(mine, m_bytes.data(), k * k_pair);
    std::fill(buffer, buffer + count, 0.0f);
    // Ranks in order, so every rank adds the same numbers in the same order.
    for (std::size_t j = 0; j < k * static_cast<std::size_t>(n); ++j) {
        std::uint32_t i = 0;
        float v = 0;
        std::memcpy(&i, m_bytes.data() + j * k_pair, sizeof(std::uint32_t));
        std::memcpy(&v, m_bytes.data() + j * k_pair + sizeof(std::uint32_t), sizeof(float));
        if (i >= count)
            throw CommError(CommErrorKind::internal, "compressor: a rank sent index " + std::to_string(i) +
                                                         " for a bucket of " + std::to_string(count));
        buffer[i] += v;
    }
    const float inv = 1.0f / static_cast<float>(n);
    for (std::size_t i = 0; i < count; ++i)
        buffer[i] *= inv;
}

std::span<const float> Compressor::residual(std::uint64_t key) const {
    const auto it = m_buckets.find(key);
    if (it == m_buckets.end()) return {};
    return it->second.residual;
}

} // namespace ddl::runtime
