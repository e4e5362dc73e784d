#include "RankHarness.hpp"
#include "runtime/FusionQueue.hpp"
#include "runtime/ddlcomm.h"

#include <catch2/catch.hpp>
#include <cstring>

using namespace ddl::runtime;
using ddl::runtime::testing::run_ranks;

namespace {

float value(std::size_t i, int rank) {
    return static_cast<float>((i * 3 + static_cast<std::size_t>(rank)) % 11);
}

float expected_sum(std::size_t i, int n) {
    float s = 0;
    for (int r = 0; r < n; ++r)
        s += value(i, r);
    return s;
}

std::string check_allreduce(Communicator& comm, std::size_t count, DataType type, ReduceOp op) {
    const int n = comm.size();
    std::vector<float> f(count);
    std::vector<std::uint16_t> h(count);
    for (std::size_t i = 0; i < count; ++i) {
        f[i] = value(i, comm.rank());
        h[i] = float_to_half(f[i]);
    }
    if (type == DataType::float32)
        comm.allreduce(f.data(), count, type, op);
    else
        comm.allreduce(h.data(), count, type, op);
    for (std::size_t i = 0; i < count; ++i) {
        float want = expected_sum(i, n);
        if (op == ReduceOp::average) want /= static_cast<float>(n);
        const float got = type == DataType::float32 ? f[i] : half_to_float(h[i]);
        const float tolerance = op == ReduceOp::average ? (type == DataType::float16 ? 1e-2f : 1e-5f) : 0.0f;
        if (std::abs(got - want) > tolerance)
            return "count " + std::to_string(count) + " element " + std::to_string(i) + ": got " +
                   std::to_string(got) + ", want " + std::to_string(want);
    }
    return "";
}

} // namespace

TEST_CASE("allreduce sums integer-valued floats exactly for 1 to 8 ranks and awkward sizes") {
    for (int n = 1; n <= 8; ++n) {
        auto results = run_ranks(n, [&](Communicator& comm) -> std::string {
            const std::size_t sizes[] = {0,
                                         1,
                                         static_cast<std::size_t>(n - 1),
                                         static_cast<std::size_t>(n + 1),
                                         1000,
                                         (n % 3 == 1) ? (std::size_t{1} << 20) + 3 : 4099};
            for (std::size_t count : sizes)
                if (auto err = check_allreduce(comm, count, DataType::float32, ReduceOp::sum); !err.empty())
                    return err;
            return "";
        });
        for (int r = 0; r < n; ++r) {
            INFO("ranks " << n << ", rank " << r);
            CHECK(results[static_cast<std::size_t>(r)] == "");
        }
    }
}

TEST_CASE("allreduce sums float16 buffers exactly, converting through float") {
    auto results = run_ranks(3, [](Communicator& comm) -> std::string {
        for (std::size_t count : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{100003}})
            if (auto err = check_allreduce(comm, count, DataType::float16, ReduceOp::sum); !err.empty())
                return err;
        return "";
    });
    for (const auto& r : results)
        CHECK(r == "");
}

TEST_CASE("allreduce average divides the sum by the number of ranks") {
    auto results = run_ranks(4, [](Communicator& comm) -> std::string {
        if (auto err = check_allreduce(comm, 777, DataType::float32, ReduceOp::average); !err.empty())
            return err;
        return check_allreduce(comm, 777, DataType::float16, ReduceOp::average);
    });
    for (const auto& r : results)
        CHECK(r == "");
}

TEST_CASE("allreduce with distinct send and receive buffers leaves the input untouched") {
    auto results = run_ranks(2, [](Communicator& comm) -> std::string {
        std::vector<float> in(10, static_cast<float>(comm.rank() + 1)), out(10, -1);
        comm.allreduce(in.data(), out.data(), in.size(), DataType::float32, ReduceOp::sum);
        if (in[0] != static_cast<float>(comm.rank() + 1) || out[9] != 3.0f) return "wrong buffers";
        return "";
    });
    for (const auto& r : results)
        CHECK(r == "");
}

TEST_CASE("broadcast, allgather and barrier deliver every rank's data") {
    auto results = run_ranks(5, [](Communicator& comm) -> std::string {
        const int n = comm.size();
        for (int root = 0; root < n; ++root) {
            std::vector<float> buf(300001, comm.rank() == root ? static_cast<float>(root + 7) : -1.0f);
            comm.broadcast(buf.data(), buf.size(), DataType::float32, root);
            for (float v : buf)
                if (v != static_cast<float>(root + 7))
                    return "broadcast from root " + std::to_string(root) + " wrong";
        }
        std::vector<float> mine(1001, static_cast<float>(comm.rank()));
        std::vector<float> all(mine.size() * static_cast<std::size_t>(n), -1);
        comm.allgather(mine.data(), all.data(), mine.size(), DataType::float32);
        for (std::size_t i = 0; i < all.size(); ++i)
            if (all[i] != static_cast<float>(i / mine.size()))
                return "allgather wrong at " + std::to_string(i);
        for (int i = 0; i < 3; ++i)
            comm.barrier();
        return "";
    });
    for (const auto& r : results)
        CHECK(r == "");
}

TEST_CASE("fusing many small tensors gives the same result as separate allreduces") {
    auto results = run_ranks(3, [](Communicator& comm) -> std::string {
        std::vector<std::vector<float>> fused, separate;
        for (int t = 0; t < 50; ++t) {
            std::vector<float> v(static_cast<std::size_t>(1 + t * 37));
            for (std::size_t i = 0; i < v.size(); ++i)
                v[i] = value(i + static_cast<std::size_t>(t), comm.rank()) * 0.25f;
            fused.push_back(v);
            separate.push_back(v);
        }
        for (auto& v : separate)
            comm.allreduce(v.data(), v.size(), DataType::float32, ReduceOp::average);
        {
            // A small threshold forces several batches and a tensor larger than the threshold.
            FusionQueue queue(comm, FusionOptions{16 << 10, std::chrono::milliseconds(2)});
            std::vector<FusionQueue::Handle> handles;
            for (std::size_t t = 0; t < fused.size(); ++t)
                handles.push_back(queue.submit("t" + std::to_string(t), fused[t].data(), fused[t].size(),
                                               DataType::float32, ReduceOp::average));
            queue.wait(handles[3]);
            queue.synchronize();
            if (!queue.done(handles.back())) return "not done after synchronize";
        }
        for (std::size_t t = 0; t < fused.size(); ++t)
            if (std::memcmp(fused[t].data(), separate[t].data(), fused[t].size() * 4) != 0)
                return "tensor " + std::to_string(t) + " differs";
        return "";
    });
    for (const auto& r : results)
        CHECK(r == "");
}

TEST_CASE("a fused allreduce reduces every tensor in place, exactly, for 1 to 5 ranks") {
    // Tensor sizes that put chunk and segment boundaries inside and between tensors, empty tensors,
    // and runs of more tiny tensors than one sendmsg/recvmsg takes (64 iovec entries).
    std::vector<std::size_t> counts = {0, 1, 5000, 0, 3, 20000, 7};
    for (std::size_t t = 0; t < 150; ++t)
        counts.push_back(1 + t % 3);
    counts.push_back(70001);
    for (int n = 1; n <= 5; ++n) {
        for (DataType type : {DataType::float32, DataType::float16}) {
            auto results = run_ranks(
                n,
                [&](Communicator& comm) -> std::string {
                    std::vector<std::vector<float>> f;
                    std::vector<std::vector<std::uint16_t>> h;
                    std::vector<TensorSpan> spans;
                    std::size_t base = 0;
                    for (std::size_t c : counts) {
                        f.emplace_back(c);
                        h.emplace_back(c);
                        for (std::size_t i = 0; i < c; ++i) {
                            f.back()[i] = value(base + i, comm.rank());
                            h.back()[i] = float_to_half(f.back()[i]);
                        }
                        base += c;
                    }
                    for (std::size_t t = 0; t < counts.size(); ++t)
                        spans.push_back(type == DataType::float32 ? TensorSpan{f[t].data(), counts[t]}
                                                                  : TensorSpan{h[t].data(), counts[t]});
                    comm.allreduce_fused(spans, type, ReduceOp::sum);
                    base = 0;
                    for (std::size_t t = 0; t < counts.size(); ++t) {
                        for (std::size_t i = 0; i < counts[t]; ++i) {
                            const float got = type == DataType::float32 ? f[t][i] : half_to_float(h[t][i]);
                            if (got != expected_sum(base + i, comm.size()))
                                return "tensor " + std::to_string(t) + " element " + std::to_string(i) +
                                       ": got " + std::to_string(got);
                        }
                        base += counts[t];
                    }
                    return "";
                },
                [](CommOptions& o) { o.segment_bytes = 4096; });
            for (const auto& r : results)
                CHECK(r == "");
        }
    }
}

TEST_CASE("a fused allreduce of overlapping tensors reduces each as if it were alone") {
    // One buffer twice, and a tensor inside another: reduced through copies, not summed twice in place.
    auto results = run_ranks(3, [](Communicator& comm) -> std::string {
        std::vector<float> v(3000);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = value(i, comm.rank());
        const TensorSpan spans[] = {
            {v.data(), 1000}, {v.data(), 1000}, {v.data() + 1000, 2000}, {v.data() + 1500, 10}};
        comm.allreduce_fused(spans, DataType::float32, ReduceOp::sum);
        for (std::size_t i = 0; i < v.size(); ++i)
            if (v[i] != expected_sum(i, comm.size()))
                return "element " + std::to_string(i) + ": got " + std::to_string(v[i]);
        return "";
    });
    for (const auto& r : results)
        CHECK(r == "");
}

TEST_CASE("the C API reduces through an explicit init and reports invalid arguments with a message") {
    const int port = ddl::runtime::testing::free_port();
    std::vector<int> codes(2, -1);
    std::vector<float> sums(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
        threads.emplace_back([&, r] {
            ddlcomm_t* comm = nullptr;
            int rc = ddlcomm_init(&comm, r, 2, "127.0.0.1", port, "lo", 10);
            if (rc == DDLCOMM_OK) {
                float v[3] = {1, 2, static_cast<float>(r)};
                rc = ddlcomm_allreduce(comm, v, v, 3, DDLCOMM_FLOAT32, DDLCOMM_SUM);
                sums[static_cast<std::size_t>(r)] = v[0] + v[1] + v[2];
                uint64_t handle = 0;
                if (rc == DDLCOMM_OK)
                    rc = ddlcomm_fusion_submit(comm, "v", v, 3, DDLCOMM_FLOAT32, DDLCOMM_AVERAGE, &handle);
                if (rc == DDLCOMM_OK) rc = ddlcomm_fusion_wait(comm, handle);
                if (rc == DDLCOMM_OK) rc = ddlcomm_barrier(comm);
            }
            codes[static_cast<std::size_t>(r)] = rc;
            ddlcomm_destroy(comm);
        });
    }
    for (auto& t : threads)
        t.join();
    CHECK(codes == std::vector<int>{DDLCOMM_OK, DDLCOMM_OK});
    CHECK(sums == std::vector<float>{7.0f, 7.0f});
    CHECK(ddlcomm_allreduce(nullptr, nullptr, nullptr, 1, DDLCOMM_FLOAT32, DDLCOMM_SUM) ==
          DDLCOMM_ERR_INVALID);
    CHECK(std::string(ddlcomm_last_error()).find("null communicator") != std::string::npos);
}

TEST_CASE("float16 conversion round-trips every finite half value") {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const auto half = static_cast<std::uint16_t>(h);
        if ((half & 0x7c00) == 0x7c00) continue; // inf and NaN
        REQUIRE(float_to_half(half_to_float(half)) == half);
    }
    CHECK(float_to_half(65520.0f) == 0x7c00);
    CHECK(half_to_float(float_to_half(2049.0f)) == 2048.0f); // ties to even
}

TEST_CASE("a single rank's allreduce is a copy and it uses the tcp backend without a GPU") {
    auto results = run_ranks(1, [](Communicator& comm) -> std::string {
        std::vector<float> in{1, 2, 3}, out(3);
        comm.allreduce(in.data(), out.data(), 3, DataType::float32, ReduceOp::average);
        if (out != in) return "not a copy";
        return std::string(comm.backend_name()) == "tcp" ? "" : "backend " + std::string(comm.backend_name());
    });
    CHECK(results[0] == "");
}

TEST_CASE("ranks bootstrap over IPv6 and through a host name") {
    for (const char* master : {"::1", "localhost"}) {
        INFO(master);
        auto results = run_ranks(
            3,
            [](Communicator& comm) { return check_allreduce(comm, 1001, DataType::float32, ReduceOp::sum); },
            [&](CommOptions& o) { o.master_addr = master; });
        for (const auto& r : results)
            CHECK(r == "");
    }
}
