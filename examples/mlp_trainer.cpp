// mlp_trainer: data-parallel training of a small MLP (features -> hidden ReLU -> classes, softmax
// cross-entropy, plain SGD) on a synthetic classification set generated from a seed. Each rank takes
// its shard of every global batch, computes the gradient of its shard's mean loss, and the gradients
// are averaged through libddlcomm's tensor fusion. Everything is deterministic: the same run prints
// the same numbers, all replicas hold bit-identical weights after every step, and N ranks follow the
// single-process run on the global batch up to float rounding.
//
//   ddl run -np 4 -- mlp_trainer --steps 50 --checksum
#include "runtime/Communicator.hpp"
#include "runtime/FusionQueue.hpp"

#include <cblas.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" void openblas_set_num_threads(int num_threads);

using namespace ddl::runtime;

namespace {

struct Config {
    int steps = 20;
    int batch = 64; // global batch; must be divisible by the number of ranks
    int features = 16;
    int hidden = 32;
    int classes = 4;
    float lr = 0.5f;
    std::uint64_t seed = 42;
    bool checksum = false;
    bool print_weights = false;
};

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Uniform in [-1, 1), a pure function of (seed, stream, index): any rank can make any sample.
float uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    const std::uint64_t h = splitmix(seed ^ splitmix(stream * 0x100000001b3ull ^ splitmix(index)));
    return static_cast<float>(static_cast<double>(h >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

struct Model {
    std::vector<float> w1, b1, w2, b2; // w1: hidden x features, w2: classes x hidden (row-major)
};

Model init_model(const Config& c) {
    Model m;
    const auto f = static_cast<std::size_t>(c.features), h = static_cast<std::size_t>(c.hidden),
               k = static_cast<std::size_t>(c.classes);
    m.w1.resize(h * f);
    m.b1.assign(h, 0.0f);
    m.w2.resize(k * h);
    m.b2.assign(k, 0.0f);
    const float s1 = std::sqrt(2.0f / static_cast<float>(f)), s2 = std::sqrt(1.0f / static_cast<float>(h));
    for (std::size_t i = 0; i < m.w1.size(); ++i)
        m.w1[i] = s1 * uniform(c.seed, 1, i);
    for (std::size_t i = 0; i < m.w2.size(); ++i)
        m.w2[i] = s2 * uniform(c.seed, 2, i);
    return m;
}

// Sample j of the data set: features uniform, label = argmax of a fixed random linear teacher.
void make_sample(const Config& c, std::uint64_t j, float* x, int& label) {
    for (int d = 0; d < c.features; ++d)
        x[d] = uniform(c.seed, 3, j * static_cast<std::uint64_t>(c.features) + static_cast<std::uint64_t>(d));
    float best = -1e30f;
    for (int k = 0; k < c.classes; ++k) {
        float s = 0;
        for (int d = 0; d < c.features; ++d)
            s += uniform(c.seed, 4, static_cast<std::uint64_t>(k * c.features + d)) * x[d];
        if (s > best) {
            best = s;
            label = k;
        }
    }
}

std::uint64_t checksum_of(const Model& m) {
    std::uint64_t h = 1469598103934665603ull;
    for (const auto* v : {&m.w1, &m.b1, &m.w2, &m.b2}) {
        const auto* bytes = reinterpret_cast<const unsigned char*>(v->data());
        for (std::size_t i = 0; i < v->size() * sizeof(float); ++i)
            h = (h ^ bytes[i]) * 1099511628211ull;
    }
    return h;
}

bool parse(int argc, char** argv, Config& c) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--checksum")
            c.checksum = true;
        else if (a == "--print-weights")
            c.print_weights = true;
        else if (a == "--steps" && has_value)
            c.steps = std::atoi(argv[++i]);
        else if (a == "--batch" && has_value)
            c.batch = std::atoi(argv[++i]);
        else if (a == "--hidden" && has_value)
            c.hidden = std::atoi(argv[++i]);
        else if (a == "--lr" && has_value)
            c.lr = static_cast<float>(std::atof(argv[++i]));
        else if (a == "--seed" && has_value)
            c.seed = std::strtoull(argv[++i], nullptr, 10);
        else
            return false;
    }
    return c.steps > 0 && c.batch > 0 && c.hidden > 0;
}

} // namespace

int main(int argc, char** argv) {
    Config c;
    if (!parse(argc, argv, c)) {
        std::fprintf(stderr, "usage: mlp_trainer [--steps K] [--batch B] [--hidden H] [--lr LR] [--seed S] "
                             "[--checksum] [--print-weights]\n");
        return 2;
    }
    openblas_set_num_threads(1); // ranks share the cores; threads inside a rank would only contend
    try {
        auto comm = Communicator::from_env();
        const int n = comm->size(), rank = comm->rank();
        if (c.batch % n != 0) {
            std::fprintf(stderr, "mlp_trainer: --batch %d is not divisible by %d ranks\n", c.batch, n);
            return 2;
        }
        Model m = init_model(c);
        // Identical by construction; the broadcast makes it so even if a rank's init differed.
        for (auto* v : {&m.w1, &m.b1, &m.w2, &m.b2})
            comm->broadcast(v->data(), v->size(), DataType::float32, 0);

        const int b = c.batch / n, f = c.features, h = c.hidden, k = c.classes;
        const auto ub = static_cast<std::size_t>(b);
        std::vector<float> x(ub * static_cast<std::size_t>(f)), z1(ub * static_cast<std::size_t>(h)),
            a1(z1.size()), z2(ub * static_cast<std::size_t>(k)), dz2(z2.size()), da1(z1.size());
        std::vector<int> y(ub);
        Model g = m; // gradients, same shapes
        float loss_buf[1];
        FusionQueue fusion(*comm);
        for (int step = 0; step < c.steps; ++step) {
            // This rank's shard of global batch `step`.
            for (int i = 0; i < b; ++i) {
                const auto j = static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(c.batch) +
                               static_cast<std::uint64_t>(rank * b + i);
                make_sample(c, j, &x[static_cast<std::size_t>(i * f)], y[static_cast<std::size_t>(i)]);
            }
            // Forward: z1 = x w1^T + b1, a1 = relu(z1), z2 = a1 w2^T + b2.
            for (int i = 0; i < b; ++i)
                std::memcpy(&z1[static_cast<std::size_t>(i * h)], m.b1.data(), m.b1.size() * 4);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, h, f, 1.0f, x.data(), f, m.w1.data(), f,
                        1.0f, z1.data(), h);
            for (std::size_t i = 0; i < z1.size(); ++i)
                a1[i] = z1[i] > 0 ? z1[i] : 0.0f;
            for (int i = 0; i < b; ++i)
                std::memcpy(&z2[static_cast<std::size_t>(i * k)], m.b2.data(), m.b2.size() * 4);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, k, h, 1.0f, a1.data(), h, m.w2.data(), h,
                        1.0f, z2.data(), k);
            // Softmax cross-entropy; dz2 = (p - onehot) / b (gradient of this shard's mean loss).
            double loss = 0;
            for (int i = 0; i < b; ++i) {
                float* row = &z2[static_cast<std::size_t>(i * k)];
                float mx = row[0];
                for (int q = 1; q < k; ++q)
                    mx = std::max(mx, row[q]);
                double sum = 0;
                for (int q = 0; q < k; ++q)
                    sum += std::exp(static_cast<double>(row[q] - mx));
                const int label = y[static_cast<std::size_t>(i)];
                loss += -(static_cast<double>(row[label] - mx) - std::log(sum));
                for (int q = 0; q < k; ++q) {
                    const double p = std::exp(static_cast<double>(row[q] - mx)) / sum;
                    dz2[static_cast<std::size_t>(i * k + q)] =
                        static_cast<float>((p - (q == label ? 1.0 : 0.0)) / b);
                }
            }
            loss_buf[0] = static_cast<float>(loss / b);
            // Backward.
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, h, b, 1.0f, dz2.data(), k, a1.data(), h,
                        0.0f, g.w2.data(), h);
            std::fill(g.b2.begin(), g.b2.end(), 0.0f);
            for (int i = 0; i < b; ++i)
                for (int q = 0; q < k; ++q)
                    g.b2[static_cast<std::size_t>(q)] += dz2[static_cast<std::size_t>(i * k + q)];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, h, k, 1.0f, dz2.data(), k, m.w2.data(),
                        h, 0.0f, da1.data(), h);
            for (std::size_t i = 0; i < da1.size(); ++i)
                if (z1[i] <= 0) da1[i] = 0.0f;
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, f, b, 1.0f, da1.data(), h, x.data(), f,
                        0.0f, g.w1.data(), f);
            std::fill(g.b1.begin(), g.b1.end(), 0.0f);
            for (int i = 0; i < b; ++i)
                for (int q = 0; q < h; ++q)
                    g.b1[static_cast<std::size_t>(q)] += da1[static_cast<std::size_t>(i * h + q)];
            // Average the gradients (and the loss) over ranks: many small tensors, fused.
            (void)fusion.submit("fc2.weight", g.w2.data(), g.w2.size(), DataType::float32, ReduceOp::average);
            (void)fusion.submit("fc2.bias", g.b2.data(), g.b2.size(), DataType::float32, ReduceOp::average);
            (void)fusion.submit("fc1.weight", g.w1.data(), g.w1.size(), DataType::float32, ReduceOp::average);
            (void)fusion.submit("fc1.bias", g.b1.data(), g.b1.size(), DataType::float32, ReduceOp::average);
            (void)fusion.submit("loss", loss_buf, 1, DataType::float32, ReduceOp::average);
            fusion.synchronize();
            for (auto [w, d] : {std::pair{&m.w1, &g.w1}, {&m.b1, &g.b1}, {&m.w2, &g.w2}, {&m.b2, &g.b2}})
                for (std::size_t i = 0; i < w->size(); ++i)
                    (*w)[i] -= c.lr * (*d)[i];
            if (c.checksum)
                std::printf("step %d loss %.6f checksum %016llx\n", step, static_cast<double>(loss_buf[0]),
                            static_cast<unsigned long long>(checksum_of(m)));
            else if (rank == 0)
                std::printf("step %d loss %.6f\n", step, static_cast<double>(loss_buf[0]));
            std::fflush(stdout);
        }
        if (c.print_weights && rank == 0) {
            std::printf("weights");
            for (const auto* v : {&m.w1, &m.b1, &m.w2, &m.b2})
                for (float w : *v)
                    std::printf(" %.9g", static_cast<double>(w));
            std::printf("\n");
        }
        return 0;
    } catch (const CommError& e) {
        std::fprintf(stderr, "mlp_trainer: rank failed: %s\n", e.what());
        return 1;
    }
}
