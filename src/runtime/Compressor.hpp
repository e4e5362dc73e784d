#pragma once
// Compressor: gradient averaging that sends fewer bytes, with error feedback (libddlcomm's C++ API; the C
// API is ddlcomm_compressor_*).
//
//   Compressor c(comm, *parse_compression("powersgd:rank=4,start=10"));
//   c.reduce(bucket_index, grad.data(), grad.size(), shapes);   // in place: the average over ranks
//
// Kinds:
// - powersgd (Vogels et al., NeurIPS 2019): each tensor of a bucket, viewed as a matrix of shape[0] rows
//   (its other dimensions flattened into columns), is sent as two rank-r factors: P = M Q (allreduced,
//   orthogonalised by Gram-Schmidt), Q = Mᵀ P (allreduced), result P Qᵀ; Q is kept for the next step (warm
//   start). Vectors (biases) and matrices the factors would not shrink at least twice stay uncompressed
//   (one fused allreduce per bucket).
// - topk (Lin et al., ICLR 2018): the `ratio` largest magnitudes of the bucket, sent as (index, value)
//   pairs through an allgather, or, when that would be more bytes than the ring allreduce of the whole
//   bucket, as a dense allreduce of the sparsified bucket.
// - fp16: the bucket divided by the ranks, summed as float16, written back as float.
// Error feedback (powersgd, topk): what a rank's input (gradient + its residual) was not represented by in
// the result is that rank's residual, added to the bucket's next input; so summed over steps, results plus
// the ranks' mean residual equal the mean of the gradients. Residuals, Q and step counts are kept per
// `key` (a bucket), saved and restored with save()/load() for checkpoints.
// Warm-up: a bucket's first `start` reductions are plain averages (PowerSGD's start_powerSGD_iter). Size
// rule: buckets (topk) or tensors (powersgd) under `min_elements` go uncompressed.
//
// All ranks must reduce the same keys with the same sizes and shapes in the same order (a data-parallel
// loop does); results are bit-identical on every rank. Buffers are host float32.
#include "runtime/Communicator.hpp"
#include "util/Result.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

namespace ddl::runtime {

enum class CompressionKind { none, fp16, powersgd, topk };

struct CompressionSpec {
    CompressionKind kind = CompressionKind::none;
    int rank = 4;                 // powersgd
    double ratio = 0.01;          // topk: the fraction of a bucket's elements sent
    std::uint64_t start = 0;      // plain averages before compression starts, per bucket
    std::size_t min_elements = 0; // smaller buckets (topk) or tensors (powersgd) go uncompressed
    double min_compression = 2.0; // powersgd: a matrix is compressed when the factors are this much smaller
};

// "none", "fp16", "powersgd[:rank=R][,start=N][,min=E]", "topk[:ratio=F][,start=N][,min=E]".
Result<CompressionSpec> parse_compression(std::string_view text);
[[nodiscard]] const char* compression_kind_name(CompressionKind kind);

// One tensor of a bucket: `rows` × `cols` float32, row-major, the bucket's tensors back to back.
struct MatrixShape {
    std::size_t rows;
    std::size_t cols;
};

class Compressor {
public:
    Compressor(Communicator& comm, CompressionSpec spec);

    [[nodiscard]] const CompressionSpec& spec() const { return m_spec; }
    // Averages `count` floats over the ranks, in place. `shapes` lists the bucket's tensors (empty: one
    // vector of `count`); their sizes must add up to `count`. Throws CommError.
    void reduce(std::uint64_t key, float* buffer, std::size_t count, std::span<const MatrixShape> shapes);

    // This rank's residual for `key` (empty before its first compressed step).
    [[nodiscard]] std::span<const float> residual(std::uint64_t key) const;
    // The whole state (per key: steps, shapes, residual, Q) as bytes, and back; load throws CommError
    // (invalid_argument) for bytes that are not a state of this kind.
    [[nodiscard]] std::vector<std::byte> save() const;
    void load(std::span<const std::byte> bytes);

private:
    struct Bucket {
        std::uint64_t steps = 0;
        std::vector<MatrixShape> shapes; // of the state below; a change of shapes starts it afresh
        std::vector<float> residual;
        std::vector<float> q; // powersgd: every compressed tensor's Q, cols × r, back to back
    };

    Bucket& bucket_for(std::uint64_t key, std::size_t count, std::span<const MatrixShape> shapes);
    void reduce_fp16(float* buffer, std::size_t count);
    void reduce_topk(Bucket& b, float* buffer, std::size_t count);
    void reduce_powersgd(std::uint64_t key, Bucket& b, float* buffer);

    Communicator& m_comm;
    CompressionSpec m_spec;
    std::map<std::uint64_t, Bucket> m_buckets;
    std::vector<float> m_scratch;
    std::vector<std::byte> m_bytes;
};

// PowerSGD's linear algebra (LowRank.cpp), exposed for the tests. Row-major throughout.
namespace lowrank {
// The largest rank the kernels take (a spec's rank above it is capped).
inline constexpr std::size_t k_max_rank = 64;
// out (rows × r) = m (rows × cols) · q (cols × r)
void multiply(const float* m, std::size_t rows, std::size_t cols, const float* q, std::size_t r, float* out);
// out (cols × r) = mᵀ (cols × rows) · p (rows × r)
void multiply_transposed(const float* m, std::size_t rows, std::size_t cols, const float* p, std::size_t r,
                         float* out);
// m (rows × cols) = p (rows × r) · qᵀ (r × cols), and residual = the old m − the new one.
void reconstruct(const float* p, const float* q, std::size_t rows, std::size_t cols, std::size_t r, float* m,
                 float* residual);
// Gram-Schmidt on the r columns of p (rows × r): orthonormal columns; a column with nothing left becomes 0.
void orthogonalize(float* p, std::size_t rows, std::size_t r);
// Q's first value: uniform in [-1, 1), the same on every rank for the same (seed, index).
float initial_q(std::uint64_t seed, std::size_t index);
// The rank PowerSGD uses for a matrix (min of rank, rows, cols), or 0 to send it uncompressed.
std::size_t effective_rank(const CompressionSpec& spec, MatrixShape shape);
} // namespace lowrank

} // namespace ddl::runtime
