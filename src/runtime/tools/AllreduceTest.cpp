// ddl-allreduce-test: allreduce over a size sweep (or one size) with integer-valued data, checked
// exactly, reported as an nccl-tests style table (or JSON). Exit status 1 on a wrong result, 2 on bad
// arguments, 3 on a communication failure. With the NCCL backend the data lives on the GPU, as in
// nccl-tests and in training (filled and checked outside the timed call); --host-buffers times host memory
// instead, which the backend copies to the GPU and back in every call.
#include "runtime/Communicator.hpp"
#include "runtime/DeviceMemory.hpp"
#include "util/Strings.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace ddl::runtime;

namespace {

struct Args {
    std::size_t min_bytes = 1u << 20;
    std::size_t max_bytes = 64u << 20;
    double factor = 2;
    int iters = 5;
    int warmup = 1;
    DataType type = DataType::float32;
    ReduceOp op = ReduceOp::sum;
    bool json = false;
    bool host_buffers = false;
};

bool parse_size(const std::string& text, std::size_t& out) {
    if (text.empty()) return false;
    std::size_t mult = 1;
    std::string digits = text;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
        mult = 1u << 10;
        break;
    case 'M':
        mult = 1u << 20;
        break;
    case 'G':
        mult = 1u << 30;
        break;
    default:
        break;
    }
    if (mult != 1) digits.pop_back();
    auto v = ddl::parse_int(digits);
    if (!v || *v < 0) return false;
    out = static_cast<std::size_t>(*v) * mult;
    return true;
}

void usage() {
    std::fprintf(stderr,
                 "usage: ddl-allreduce-test [-b MIN] [-e MAX] [-f FACTOR] [--size S] [-n ITERS] [-w WARMUP]\n"
                 "                          [--type float|half] [--op sum|avg] [--host-buffers] [--json]\n"
                 "sizes in bytes, with K/M/G suffixes (default sweep 1M..64M, factor 2).\n"
                 "With backend nccl the buffers are on the GPU unless --host-buffers.\n"
                 "Rank/size/master come from DDL_*, OMPI_*, SLURM_* or torchrun variables.\n");
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
        else if (arg == "--host-buffers")
            a.host_buffers = true;
        else if ((arg == "-b" || arg == "--minbytes") && value(v) && parse_size(v, a.min_bytes))
            continue;
        else if ((arg == "-e" || arg == "--maxbytes") && value(v) && parse_size(v, a.max_bytes))
            continue;
        else if (arg == "--size" && value(v) && parse_size(v, a.min_bytes))
            a.max_bytes = a.min_bytes;
        else if ((arg == "-f" || arg == "--factor") && value(v))
            a.factor = std::max(1.01, std::atof(v.c_str()));
        else if ((arg == "-n" || arg == "--iters") && value(v))
            a.iters = std::max(1, std::atoi(v.c_str()));
        else if ((arg == "-w" || arg == "--warmup") && value(v))
            a.warmup = std::max(0, std::atoi(v.c_str()));
        else if (arg == "--type" && value(v) && (v == "float" || v == "half"))
            a.type = v == "half" ? DataType::float16 : DataType::float32;
        else if (arg == "--op" && value(v) && (v == "sum" || v == "avg"))
            a.op = v == "avg" ? ReduceOp::average : ReduceOp::sum;
        else
            return false;
    }
    return a.min_bytes <= a.max_bytes;
}

// Rank r's element i; small integers so that sums are exact in float and half.
float input_value(std::size_t i, int rank) {
    return static_cast<float>((i + static_cast<std::size_t>(rank)) % 7 + 1);
}

float expected_value(std::size_t i, int size, ReduceOp op) {
    float sum = 0;
    for (int r = 0; r < size; ++r)
        sum += input_value(i, r);
    return op == ReduceOp::average ? sum / static_cast<float>(size) : sum;
}

void fill(std::vector<std::uint16_t>& buf, std::size_t count, DataType type, int rank) {
    if (type == DataType::float32) {
        auto* f = reinterpret_cast<float*>(buf.data());
        for (std::size_t i = 0; i < count; ++i)
            f[i] = input_value(i, rank);
    } else {
        for (std::size_t i = 0; i < count; ++i)
            buf[i] = float_to_half(input_value(i, rank));
    }
}

std::size_t count_wrong(const std::vector<std::uint16_t>& buf, std::size_t count, DataType type, int size,
                        ReduceOp op) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const float want = expected_value(i, size, op);
        if (type == DataType::float32) {
            if (reinterpret_cast<const float*>(buf.data())[i] != want) ++wrong;
        } else if (buf[i] != float_to_half(want)) {
            ++wrong;
        }
    }
    return wrong;
}

// CPU seconds (user + system) this thread has used: what one rank's collective costs the machine,
// apart from the kernel work done for it in other contexts (softirq of the receiving side).
double thread_cpu_seconds() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    auto secs = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    return secs(ru.ru_utime) + secs(ru.ru_stime);
}

} // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parse_args(argc, argv, args)) {
        usage();
        return 2;
    }
    try {
        auto comm = Communicator::from_env();
        const int n = comm->size();
        const std::size_t esize = element_size(args.type);
        std::vector<std::uint16_t> buf((args.max_bytes + 3) / 2 + 2);
        std::unique_ptr<DeviceMemory> device;
        if (std::string(comm->backend_name()) == "nccl" && !args.host_buffers)
            device = std::make_unique<DeviceMemory>(buf.size() * sizeof buf[0], comm->local_rank());
        const char* where = device ? "device" : "host";
        std::string json = "{\"ranks\": " + std::to_string(n) + ", \"backend\": \"" + comm->backend_name() +
                           "\", \"op\": \"" + (args.op == ReduceOp::sum ? "sum" : "avg") +
                           "\", \"buffers\": \"" + where + "\", \"libraries\": \"" +
                           comm->backend_libraries() + "\", \"results\": [";
        if (comm->rank() == 0 && !args.json) {
            std::printf("# ddl-allreduce-test: %d ranks, backend %s, op %s, %s buffers, %d iterations (+%d "
                        "warm-up)\n",
                        n, comm->backend_name(), args.op == ReduceOp::sum ? "sum" : "avg", where, args.iters,
                        args.warmup);
            if (const std::string libs = comm->backend_libraries(); !libs.empty())
                std::printf("# libraries: %s\n", libs.c_str());
            std::printf("# %12s %12s %6s %12s %12s %12s %8s\n", "size(B)", "count", "type", "time(us)",
                        "algbw(GB/s)", "busbw(GB/s)", "#wrong");
        }
        std::size_t total_wrong = 0;
        bool first = true;
        for (double size = static_cast<double>(args.min_bytes);; size *= args.factor) {
            const std::size_t bytes =
                std::min(args.max_bytes, static_cast<std::size_t>(size)) / esize * esize;
            const std::size_t count = bytes / esize;
            double seconds = 0, cpu = 0;
            float wrong = 0;
            for (int it = 0; it < args.warmup + args.iters; ++it) {
                fill(buf, count, args.type, comm->rank());
                if (device) device->upload(buf.data(), bytes);
                void* data = device ? device->data() : buf.data();
                comm->barrier();
                const double c0 = thread_cpu_seconds();
                const auto t0 = std::chrono::steady_clock::now();
                comm->allreduce(data, count, args.type, args.op);
                const auto t1 = std::chrono::steady_clock::now();
                if (device) device->download(buf.data(), bytes);
                if (it >= args.warmup) {
                    seconds += std::chrono::duration<double>(t1 - t0).count();
                    cpu += thread_cpu_seconds() - c0;
                }
                wrong += static_cast<float>(count_wrong(buf, count, args.type, n, args.op));
            }
            // Every rank's errors count; the slowest rank's time is the collective's time.
            float stats[3] = {wrong, static_cast<float>(seconds), static_cast<float>(cpu)};
            std::vector<float> all(3 * static_cast<std::size_t>(n));
            comm->allgather(stats, all.data(), 3, DataType::float32);
            double worst = 0, wrong_total = 0, cpu_total = 0;
            for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
                wrong_total += all[3 * r];
                worst = std::max(worst, static_cast<double>(all[3 * r + 1]));
                cpu_total += all[3 * r + 2];
            }
            const double cpu_per_call = args.iters > 0 ? cpu_total / n / args.iters : 0; // mean over ranks
            total_wrong += static_cast<std::size_t>(wrong_total);
            const double t = worst / args.iters;
            const double algbw = t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0;
            const double busbw = algbw * 2.0 * (n - 1) / n;
            if (comm->rank() == 0) {
                if (args.json) {
                    char row[256];
                    std::snprintf(row, sizeof row,
                                  "%s{\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"time_us\": %.1f, "
                                  "\"algbw\": %.4f, \"busbw\": %.4f, \"cpu_us\": %.1f, \"wrong\": %.0f}",
                                  first ? "" : ", ", bytes, count, data_type_name(args.type), t * 1e6, algbw,
                                  busbw, cpu_per_call * 1e6, wrong_total);
                    json += row;
                } else {
                    std::printf("  %12zu %12zu %6s %12.1f %12.4f %12.4f %8.0f\n", bytes, count,
                                data_type_name(args.type), t * 1e6, algbw, busbw, wrong_total);
                    std::fflush(stdout);
                }
            }
            first = false;
            if (bytes >= args.max_bytes / esize * esize) break;
        }
        if (comm->rank() == 0) {
            if (args.json)
                std::printf("%s], \"wrong\": %zu}\n", json.c_str(), total_wrong);
            else
                std::printf("# %s\n", total_wrong == 0 ? "all results exact" : "WRONG RESULTS");
        }
        comm->barrier(); // early exits would look like failures to peers still finishing
        return total_wrong == 0 ? 0 : 1;
    } catch (const CommError& e) {
        std::fprintf(stderr, "ddl-allreduce-test: %s\n", e.what());
        return 3;
    }
}
