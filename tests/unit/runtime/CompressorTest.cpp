// Gradient compression (Compressor): the spec, PowerSGD's algebra, exactness, error feedback's invariant,
// warm-up, the saved state, the bytes counter, and the C API.
#include "runtime/Compressor.hpp"

#include "RankHarness.hpp"
#include "runtime/ddlcomm.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

using namespace ddl::runtime;
using ddl::runtime::testing::run_ranks;

namespace {

// A deterministic pseudo-random value in [-1, 1) for (rank, step, index).
float noise(int rank, int step, std::size_t i) {
    return lowrank::initial_q(static_cast<std::uint64_t>(rank) * 1000003u + static_cast<std::uint64_t>(step),
                              i);
}

std::string mismatch(const char* what, std::size_t i, double got, double want) {
    return std::string(what) + " at " + std::to_string(i) + ": got " + std::to_string(got) + ", want " +
           std::to_string(want);
}

// The bucket of the tests: a 48 x 40 matrix, a 40-element bias, a 16 x 12 matrix (sent plain under rank 4:
// (16+12)*4*2 > 192).
const std::vector<MatrixShape> k_shapes = {{48, 40}, {40, 1}, {16, 12}};
constexpr std::size_t k_count = 48 * 40 + 40 + 16 * 12;

struct Trace {
    std::vector<float> gradient_sum; // this rank's gradients, summed over steps
    std::vector<float> output_sum;   // the results, summed over steps
    std::vector<float> last_output;
    std::vector<float> residual;
};

// Runs `steps` reductions of rank-dependent gradients with `spec` on n ranks; every rank's trace.
std::vector<Trace> run_steps(int n, const std::string& spec, int steps, std::vector<std::string>& errors) {
    std::vector<Trace> traces(static_cast<std::size_t>(n));
    errors = run_ranks(n, [&](Communicator& comm) -> std::string {
        Compressor c(comm, *parse_compression(spec));
        Trace& t = traces[static_cast<std::size_t>(comm.rank())];
        t.gradient_sum.assign(k_count, 0.0f);
        t.output_sum.assign(k_count, 0.0f);
        std::vector<float> g(k_count);
        for (int s = 0; s < steps; ++s) {
            for (std::size_t i = 0; i < k_count; ++i) {
                g[i] = noise(comm.rank(), s, i) + 0.5f * noise(99, s, i);
                t.gradient_sum[i] += g[i];
            }
            c.reduce(7, g.data(), k_count, k_shapes);
            for (std::size_t i = 0; i < k_count; ++i)
                t.output_sum[i] += g[i];
        }
        t.last_output = g;
        const auto r = c.residual(7);
        t.residual.assign(r.begin(), r.end());
        if (t.residual.empty()) t.residual.assign(k_count, 0.0f);
        return "";
    });
    return traces;
}

// Summed over steps, results plus the ranks' mean residual equal the ranks' mean gradient sum; and every rank
// got the same results.
std::string check_invariant(const std::vector<Trace>& traces) {
    const auto n = static_cast<float>(traces.size());
    for (std::size_t i = 0; i < k_count; ++i) {
        float mean_gradients = 0, mean_residual = 0;
        for (const Trace& t : traces) {
            mean_gradients += t.gradient_sum[i] / n;
            mean_residual += t.residual[i] / n;
            if (std::memcmp(&t.last_output[i], &traces[0].last_output[i], sizeof(float)) != 0)
                return mismatch("ranks disagree", i, t.last_output[i], traces[0].last_output[i]);
        }
        const float got = traces[0].output_sum[i] + mean_residual;
        if (std::abs(got - mean_gradients) > 1e-4f * (1 + std::abs(mean_gradients)))
            return mismatch("sent + residual", i, got, mean_gradients);
    }
    return "";
}

} // namespace

TEST_CASE("compression specs: kinds and options parse; anything else is refused with the forms it takes") {
    auto p = parse_compression("powersgd:rank=2,start=10,min=100");
    REQUIRE(p);
    CHECK(p->kind == CompressionKind::powersgd);
    CHECK(p->rank == 2);
    CHECK(p->start == 10);
    CHECK(p->min_elements == 100);
    auto t = parse_compression("topk:ratio=0.05");
    REQUIRE(t);
    CHECK(t->kind == CompressionKind::topk);
    CHECK(t->ratio == Approx(0.05));
    CHECK(parse_compression("fp16")->kind == CompressionKind::fp16);
    CHECK(parse_compression("powersgd")->rank == 4);
    for (const char* bad : {"powersgd:rank=0", "topk:ratio=0", "topk:ratio=1.5", "topk:rank=2", "fp16:rank=1",
                            "lowrank", "powersgd:rank=x", "powersgd:start=-1"}) {
        auto r = parse_compression(bad);
        INFO(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("expected none, fp16, powersgd") != std::string::npos);
    }
}

TEST_CASE(
    "PowerSGD's algebra: products, Gram-Schmidt gives orthonormal columns, a dependent column is dropped") {
    const float m[] = {1, 2, 3, 4, 5, 6}; // 2 x 3
    const float q[] = {1, 0, 0, 1, 1, 1}; // 3 x 2
    float out[4];
    lowrank::multiply(m, 2, 3, q, 2, out); // [[4, 5], [10, 11]]
    CHECK(out[0] == 4);
    CHECK(out[1] == 5);
    CHECK(out[2] == 10);
    CHECK(out[3] == 11);
    const float p[] = {1, 2, 3, 4}; // 2 x 2
    float mt[6];
    lowrank::multiply_transposed(m, 2, 3, p, 2, mt); // mᵀ p: [[13, 18], [17, 24], [21, 30]]
    CHECK(mt[0] == 13);
    CHECK(mt[3] == 24);
    CHECK(mt[5] == 30);

    std::vector<float> cols(50 * 3);
    for (std::size_t i = 0; i < 50; ++i) {
        cols[i * 3] = noise(1, 0, i);
        cols[i * 3 + 1] = noise(2, 0, i);
        cols[i * 3 + 2] = 2 * cols[i * 3] - cols[i * 3 + 1]; // in the span of the first two
    }
    lowrank::orthogonalize(cols.data(), 50, 3);
    auto dot = [&](int a, int b) {
        double s = 0;
        for (std::size_t i = 0; i < 50; ++i)
            s += double(cols[i * 3 + a]) * cols[i * 3 + b];
        return s;
    };
    CHECK(dot(0, 0) == Approx(1).margin(1e-6));
    CHECK(dot(1, 1) == Approx(1).margin(1e-6));
    CHECK(dot(0, 1) == Approx(0).margin(1e-6));
    CHECK(dot(2, 2) == Approx(0).margin(1e-12));
}

TEST_CASE("PowerSGD is exact when its rank is at least the averaged matrix's rank") {
    const int n = 3;
    const std::size_t rows = 64, cols = 32;
    std::vector<std::vector<float>> out(n);
    std::vector<float> want(rows * cols, 0.0f);
    // Rank r's matrix: u a_rᵀ + w b_rᵀ, the same two column vectors on every rank, so the mean has rank 2.
    auto matrix = [&](int r) {
        std::vector<float> m(rows * cols);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t c = 0; c < cols; ++c)
                m[i * cols + c] = noise(50, 0, i) * noise(r, 1, c) + noise(51, 0, i) * noise(r, 2, c);
        return m;
    };
    for (int r = 0; r < n; ++r) {
        const auto m = matrix(r);
        for (std::size_t i = 0; i < m.size(); ++i)
            want[i] += m[i] / n;
    }
    const MatrixShape shape{rows, cols};
    REQUIRE(lowrank::effective_rank(*parse_compression("powersgd:rank=4"), shape) == 4);
    auto errors = run_ranks(n, [&](Communicator& comm) -> std::string {
        Compressor c(comm, *parse_compression("powersgd:rank=4"));
        auto m = matrix(comm.rank());
        c.reduce(0, m.data(), m.size(), std::span<const MatrixShape>(&shape, 1));
        out[static_cast<std::size_t>(comm.rank())] = m;
        return "";
    });
    for (const auto& e : errors)
        REQUIRE(e == "");
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO(i);
        REQUIRE(out[0][i] == Approx(want[i]).margin(1e-5));
        REQUIRE(out[1][i] == out[0][i]);
        REQUIRE(out[2][i] == out[0][i]);
    }
}

TEST_CASE("error feedback: summed over steps, what was sent plus the residual is the sum of the gradients") {
    for (const char* spec :
         {"powersgd:rank=1", "powersgd:rank=4", "topk:ratio=0.01", "topk:ratio=0.4", "fp16"}) {
        INFO(spec);
        std::vector<std::string> errors;
        const auto traces = run_steps(3, spec, 6, errors);
        for (const auto& e : errors)
            REQUIRE(e == "");
        if (std::string(spec) == "fp16") {
            // No memory: each step's result is the mean within float16's precision.
            for (std::size_t i = 0; i < k_count; ++i) {
                float mean = 0;
                for (const Trace& t : traces)
                    mean += t.gradient_sum[i] / 3;
                REQUIRE(traces[0].output_sum[i] == Approx(mean).margin(6 * 2e-3));
            }
            continue;
        }
        CHECK(check_invariant(traces) == "");
        // Something really was held back.
        float held = 0;
        for (float v : traces[1].residual)
            held += std::abs(v);
        CHECK(held > 1.0f);
    }
}

TEST_CASE("warm-up: a bucket's first `start` steps are plain averages, with no residual") {
    std::vector<std::string> errors;
    const auto traces = run_steps(2, "topk:ratio=0.01,start=6", 6, errors);
    for (const auto& e : errors)
        REQUIRE(e == "");
    for (std::size_t i = 0; i < k_count; ++i) {
        REQUIRE(traces[0].residual[i] == 0.0f);
        REQUIRE(traces[0].output_sum[i] ==
                Approx((traces[0].gradient_sum[i] + traces[1].gradient_sum[i]) / 2).margin(1e-5));
    }
}

TEST_CASE("the saved state round-trips, resumes the same results, and other bytes are refused") {
    std::vector<std::vector<float>> resumed(2), continued(2);
    auto errors = run_ranks(2, [&](Communicator& comm) -> std::string {
        const auto spec = *parse_compression("powersgd:rank=2");
        Compressor a(comm, spec);
        std::vector<float> g(k_count);
        for (int s = 0; s < 3; ++s) {
            for (std::size_t i = 0; i < k_count; ++i)
                g[i] = noise(comm.rank(), s, i);
            a.reduce(1, g.data(), k_count, k_shapes);
        }
        const auto saved = a.save();
        Compressor b(comm, spec);
        b.load(saved);
        if (b.save() != saved) return "the state changed in a save/load round trip";
        for (std::size_t i = 0; i < k_count; ++i)
            g[i] = noise(comm.rank(), 3, i);
        auto h = g;
        a.reduce(1, g.data(), k_count, k_shapes);
        b.reduce(1, h.data(), k_count, k_shapes);
        continued[static_cast<std::size_t>(comm.rank())] = g;
        resumed[static_cast<std::size_t>(comm.rank())] = h;
        Compressor topk(comm, *parse_compression("topk"));
        try {
            topk.load(saved);
            return "a powersgd state loaded into a topk compressor";
        } catch (const CommError& e) {
            if (std::string(e.what()).find("saved by a powersgd compressor") == std::string::npos)
                return std::string("wrong refusal: ") + e.what();
        }
        auto cut = saved;
        cut.resize(cut.size() - 3);
        try {
            b.load(cut);
            return "a cut state loaded";
        } catch (const CommError& e) {
            if (std::string(e.what()).find("not a saved state") == std::string::npos) return e.what();
        }
        return "";
    });
    for (const auto& e : errors)
        REQUIRE(e == "");
    CHECK(resumed == continued);
}

TEST_CASE("bytes on the wire: the ring allreduce's volume, and top-k's sparse allgather sends far fewer") {
    const int n = 4;
    const std::size_t count = 100000;
    std::vector<std::uint64_t> plain(n), sparse(n);
    auto errors = run_ranks(n, [&](Communicator& comm) -> std::string {
        std::vector<float> g(count, 1.0f);
        auto before = comm.bytes_sent();
        comm.allreduce(g.data(), count, DataType::float32, ReduceOp::average);
        plain[static_cast<std::size_t>(comm.rank())] = comm.bytes_sent() - before;
        Compressor c(comm, *parse_compression("topk:ratio=0.01"));
        before = comm.bytes_sent();
        c.reduce(0, g.data(), count, {});
        sparse[static_cast<std::size_t>(comm.rank())] = comm.bytes_sent() - before;
        return "";
    });
    for (const auto& e : errors)
        REQUIRE(e == "");
    std::uint64_t total = 0;
    for (int r = 0; r < n; ++r) {
        total += plain[static_cast<std::size_t>(r)];
        // (n - 1) blocks of k (index, value) pairs.
        CHECK(sparse[static_cast<std::size_t>(r)] == 3u * 1000u * 8u);
    }
    CHECK(total == 2u * (n - 1) * count * 4u);
}

TEST_CASE("C API: compressor create refuses a bad spec; reduce, residual, save and load on a job of one") {
    ddlcomm_t* comm = nullptr;
    REQUIRE(ddlcomm_init(&comm, 0, 1, "127.0.0.1", ddl::runtime::testing::free_port(), "lo", 10) ==
            DDLCOMM_OK);
    ddlcomm_compressor_t* c = nullptr;
    CHECK(ddlcomm_compressor_create(comm, "powersgd:rank=two", &c) == DDLCOMM_ERR_INVALID);
    CHECK(std::string(ddlcomm_last_error()).find("rank must be a whole number") != std::string::npos);
    REQUIRE(ddlcomm_compressor_create(comm, "topk:ratio=0.25", &c) == DDLCOMM_OK);
    float g[4] = {1, -4, 2, 3};
    const size_t rows[] = {2}, cols[] = {2};
    REQUIRE(ddlcomm_compressor_reduce(c, 5, g, 4, 1, rows, cols) == DDLCOMM_OK);
    CHECK((g[0] == 0 && g[1] == -4 && g[2] == 0 && g[3] == 0));
    float res[4];
    REQUIRE(ddlcomm_compressor_residual(c, 5, res, 4) == DDLCOMM_OK);
    CHECK((res[0] == 1 && res[1] == 0 && res[2] == 2 && res[3] == 3));
    size_t size = 0;
    REQUIRE(ddlcomm_compressor_save(c, nullptr, 0, &size) == DDLCOMM_OK);
    std::vector<char> state(size);
    CHECK(ddlcomm_compressor_save(c, state.data(), size - 1, &size) == DDLCOMM_ERR_INVALID);
    REQUIRE(ddlcomm_compressor_save(c, state.data(), size, &size) == DDLCOMM_OK);
    ddlcomm_compressor_t* d = nullptr;
    REQUIRE(ddlcomm_compressor_create(comm, "topk:ratio=0.25", &d) == DDLCOMM_OK);
    REQUIRE(ddlcomm_compressor_load(d, state.data(), size) == DDLCOMM_OK);
    float back[4];
    REQUIRE(ddlcomm_compressor_residual(d, 5, back, 4) == DDLCOMM_OK);
    CHECK(std::memcmp(back, res, sizeof res) == 0);
    CHECK(ddlcomm_compressor_load(d, "nonsense", 8) == DDLCOMM_ERR_INVALID);
    ddlcomm_compressor_destroy(d);
    ddlcomm_compressor_destroy(c);
    ddlcomm_destroy(comm);
}
