// ddl-train-bench: data-parallel training steps with real computation and a real model's gradient
// layout, to see how much of a step the network costs once tensor fusion overlaps it with backprop.
//
// One step on every rank: forward compute, then backward compute layer by layer (last layer first);
// each gradient tensor is submitted to the FusionQueue as soon as its layer's backward is done, so the
// allreduce of late layers overlaps the backward of early ones; then synchronize and apply (SGD).
// The compute is sgemm on synthetic data: per sample, `--compute-scale` times the real network's
// training FLOPs (3x forward), attributed layer by layer from the real architecture.
//
// Exit status: 0 ok, 2 bad arguments, 3 communication failure.
#include "runtime/Communicator.hpp"
#include "runtime/FusionQueue.hpp"
#include "runtime/tools/ModelProfile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifdef DDL_HAVE_CBLAS
#include <cblas.h>
#endif

using namespace ddl::runtime;

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
    std::string profile = "resnet50";
    int batch = 32;
    int steps = 10;
    int warmup = 2;
    double compute_scale = 0.01;
    int threads = 1;
    bool json = false;
    bool fused_vs_single = false;
    // DDL_PROGRESS=1 (ddl bench train sets it): rank 0 says "ddl-progress step K/T SAMPLES_PER_S" on
    // stderr, at most once a second.
    bool progress = false;
};

void usage() {
    std::fprintf(
        stderr,
        "usage: ddl-train-bench [--profile resnet50|resnet101|custom:N1,N2,...] [--batch B] [--steps S]\n"
        "                       [--warmup W] [--compute-scale F] [--threads T] [--json]\n"
        "       ddl-train-bench --fused-vs-single [--profile P] [--steps S] [--warmup W] [--json]\n"
        "--batch is per rank. Compute per sample is F (default 0.01) times the real network's training\n"
        "FLOPs (ResNet-50: 3 x 8.2 GFLOP). --threads: BLAS threads per rank (default 1).\n"
        "Rank/size/master come from DDL_*, OMPI_*, SLURM_* or torchrun variables.\n");
}

bool positive_int(const std::string& text, int& out, int min) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < min || v > 1'000'000) return false;
    out = static_cast<int>(v);
    return true;
}

bool parse_args(int argc, char** argv, Args& a) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&](std::string& out) {
            if (i + 1 >= argc) return false;
            out = argv[++i];
            return true;
        };
        std::string v;
        if (arg == "--json")
            a.json = true;
        else if (arg == "--fused-vs-single")
            a.fused_vs_single = true;
        else if (arg == "--profile" && value(v))
            a.profile = v;
        else if (arg == "--batch" && value(v) && positive_int(v, a.batch, 1))
            continue;
        else if (arg == "--steps" && value(v) && positive_int(v, a.steps, 1))
            continue;
        else if (arg == "--warmup" && value(v) && positive_int(v, a.warmup, 0))
            continue;
        else if (arg == "--threads" && value(v) && positive_int(v, a.threads, 1))
            continue;
        else if (arg == "--compute-scale" && value(v)) {
            char* end = nullptr;
            a.compute_scale = std::strtod(v.c_str(), &end);
            if (*end != '\0' || !(a.compute_scale >= 0) || a.compute_scale > 1) return false;
        } else
            return false;
    }
    return true;
}

// Matrix products on synthetic data with a fixed inner shape; a FLOP budget becomes a row count.
class SyntheticCompute {
public:
    static constexpr int k_dim = 256;
    static constexpr int k_max_rows = 1024;

    SyntheticCompute()
        : m_a(static_cast<std::size_t>(k_max_rows) * k_dim), m_w(static_cast<std::size_t>(k_dim) * k_dim),
          m_c(static_cast<std::size_t>(k_max_rows) * k_dim) {
        for (std::size_t i = 0; i < m_a.size(); ++i)
            m_a[i] = static_cast<float>(i % 17) * 0.01f;
        for (std::size_t i = 0; i < m_w.size(); ++i)
            m_w[i] = static_cast<float>(i % 13) * 0.001f;
    }

    // Spends `flops` FLOPs; fractions of a row carry over, so the total over a step is exact.
    void run(double flops) {
        m_carry += flops / (2.0 * k_dim * k_dim);
        auto rows = static_cast<long>(m_carry);
        m_carry -= static_cast<double>(rows);
        while (rows > 0) {
            const int m = static_cast<int>(std::min<long>(rows, k_max_rows));
            gemm(m);
            rows -= m;
        }
    }

    // Writes a gradient from the last product, as a layer's weight-gradient kernel would.
    void emit_gradient(float* grad, std::size_t count) const {
        for (std::size_t i = 0; i < count; ++i)
            grad[i] = m_c[i % m_c.size()] * 1e-3f;
    }

private:
    void gemm(int m) {
#ifdef DDL_HAVE_CBLAS
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k_dim, k_dim, 1.0f, m_a.data(), k_dim,
                    m_w.data(), k_dim, 0.0f, m_c.data(), k_dim);
#else
        // Without a BLAS the numbers are slower but the structure of a step is the same.
        for (int r = 0; r < m; ++r) {
            float* c = &m_c[static_cast<std::size_t>(r) * k_dim];
            std::fill(c, c + k_dim, 0.0f);
            for (int k = 0; k < k_dim; ++k) {
                const float a = m_a[static_cast<std::size_t>(r) * k_dim + static_cast<std::size_t>(k)];
                const float* w = &m_w[static_cast<std::size_t>(k) * k_dim];
                for (int j = 0; j < k_dim; ++j)
                    c[j] += a * w[j];
            }
        }
#endif
    }

    std::vector<float> m_a, m_w, m_c;
    double m_carry = 0;
};

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Every rank's {a, b}; the collective's figure is the slowest rank's.
std::vector<double> gather_pairs(Communicator& comm, double a, double b) {
    const float mine[2] = {static_cast<float>(a), static_cast<float>(b)};
    std::vector<float> all(2 * static_cast<std::size_t>(comm.size()));
    comm.allgather(mine, all.data(), 2, DataType::float32);
    return {all.begin(), all.end()};
}

struct StepStats {
    double step_s = 0;
    double compute_s = 0;
};

StepStats train(Communicator& comm, const ModelProfile& profile, const Args& args) {
    std::vector<std::size_t> offsets;
    std::size_t total = 0;
    for (const auto& t : profile.tensors) {
        offsets.push_back(total);
        total += t.count;
    }
    std::vector<float> weights(total, 0.01f);
    std::vector<float> grads(total, 0.0f);
    SyntheticCompute compute;
    const double per_sample = args.compute_scale * static_cast<double>(args.batch);

    StepStats sum;
    FusionQueue queue(comm);
    const int steps = args.warmup + args.steps;
    auto said = Clock::now();
    int said_at = 0;
    for (int step = 0; step < steps; ++step) {
        const auto t_step = Clock::now();
        double compute_s = 0;
        auto t0 = Clock::now();
        compute.run(per_sample * profile.forward_flops());
        for (std::size_t i = 0; i < profile.tensors.size(); ++i) {
            const auto& t = profile.tensors[i];
            // Backward costs twice the forward: the input gradient and the weight gradient.
            compute.run(per_sample * 2.0 * t.forward_flops);
            compute.emit_gradient(grads.data() + offsets[i], t.count);
            compute_s += seconds_since(t0);
            (void)queue.submit(t.name, grads.data() + offsets[i], t.count, DataType::float32,
                               ReduceOp::average);
            t0 = Clock::now();
        }
        queue.synchronize();
        t0 = Clock::now();
        for (std::size_t j = 0; j < total; ++j)
            weights[j] -= 0.1f * grads[j];
        compute_s += seconds_since(t0);
        if (step >= args.warmup) {
            sum.step_s += seconds_since(t_step);
            sum.compute_s += compute_s;
        }
        if (args.progress && comm.rank() == 0 && (step + 1 == steps || seconds_since(said) >= 1.0)) {
            // Samples a second over every rank since the last line (rank 0's pace; the ring keeps them even).
            const double rate = static_cast<double>(args.batch) * comm.size() * (step + 1 - said_at) /
                                std::max(seconds_since(said), 1e-9);
            std::fprintf(stderr, "ddl-progress step %d/%d %.1f\n", step + 1, steps, rate);
            std::fflush(stderr);
            said = Clock::now();
            said_at = step + 1;
        }
    }
    return {sum.step_s / args.steps, sum.compute_s / args.steps};
}

int run_train(Communicator& comm, const ModelProfile& profile, const Args& args) {
    const StepStats mine = train(comm, profile, args);
    const auto all = gather_pairs(comm, mine.step_s, mine.compute_s);
    std::size_t slowest = 0;
    for (std::size_t r = 1; r < static_cast<std::size_t>(comm.size()); ++r)
        if (all[2 * r] > all[2 * slowest]) slowest = r;
    const double step_s = all[2 * slowest], compute_s = all[2 * slowest + 1];
    const double exposed = std::max(0.0, step_s - compute_s);
    const int n = comm.size();
    const double rate_rank = step_s > 0 ? args.batch / step_s : 0;
    if (comm.rank() == 0) {
        if (args.json) {
            std::printf(
                "{\"profile\":\"%s\",\"ranks\":%d,\"batch\":%d,\"tensors\":%zu,\"params\":%zu,\"steps\":%d,"
                "\"step_s\":%.6f,\"compute_s\":%.6f,\"comm_exposed_s\":%.6f,\"samples_per_s\":%.3f,"
                "\"samples_per_s_rank\":%.3f}\n",
                profile.name.c_str(), n, args.batch, profile.tensors.size(), profile.params(), args.steps,
                step_s, compute_s, exposed, rate_rank * n, rate_rank);
        } else {
            std::printf(
                "# ddl-train-bench: %s, %zu tensors, %zu parameters (%.2f MiB fp32), %d ranks, backend %s\n",
                profile.name.c_str(), profile.tensors.size(), profile.params(),
                static_cast<double>(profile.bytes()) / (1 << 20), n, comm.backend_name());
            std::printf(
                "# batch %d per rank, %d steps (+%d warm-up), compute %.3g GFLOP per sample (scale %g)\n",
                args.batch, args.steps, args.warmup, 3 * profile.forward_flops() * args.compute_scale / 1e9,
                args.compute_scale);
            std::printf("  %-22s %12.4f\n  %-22s %12.4f\n  %-22s %12.4f  (%.0f%% of the step)\n"
                        "  %-22s %12.1f\n  %-22s %12.1f\n",
                        "step (s)", step_s, "compute (s)", compute_s, "comm exposed (s)", exposed,
                        step_s > 0 ? 100 * exposed / step_s : 0, "samples/s (all ranks)", rate_rank * n,
                        "samples/s per rank", rate_rank);
        }
    }
    return 0;
}

// One step's gradients through the FusionQueue vs one allreduce of the same bytes: the price of
// many tensors (packing, cycle latency, per-batch agreement) over a single big buffer.
int run_fused_vs_single(Communicator& comm, const ModelProfile& profile, const Args& args) {
    std::vector<float> grads(profile.params(), 1.0f);
    double fused_s = 0, single_s = 0;
    for (int it = 0; it < args.warmup + args.steps; ++it) {
        comm.barrier();
        double fused = 0;
        {
            FusionQueue queue(comm);
            const auto t0 = Clock::now();
            std::size_t offset = 0;
            for (const auto& t : profile.tensors) {
                (void)queue.submit(t.name, grads.data() + offset, t.count, DataType::float32,
                                   ReduceOp::average);
                offset += t.count;
            }
            queue.synchronize();
            fused = seconds_since(t0);
        }
        comm.barrier();
        const auto t0 = Clock::now();
        comm.allreduce(grads.data(), grads.size(), DataType::float32, ReduceOp::average);
        const double single = seconds_since(t0);
        if (it >= args.warmup) {
            fused_s += fused;
            single_s += single;
        }
    }
    const auto all = gather_pairs(comm, fused_s / args.steps, single_s / args.steps);
    double fused = 0, single = 0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(comm.size()); ++r) {
        fused = std::max(fused, all[2 * r]);
        single = std::max(single, all[2 * r + 1]);
    }
    const double ratio = single > 0 ? fused / single : 0;
    if (comm.rank() == 0) {
        if (args.json) {
            std::printf(
                "{\"mode\":\"fused-vs-single\",\"profile\":\"%s\",\"ranks\":%d,\"tensors\":%zu,\"bytes\":%zu,"
                "\"iters\":%d,\"fused_s\":%.6f,\"single_s\":%.6f,\"ratio\":%.4f}\n",
                profile.name.c_str(), comm.size(), profile.tensors.size(), profile.bytes(), args.steps, fused,
                single, ratio);
        } else {
            std::printf(
                "# ddl-train-bench --fused-vs-single: %s, %zu tensors, %zu bytes, %d ranks, %d iterations\n",
                profile.name.c_str(), profile.tensors.size(), profile.bytes(), comm.size(), args.steps);
            std::printf("  %-34s %10.4f s\n  %-34s %10.4f s\n  %-34s %10.3f  (target <= 1.10)\n",
                        "fused allreduce of all tensors", fused, "one allreduce of the same bytes", single,
                        "ratio fused / single", ratio);
        }
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parse_args(argc, argv, args)) {
        usage();
        return 2;
    }
    const char* progress = std::getenv("DDL_PROGRESS");
    args.progress = progress != nullptr && std::string(progress) == "1";
    auto profile = make_model_profile(args.profile);
    if (!profile) {
        std::fprintf(stderr, "ddl-train-bench: %s\n", profile.error().message.c_str());
        return 2;
    }
#ifdef DDL_HAVE_OPENBLAS
    // Ranks share the machine's cores; OpenBLAS would otherwise start one thread per core in each.
    openblas_set_num_threads(args.threads);
#endif
    try {
        auto comm = Communicator::from_env();
        const int rc = args.fused_vs_single ? run_fused_vs_single(*comm, *profile, args)
                                            : run_train(*comm, *profile, args);
        std::fflush(stdout);
        comm->barrier(); // early exits would look like failures to peers still finishing
        return rc;
    } catch (const CommError& e) {
        std::fprintf(stderr, "ddl-train-bench: %s\n", e.what());
        return 3;
    }
}
