// PowerSGD's half of Compressor: the low-rank factors of each matrix of a bucket, and their linear algebra.
#include "runtime/Compressor.hpp"

#include <algorithm>
#include <cmath>

namespace ddl::runtime {

namespace lowrank {

namespace {

// The kernels with the rank as a constant for the common ranks (the compiler keeps a row of r floats in
// registers), and at run time for the others.
template <std::size_t R> struct Fixed {
    static constexpr std::size_t size(std::size_t) { return R; }
};
struct Dynamic {
    static std::size_t size(std::size_t r) { return r; }
};

template <typename K>
void multiply_k(const float* m, std::size_t rows, std::size_t cols, const float* q, std::size_t rr,
                float* out) {
    const std::size_t r = K::size(rr);
    for (std::size_t i = 0; i < rows; ++i) {
        float acc[64] = {};
        const float* row = m + i * cols;
        for (std::size_t c = 0; c < cols; ++c) {
            const float v = row[c];
            const float* qc = q + c * r;
            for (std::size_t j = 0; j < r; ++j)
                acc[j] += v * qc[j];
        }
        std::copy(acc, acc + r, out + i * r);
    }
}

template <typename K>
void multiply_transposed_k(const float* m, std::size_t rows, std::size_t cols, const float* p, std::size_t rr,
                           float* out) {
    const std::size_t r = K::size(rr);
    std::fill(out, out + cols * r, 0.0f);
    for (std::size_t i = 0; i < rows; ++i) {
        const float* row = m + i * cols;
        float pi[64];
        std::copy(p + i * r, p + i * r + r, pi);
        for (std::size_t c = 0; c < cols; ++c) {
            const float v = row[c];
            float* oc = out + c * r;
            for (std::size_t j = 0; j < r; ++j)
                oc[j] += v * pi[j];
        }
    }
}

template <typename K>
void reconstruct_k(const float* p, const float* q, std::size_t rows, std::size_t cols, std::size_t rr,
                   float* m, float* residual) {
    const std::size_t r = K::size(rr);
    for (std::size_t i = 0; i < rows; ++i) {
        float* row = m + i * cols;
        float* res = residual + i * cols;
        float pi[64];
        std::copy(p + i * r, p + i * r + r, pi);
        for (std::size_t c = 0; c < cols; ++c) {
            const float* qc = q + c * r;
            float v = 0;
            for (std::size_t j = 0; j < r; ++j)
                v += pi[j] * qc[j];
            res[c] = row[c] - v;
            row[c] = v;
        }
    }
}

template <template <typename> class F, typename... A> void by_rank(std::size_t r, A... a) {
    switch (r) {
    case 1:
        return F<Fixed<1>>::run(a...);
    case 2:
        return F<Fixed<2>>::run(a...);
    case 4:
        return F<Fixed<4>>::run(a...);
    case 8:
        return F<Fixed<8>>::run(a...);
    default:
        return F<Dynamic>::run(a...);
    }
}

template <typename K> struct Multiply {
    static void run(const float* m, std::size_t rows, std::size_t cols, const float* q, std::size_t r,
                    float* out) {
        multiply_k<K>(m, rows, cols, q, r, out);
    }
};
template <typename K> struct MultiplyTransposed {
    static void run(const float* m, std::size_t rows, std::size_t cols, const float* p, std::size_t r,
                    float* out) {
        multiply_transposed_k<K>(m, rows, cols, p, r, out);
    }
};
template <typename K> struct Reconstruct {
    static void run(const float* p, const float* q, std::size_t rows, std::size_t cols, std::size_t r,
                    float* m, float* residual) {
        reconstruct_k<K>(p, q, rows, cols, r, m, residual);
    }
};

} // namespace

void multiply(const float* m, std::size_t rows, std::size_t cols, const float* q, std::size_t r, float* out) {
    by_rank<Multiply>(r, m, rows, cols, q, r, out);
}

void multiply_transposed(const float* m, std::size_t rows, std::size_t cols, const float* p, std::size_t r,
                         float* out) {
    by_rank<MultiplyTransposed>(r, m, rows, cols, p, r, out);
}

void reconstruct(const float* p, const float* q, std::size_t rows, std::size_t cols, std::size_t r, float* m,
                 float* residual) {
    by_rank<Reconstruct>(r, p, q, rows, cols, r, m, residual);
}

void orthogonalize(float* p, std::size_t rows, std::size_t r) {
    auto dot = [&](std::size_t a, std::size_t b) {
        double s = 0;
        for (std::size_t i = 0; i < rows; ++i)
            s += static_cast<double>(p[i * r + a]) * static_cast<double>(p[i * r + b]);
        return s;
    };
    for (std::size_t j = 0; j < r; ++j) {
        const double before = std::sqrt(dot(j, j));
        // Two passes: one loses orthogonality when the column is nearly in the span of the earlier ones.
        for (int pass = 0; pass < 2; ++pass)
            for (std::size_t k = 0; k < j; ++k) {
                const auto d = static_cast<float>(dot(j, k));
                for (std::size_t i = 0; i < rows; ++i)
                    p[i * r + j] -= d * p[i * r + k];
            }
        const double norm = std::sqrt(dot(j, j));
        // Nothing of its own left (the matrix's rank is below r): the column is dropped.
        const bool degenerate = !(norm > 1e-5 * before) || norm == 0.0;
        const auto scale = degenerate ? 0.0f : static_cast<float>(1.0 / norm);
        for (std::size_t i = 0; i < rows; ++i)
            p[i * r + j] *= scale;
    }
}

float initial_q(std::uint64_t seed, std::size_t index) {
    // splitmix64: the same stream everywhere, whatever the standard library.
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (static_cast<std::uint64_t>(index) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

std::size_t effective_rank(const CompressionSpec& spec, MatrixShape shape) {
    if (shape.rows < 2 || shape.cols < 2 || shape.rows * shape.cols < spec.min_elements) return 0;
    const std::size_t r = std::min({static_cast<std::size_t>(spec.rank), shape.rows, shape.cols, k_max_rank});
    const double factors = static_cast<double>((shape.rows + shape.cols) * r);
    return factors * spec.min_compression <= static_cast<double>(shape.rows * shape.cols) ? r : 0;
}

} // namespace lowrank

void Compressor::reduce_powersgd(std::uint64_t key, Bucket& b, float* buffer) {
    struct Factor {
        std::size_t offset, rows, cols, r, p, q;
    };
    std::vector<Factor> factors;
    std::vector<TensorSpan> plain;
    std::size_t offset = 0, p_total = 0, q_total = 0;
    for (const MatrixShape& s : b.shapes) {
        const std::size_t n = s.rows * s.cols;
        if (const std::size_t r = lowrank::effective_rank(m_spec, s); r > 0) {
            factors.push_back({offset, s.rows, s.cols, r, p_total, q_total});
            p_total += s.rows * r;
            q_total += s.cols * r;
        } else if (n > 0) {
            plain.push_back({buffer + offset, n});
        }
        offset += n;
    }
    const std::size_t count = offset;
    if (b.residual.size() != count) b.residual.assign(count, 0.0f);
    for (std::size_t i = 0; i < count; ++i)
        buffer[i] += b.residual[i];
    if (b.q.size() != q_total) b.q.assign(q_total, 0.0f);
    m_scratch.resize(p_total);
    float* p = m_scratch.data();

    for (const Factor& f : factors) {
        float* q = b.q.data() + f.q;
        // A column of Q that is all zero (first step, or dropped as degenerate) starts again from the
        // seeded values, identically on every rank.
        for (std::size_t j = 0; j < f.r; ++j) {
            bool zero = true;
            for (std::size_t c = 0; c < f.cols && zero; ++c)
                zero = q[c * f.r + j] == 0.0f;
            if (zero)
                for (std::size_t c = 0; c < f.cols; ++c)
                    q[c * f.r + j] = lowrank::initial_q(key * 0x100000001b3ull + f.q, c * f.r + j);
        }
        lowrank::multiply(buffer + f.offset, f.rows, f.cols, q, f.r, p + f.p);
    }
    if (p_total > 0) m_comm.allreduce(p, p_total, DataType::float32, ReduceOp::average);
    for (const Factor& f : factors) {
        lowrank::orthogonalize(p + f.p, f.rows, f.r);
        lowrank::multiply_transposed(buffer + f.offset, f.rows, f.cols, p + f.p, f.r, b.q.data() + f.q);
    }
    if (q_total > 0) m_comm.allreduce(b.q.data(), q_total, DataType::float32, ReduceOp::average);
    if (!plain.empty()) m_comm.allreduce_fused(plain, DataType::float32, ReduceOp::average);
    for (const TensorSpan& t : plain) {
        const auto at = static_cast<std::size_t>(static_cast<float*>(t.data) - buffer);
        std::fill_n(b.residual.begin() + static_cast<std::ptrdiff_t>(at), t.count, 0.0f);
    }
    for (const Factor& f : factors)
        lowrank::reconstruct(p + f.p, b.q.data() + f.q, f.rows, f.cols, f.r, buffer + f.offset,
                             b.residual.data() + f.offset);
}

} // namespace ddl::runtime
