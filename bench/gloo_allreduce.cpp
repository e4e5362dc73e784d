// Gloo's ring-chunked allreduce over its TCP transport, for bench/side_by_side.sh.
// Rendezvous through a FileStore in a folder every rank sees (the nodes share the file system).
//
// usage: gloo_allreduce RANK SIZE STORE_DIR MY_ADDR PLAN
//   PLAN: SIZE_BYTES:ITERS:WARMUP[,...]; float32 sum.
// Rank 0 prints "SIZE_BYTES TIME_US" per plan entry: the slowest rank's mean time of one allreduce.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_one.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct PlanEntry {
    std::size_t bytes;
    int iters;
    int warmup;
};

std::vector<PlanEntry> parse_plan(const std::string& text) {
    std::vector<PlanEntry> plan;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        PlanEntry e{};
        if (std::sscanf(item.c_str(), "%zu:%d:%d", &e.bytes, &e.iters, &e.warmup) != 3 || e.iters < 1)
            return {};
        plan.push_back(e);
    }
    return plan;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: gloo_allreduce RANK SIZE STORE_DIR MY_ADDR SIZE:ITERS:WARMUP[,...]\n");
        return 2;
    }
    const int rank = std::atoi(argv[1]);
    const int size = std::atoi(argv[2]);
    const auto plan = parse_plan(argv[5]);
    if (plan.empty()) {
        std::fprintf(stderr, "gloo_allreduce: bad plan '%s'\n", argv[5]);
        return 2;
    }
    gloo::transport::tcp::attr attr;
    attr.hostname = argv[4];
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(argv[3]);
    gloo::rendezvous::PrefixStore prefix("gloo_allreduce", store);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    // A 256 MiB allreduce at 1 Gbit/s takes seconds; Gloo's default 30 s leaves little margin.
    context->setTimeout(std::chrono::seconds(300));
    context->connectFullMesh(prefix, device);

    gloo::BarrierAllToOne barrier(context);
    for (const auto& entry : plan) {
        const std::size_t count = std::max<std::size_t>(1, entry.bytes / sizeof(float));
        std::vector<float> data(count);
        float* ptr = data.data();
        // Built once per size, as a framework caches its algorithm objects.
        gloo::AllreduceRingChunked<float> allreduce(context, {ptr}, static_cast<int>(count));
        double total = 0;
        for (int it = 0; it < entry.warmup + entry.iters; ++it) {
            for (std::size_t i = 0; i < count; ++i)
                data[i] = static_cast<float>((i + static_cast<std::size_t>(rank)) % 7 + 1);
            barrier.run();
            const auto t0 = std::chrono::steady_clock::now();
            allreduce.run();
            const auto t1 = std::chrono::steady_clock::now();
            if (it >= entry.warmup) total += std::chrono::duration<double>(t1 - t0).count();
        }
        // Spot check: every element must be the exact sum.
        for (std::size_t i = 0; i < count; i += 997) {
            float want = 0;
            for (int r = 0; r < size; ++r)
                want += static_cast<float>((i + static_cast<std::size_t>(r)) % 7 + 1);
            if (data[i] != want) {
                std::fprintf(stderr, "gloo_allreduce: rank %d wrong result at %zu\n", rank, i);
                return 1;
            }
        }
        double mean = total / entry.iters;
        gloo::AllreduceRingChunked<double> slowest(context, {&mean}, 1, gloo::ReductionFunction<double>::max);
        slowest.run();
        if (rank == 0) {
            std::printf("%zu %.1f\n", count * sizeof(float), mean * 1e6);
            std::fflush(stdout);
        }
    }
    // Early exits make peers still finishing throw.
    barrier.run();
    return 0;
}
