// `ddl bench io`: read-and-decode throughput of an image dataset through a real PyTorch DataLoader on k
// nodes at once (python3 -m ddl_data bench), from the shared folder or each node's own disk, one file per
// image or tar shards, W loader workers: per node and in total as nodes are added; CSV, JSON and a PNG.
#include "cli/BenchData.hpp"
#include "cli/CommandTable.hpp"
#include "cli/IoBench.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "util/Files.hpp"
#include "util/Format.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

namespace ddl::cli {
namespace {

void add_options(CLI::App& sub, IoBenchArgs& b) {
    add_cluster_ref(sub, b.run.cluster, ClusterRef::positional_or_only);
    sub.add_option(
           "--source", b.sources,
           "shared (the shared folder, services.nfs) and/or local (each node's /var/lib/ddl/data), comma "
           "separated")
        ->capture_default_str();
    sub.add_option("--format", b.formats,
                   "files (one JPEG per image) and/or shards (tar shards), comma separated")
        ->capture_default_str();
    sub.add_option("--workers", b.workers,
                   "DataLoader worker processes per node: 0..64, comma separated or A..B")
        ->capture_default_str();
    sub.add_option("--nodes", b.nodes, "Node counts: 1..N or 1,2,4 (default: 1..all)");
    sub.add_option("--images", b.dataset.images, "Images in the dataset (generated once if absent)")
        ->check(CLI::Range(1, 10000000))
        ->capture_default_str();
    sub.add_option("--classes", b.dataset.classes, "Classes in the dataset")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    sub.add_option("--seed", b.dataset.seed, "The generator's seed")
        ->check(CLI::Range(0, 1 << 30))
        ->capture_default_str();
    sub.add_option("--shards", b.dataset.shards, "Tar shards the dataset is packed into")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    sub.add_option("--batch", b.batch, "DataLoader batch size")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    sub.add_option("--image-size", b.image_size, "Side of the random crop each image is decoded to")
        ->check(CLI::Range(16, 1024))
        ->capture_default_str();
    sub.add_flag(
        "--no-decode", [&b](std::int64_t) { b.decode = false; },
        "Read the bytes only: the storage's rate without the CPU's decoding");
    sub.add_flag("--keep-cache", b.keep_cache, "Do not drop the nodes' page cache before each run");
    sub.add_option("--python", b.python, "The nodes' Python with torch (and torchvision, PIL)")
        ->check(k_non_empty)
        ->capture_default_str();
    sub.add_option("--out", b.out_dir, "Folder for io.csv, io.json, io.png")
        ->check(k_non_empty)
        ->capture_default_str();
    sub.add_option("--chart", b.chart, "The chart's PNG (default: OUT/io.png)")->check(k_non_empty);
    sub.add_option("--output", b.output, "text, json or csv")
        ->check(CLI::IsMember({"text", "json", "csv"}))
        ->capture_default_str();
}

// One pass through the launcher on the first `nodes` nodes: rank 0's JSON line.
Result<nlohmann::json> run_once(Context& ctx, const IoBenchArgs& b, const std::string& source,
                                const std::string& format, int workers, int nodes) {
    RunArgs a = b.run;
    a.max_nodes = nodes;
    a.command = {b.python,       "-m",
                 "ddl_data",     "bench",
                 "--data",       bench_data_path(ctx.spec, source, b.dataset.name()),
                 "--format",     format,
                 "--workers",    std::to_string(workers),
                 "--batch",      std::to_string(b.batch),
                 "--image-size", std::to_string(b.image_size),
                 "--json"};
    if (!b.decode) a.command.push_back("--no-decode");
    return run_tool_json(ctx, a);
}

std::size_t run_count(const IoSweep& sw) {
    return sw.sources.size() * sw.formats.size() * sw.workers.size() * sw.nodes.size();
}

// Every (source, format, workers) series over the node counts; rows in that order. Each run's line says
// how many are done and an estimate of the time left from the runs so far.
Status run_sweep(Context& ctx, const IoBenchArgs& b, const IoSweep& sw, std::string& cache,
                 std::vector<IoRow>& rows) {
    const std::size_t total = run_count(sw);
    const auto started = std::chrono::steady_clock::now();
    for (const auto& source : sw.sources)
        for (const auto& format : sw.formats)
            for (int workers : sw.workers) {
                double base = 0;
                for (int n : sw.nodes) {
                    cache = b.keep_cache ? "page cache kept (--keep-cache): reads may come from memory"
                                         : drop_page_caches(ctx);
                    auto j = run_once(ctx, b, source, format, workers, n);
                    if (!j)
                        return Error{source + ", " + format + ", " + std::to_string(workers) + " workers, " +
                                     std::to_string(n) + " node(s): " + j.error().message};
                    IoRow r = io_row_of(*j, source, format, workers, n);
                    if (n == 1) base = r.images_per_s;
                    r.efficiency = base > 0 ? r.images_per_s / (n * base) : 0;
                    rows.push_back(std::move(r));
                    const double per_run =
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() /
                        double(rows.size());
                    const auto left_s = static_cast<long long>(per_run * double(total - rows.size()));
                    std::cerr << strprintf("  %-6s %-6s workers %2d nodes %2d: %9.1f images/s %8.2f MB/s  "
                                           "[%zu/%zu, about %lldm%02llds left]\n",
                                           source.c_str(), format.c_str(), workers, n,
                                           rows.back().images_per_s, rows.back().mb_per_s, rows.size(), total,
                                           left_s / 60, left_s % 60);
                }
            }
    return {};
}

int bench_io(const Invocation& inv, IoBenchArgs& b) {
    auto& ctx = *inv.cluster->ctx;
    auto sweep = read_io_sweep(b, static_cast<int>(ctx.state.nodes.size()));
    if (!sweep) return inv.fail(sweep.error().message, exit_code::k_bad_input);
    for (const auto& source : sweep->sources)
        if (auto s = check_data_source(ctx.spec, source); !s)
            return inv.fail(s.error().message, exit_code::k_bad_input);
    // The plan at once: generating the dataset and each run take a while, and a sweep must not be silent.
    std::cerr << "bench io: " << run_count(*sweep) << " run(s) (" << sweep->sources.size() << " source(s) x "
              << sweep->formats.size() << " format(s) x " << sweep->workers.size() << " worker count(s) x "
              << sweep->nodes.size() << " node count(s)) over " << b.dataset.images
              << " images; an estimate follows the first run" << std::endl;
    // `local` makes the shared copy first where there is a shared folder: once covers both.
    const bool local =
        std::find(sweep->sources.begin(), sweep->sources.end(), "local") != sweep->sources.end();
    if (auto s = ensure_bench_dataset(ctx, b.dataset, local ? "local" : "shared", b.python); !s)
        return inv.fail(s.error().message, exit_code::k_failure);
    std::string cache;
    std::vector<IoRow> rows;
    if (auto s = run_sweep(ctx, b, *sweep, cache, rows); !s)
        return inv.fail(s.error().message, exit_code::k_failure);
    if (auto s = make_dirs(b.out_dir, 0755); !s) return inv.fail(s.error().message, exit_code::k_failure);
    auto tables = tabulate_io(ctx.state.cluster, b, cache, rows);
    const std::string written = write_io_files(b, *sweep, rows, tables);
    if (b.output == "json")
        std::cout << tables.json.dump(2) << "\n";
    else if (b.output == "csv")
        std::cout << tables.csv;
    else
        print_io_table(b, cache, rows, written);
    return exit_code::k_ok;
}

} // namespace

CommandBody bench_io_command() {
    auto b = std::make_shared<IoBenchArgs>();
    return {.add_options = [b](CLI::App& sub) { add_options(sub, *b); },
            .cluster = [b] { return b->run.cluster; },
            .action =
                [b](Invocation& inv) {
                    if (inv.g.json) b->output = "json";
                    return bench_io(inv, *b);
                }};
}

} // namespace ddl::cli
