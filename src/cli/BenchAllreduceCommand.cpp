// `ddl bench allreduce`: an nccl-tests style allreduce table, each size compared with what the links allow.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Launch.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "util/Format.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <iostream>

namespace ddl::cli {
namespace {

struct BenchArgs {
    RunArgs run; // cluster, hostfile, np, iface
    std::string sizes = "1MiB:64MiB";
    int iters = 5;
    int warmup = 1;
    double link_gbit = 0;                       // 0: from the spec
    std::string format = "text";                // text | json | csv
    std::uint64_t min_bytes = 0, max_bytes = 0; // --sizes, read by prepare()
};

void add_options(CLI::App& sub, BenchArgs& b) {
    add_cluster_ref(sub, b.run.cluster, ClusterRef::option);
    sub.add_option("--hostfile", b.run.hostfile, "Hostfile naming nodes of the cluster");
    sub.add_option("-n,--np", b.run.np, "Number of ranks (default: every slot)")
        ->check(CLI::Range(1, 1 << 20));
    sub.add_option("--sizes", b.sizes, "MIN:MAX message sizes, doubling")->capture_default_str();
    sub.add_option("--iters", b.iters, "Timed iterations per size")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    sub.add_option("--warmup", b.warmup, "Untimed iterations per size")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    sub.add_option("--link-gbit", b.link_gbit, "Link bandwidth for the limit (default: the spec's)")
        ->check(CLI::Range(0.001, 100000.0));
    sub.add_option("--iface", b.run.iface, "Network interface");
    add_table_format(sub, b.format);
}

Result<std::uint64_t> parse_size(const std::string& text) {
    static const std::vector<std::pair<std::string, std::uint64_t>> units{{"GiB", 1ULL << 30},
                                                                          {"MiB", 1ULL << 20},
                                                                          {"KiB", 1ULL << 10},
                                                                          {"G", 1ULL << 30},
                                                                          {"M", 1ULL << 20},
                                                                          {"K", 1ULL << 10},
                                                                          {"B", 1}};
    for (const auto& [suffix, factor] : units) {
        if (!ends_with(text, suffix)) continue;
        auto n = parse_int(text.substr(0, text.size() - suffix.size()));
        if (!n || *n <= 0) break;
        return static_cast<std::uint64_t>(*n) * factor;
    }
    if (auto n = parse_int(text); n && *n > 0) return static_cast<std::uint64_t>(*n);
    return Error{"\"" + text + "\" is not a size (e.g. 4B, 64KiB, 256MiB)"};
}

// The options alone, before the cluster is opened.
std::optional<int> prepare(const Invocation& inv, BenchArgs& b) {
    auto colon = b.sizes.find(':');
    auto lo = parse_size(b.sizes.substr(0, colon));
    auto hi = parse_size(colon == std::string::npos ? b.sizes : b.sizes.substr(colon + 1));
    if (!lo || !hi || *lo > *hi)
        return inv.fail("--sizes " + b.sizes + ": give MIN:MAX, e.g. 4B:256MiB", exit_code::k_bad_input);
    if (b.iters < 1 || b.warmup < 0)
        return inv.fail("--iters must be >= 1 and --warmup >= 0", exit_code::k_bad_input);
    b.min_bytes = *lo;
    b.max_bytes = *hi;
    return std::nullopt;
}

// ddl-allreduce-test's results with the bound: ring allreduce of S bytes over N ranks on links of B bit/s
// takes >= 2(N-1)/N * S/B, so busbw can reach at most B/8 bytes/s.
nlohmann::json with_limits(const std::string& cluster, const nlohmann::json& j, std::uint64_t link_bps) {
    double limit_gbs = static_cast<double>(link_bps) / 8e9;
    int n = j.value("ranks", 0);
    nlohmann::json out{{"cluster", cluster},
                       {"ranks", n},
                       {"backend", j.value("backend", "")},
                       {"buffers", j.value("buffers", "host")},
                       {"link_gbit", static_cast<double>(link_bps) / 1e9},
                       {"results", nlohmann::json::array()}};
    for (const auto& r : j["results"]) {
        double size = r.value("size", 0.0), busbw = r.value("busbw", 0.0);
        nlohmann::json row = r;
        if (limit_gbs > 0 && n > 1) {
            row["limit_time_us"] = 2.0 * (n - 1) / n * size / (static_cast<double>(link_bps) / 8.0) * 1e6;
            row["limit_busbw"] = limit_gbs;
            row["of_limit"] = busbw / limit_gbs;
        }
        out["results"].push_back(row);
    }
    out["wrong"] = j.value("wrong", 0);
    return out;
}

void print_csv(const nlohmann::json& out) {
    std::cout << "size_bytes,time_us,algbw_gbs,busbw_gbs,limit_time_us,limit_busbw_gbs,of_limit,wrong\n";
    for (const auto& r : out["results"])
        std::cout << r.value("size", 0) << "," << r.value("time_us", 0.0) << "," << r.value("algbw", 0.0)
                  << "," << r.value("busbw", 0.0) << "," << r.value("limit_time_us", 0.0) << ","
                  << r.value("limit_busbw", 0.0) << "," << r.value("of_limit", 0.0) << ","
                  << r.value("wrong", 0) << "\n";
}

void print_text(const nlohmann::json& out, std::uint64_t link_bps) {
    double limit_gbs = static_cast<double>(link_bps) / 8e9;
    std::cout << strprintf(
        "# allreduce on cluster %s: %d ranks, backend %s (%s buffers), float32 sum; GB/s = 1e9 B/s\n",
        out["cluster"].get<std::string>().c_str(), out["ranks"].get<int>(),
        out["backend"].get<std::string>().c_str(), out.value("buffers", "host").c_str());
    if (limit_gbs > 0)
        std::cout << strprintf("# limit: links of %s -> ring time >= 2(N-1)/N * S/B, busbw <= %.4f GB/s\n",
                               format_rate(link_bps).c_str(), limit_gbs);
    else
        std::cout << strprintf("# limit: link bandwidth unknown (pass --link-gbit to compare)\n");
    std::cout << strprintf("%14s %12s %12s %12s %14s %9s %7s\n", "size(B)", "time(us)", "algbw(GB/s)",
                           "busbw(GB/s)", "limit_time(us)", "of_limit", "wrong");
    for (const auto& r : out["results"]) {
        std::cout << strprintf("%14lld %12.1f %12.4f %12.4f", r.value("size", 0LL), r.value("time_us", 0.0),
                               r.value("algbw", 0.0), r.value("busbw", 0.0));
        if (r.contains("limit_time_us"))
            std::cout << strprintf(" %14.1f %8.1f%%", r.value("limit_time_us", 0.0),
                                   100.0 * r.value("of_limit", 0.0));
        else
            std::cout << strprintf(" %14s %9s", "-", "-");
        std::cout << strprintf(" %7lld\n", r.value("wrong", 0LL));
    }
}

int bench_allreduce(const Invocation& inv, const BenchArgs& b) {
    auto& ctx = *inv.cluster->ctx;
    RunArgs a = b.run;
    a.command = {"ddl-allreduce-test",
                 "-b",
                 std::to_string(b.min_bytes),
                 "-e",
                 std::to_string(b.max_bytes),
                 "-f",
                 "2",
                 "-n",
                 std::to_string(b.iters),
                 "-w",
                 std::to_string(b.warmup),
                 "--json"};
    auto ran = run_tool_json(ctx, a);
    if (!ran) return inv.fail(ran.error().message, exit_code::k_failure);
    std::uint64_t link_bps =
        b.link_gbit > 0 ? static_cast<std::uint64_t>(b.link_gbit * 1e9) : spec_link_bps(ctx.spec);
    auto out = with_limits(ctx.state.cluster, *ran, link_bps);
    if (b.format == "json")
        std::cout << out.dump(2) << "\n";
    else if (b.format == "csv")
        print_csv(out);
    else
        print_text(out, link_bps);
    return out["wrong"].get<long long>() == 0 ? exit_code::k_ok : exit_code::k_failure;
}

} // namespace

CommandBody bench_allreduce_command() {
    auto b = std::make_shared<BenchArgs>();
    return {.add_options = [b](CLI::App& sub) { add_options(sub, *b); },
            .prepare = [b](Invocation& inv) { return prepare(inv, *b); },
            .cluster = [b] { return b->run.cluster; },
            .action =
                [b](Invocation& inv) {
                    if (inv.g.json) b->format = "json";
                    return bench_allreduce(inv, *b);
                }};
}

} // namespace ddl::cli
