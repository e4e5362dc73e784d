// Compressor's saved state: what a checkpoint keeps of it (per bucket: steps, shapes, residual, Q). Native
// byte order: the ranks of one job, and the job that resumes it, run on one architecture.
#include "runtime/Compressor.hpp"

#include <cstring>

namespace ddl::runtime {

namespace {

constexpr char k_magic[8] = {'D', 'D', 'L', 'C', 'M', 'P', '1', '\0'};

void put(std::vector<std::byte>& out, const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::byte*>(data);
    out.insert(out.end(), p, p + bytes);
}
void put_u64(std::vector<std::byte>& out, std::uint64_t v) {
    put(out, &v, sizeof v);
}

class Reader {
public:
    explicit Reader(std::span<const std::byte> bytes) : m_bytes(bytes) {}
    void take(void* out, std::size_t bytes) {
        if (m_bytes.size() - m_at < bytes) bad("it ends early");
        std::memcpy(out, m_bytes.data() + m_at, bytes);
        m_at += bytes;
    }
    std::uint64_t u64() {
        std::uint64_t v = 0;
        take(&v, sizeof v);
        return v;
    }
    std::vector<float> floats() {
        const std::uint64_t n = u64();
        if (n > (m_bytes.size() - m_at) / sizeof(float)) bad("a length runs past its end");
        std::vector<float> v(n);
        take(v.data(), n * sizeof(float));
        return v;
    }
    [[nodiscard]] bool done() const { return m_at == m_bytes.size(); }
    [[noreturn]] static void bad(const std::string& why) {
        throw CommError(CommErrorKind::invalid_argument, "compressor state: not a saved state (" + why + ")");
    }

private:
    std::span<const std::byte> m_bytes;
    std::size_t m_at = 0;
};

} // namespace

std::vector<std::byte> Compressor::save() const {
    std::vector<std::byte> out;
    put(out, k_magic, sizeof k_magic);
    put_u64(out, static_cast<std::uint64_t>(m_spec.kind));
    put_u64(out, m_buckets.size());
    for (const auto& [key, b] : m_buckets) {
        put_u64(out, key);
        put_u64(out, b.steps);
        put_u64(out, b.shapes.size());
        for (const MatrixShape& s : b.shapes) {
            put_u64(out, s.rows);
            put_u64(out, s.cols);
        }
        put_u64(out, b.residual.size());
        put(out, b.residual.data(), b.residual.size() * sizeof(float));
        put_u64(out, b.q.size());
        put(out, b.q.data(), b.q.size() * sizeof(float));
    }
    return out;
}

void Compressor::load(std::span<const std::byte> bytes) {
    Reader in(bytes);
    char magic[sizeof k_magic];
    in.take(magic, sizeof magic);
    if (std::memcmp(magic, k_magic, sizeof magic) != 0) Reader::bad("no DDLCMP1 header");
    const std::uint64_t kind = in.u64();
    if (kind != static_cast<std::uint64_t>(m_spec.kind))
        Reader::bad(std::string("saved by a ") +
                    (kind <= 3 ? compression_kind_name(static_cast<CompressionKind>(kind)) : "unknown") +
                    " compressor, this one is " + compression_kind_name(m_spec.kind));
    std::map<std::uint64_t, Bucket> buckets;
    const std::uint64_t n = in.u64();
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t key = in.u64();
        Bucket b;
        b.steps = in.u64();
        const std::uint64_t shapes = in.u64();
        if (shapes > bytes.size() / 16) Reader::bad("a shape count runs past its end");
        std::size_t total = 0;
        for (std::uint64_t s = 0; s < shapes; ++s) {
            MatrixShape m{};
            m.rows = in.u64();
            m.cols = in.u64();
            total += m.rows * m.cols;
            b.shapes.push_back(m);
        }
        b.residual = in.floats();
        b.q = in.floats();
        if (!b.residual.empty() && b.residual.size() != total)
            Reader::bad("a residual does not fit its shapes");
        buckets[key] = std::move(b);
    }
    if (!in.done()) Reader::bad("bytes after its end");
    m_buckets = std::move(buckets);
}

} // namespace ddl::runtime
