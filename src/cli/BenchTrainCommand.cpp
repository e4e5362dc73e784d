// `ddl bench train`: data-parallel training throughput over nodes x batch size (x link bandwidth on
// the local target), as the Horovod reference-deployment experiments present it; CSV, JSON and a PNG.
// Two frameworks: `synthetic` (ddl-train-bench: sgemm compute and a model's gradient layout) and
// `pytorch` (a torchvision model under DDP on synthetic ImageNet-shaped data, python3 -m ddl_torch.bench,
// gradients through ddl's hook, Gloo or NCCL), with a time-to-train estimate from a data set's size; with
// --data, the same model also trained from the bench dataset (BenchData) through a DataLoader beside the
// synthetic input, and the gap between the two.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Datasets.hpp"
#include "cli/Launch.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "cli/TrainBench.hpp"
#include "core/Diagnostics.hpp"
#include "util/Files.hpp"
#include "util/Format.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>

namespace ddl::cli {
namespace {

void add_options(CLI::App& sub, TrainBenchArgs& tb) {
    add_cluster_ref(sub, tb.run.cluster, ClusterRef::option);
    sub.add_option("--framework", tb.framework,
                   "synthetic (sgemm + gradient layout) or pytorch (torchvision)")
        ->check(CLI::IsMember({"synthetic", "pytorch"}))
        ->capture_default_str();
    sub.add_option(
        "--model", tb.model,
        "pytorch: torchvision model, e.g. resnet50, resnet101, resnet18 (default: resnet50; resnet18 "
        "on a cluster without GPUs)");
    sub.add_option("--comm", tb.comms,
                   "pytorch: ddl (ddl's DDP hook), gloo, nccl; comma separated to compare")
        ->capture_default_str();
    sub.add_option("--compression", tb.compressions,
                   "pytorch: none, fp16, powersgd[:rank=R], topk[:ratio=F]; repeatable, one series per "
                   "--comm each (on gloo/nccl: PyTorch's own hooks)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub.add_option("--rounds", tb.rounds, "Runs per point, the series alternating; the median is reported")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    sub.add_option("--image-size", tb.image_size,
                   "pytorch: image side in pixels (default: 224; 64 on a cluster without GPUs)")
        ->check(CLI::Range(16, 1024));
    sub.add_option("--python", tb.python, "pytorch: the nodes' Python with torch and torchvision")
        ->check(k_non_empty)
        ->capture_default_str();
    sub.add_option("--dataset-images", tb.dataset_images, "Images per epoch for a time-to-train estimate")
        ->check(CLI::Range(1LL, 1000000000000LL));
    sub.add_option("--epochs", tb.epochs, "Epochs for the time-to-train estimate")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    sub.add_option("-x,--env", tb.run.env,
                   "Pass NAME=VALUE (or NAME from this shell) to every rank; repeatable")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub.add_option(
        "--data", tb.data,
        "pytorch: also train from the bench dataset in this form (files or shards), or from the spec's "
        "dataset of this name (staged by ddl data stage), side by side with synthetic input");
    sub.add_option("--data-source", tb.data_source,
                   "--data: local (each node's copy) or shared (the shared folder)")
        ->check(CLI::IsMember({"local", "shared"}))
        ->capture_default_str();
    sub.add_option("--data-workers", tb.data_workers, "--data: DataLoader worker processes per rank")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    sub.add_option("--data-images", tb.dataset.images,
                   "--data: images in the dataset (generated once if absent)")
        ->check(CLI::Range(1, 10000000))
        ->capture_default_str();
    sub.add_option("--data-classes", tb.dataset.classes, "--data: classes in the dataset")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    sub.add_option("--data-seed", tb.dataset.seed, "--data: the generator's seed")
        ->check(CLI::Range(0, 1 << 30))
        ->capture_default_str();
    sub.add_option("--model-profile", tb.profile, "resnet50, resnet101 or custom:N1,N2,... (gradient layout)")
        ->capture_default_str();
    sub.add_option("--batch", tb.batches,
                   "Batch sizes per rank, comma separated (default: 32,64,96; pytorch on a cluster without "
                   "GPUs: 8,16,32)");
    sub.add_option("--nodes", tb.nodes, "Node counts: 1..N or 1,2,4 (default: 1..all)");
    sub.add_option("--bandwidths", tb.bandwidths, "Local target: re-shape links to each, e.g. 1gbit,10gbit");
    sub.add_option("--steps", tb.steps, "Timed steps")->check(CLI::Range(1, 1000000))->capture_default_str();
    sub.add_option("--warmup", tb.warmup, "Untimed steps")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    sub.add_option("--progress-every", tb.progress_every_s,
                   "A run that lasts longer says its step this often, in seconds (0: never)")
        ->check(CLI::Range(0, 86400))
        ->capture_default_str();
    sub.add_option("--out", tb.out_dir, "Folder for train.csv, train.json, train.png")
        ->check(k_non_empty)
        ->capture_default_str();
    add_table_format(sub, tb.format);
}

// Rank 0's "step K/T [SAMPLES_PER_S]" lines of the run WHAT, shown at most every EVERY_S seconds with the
// images/s and the time left in this run (a run of a large model on slow links takes minutes; its step
// says it has not stalled).
std::function<void(const std::string&)> progress_printer(int every_s, const std::string& what) {
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    return [every_s, what, started, said = started](const std::string& line) mutable {
        const auto now = Clock::now();
        if (now - said < std::chrono::seconds(every_s)) return;
        int k = 0, total = 0;
        double rate = -1;
        if (std::sscanf(line.c_str(), "step %d/%d %lf", &k, &total, &rate) < 2 || k <= 0 || total < k) return;
        said = now;
        const double elapsed = std::chrono::duration<double>(now - started).count();
        const auto left_s = static_cast<long long>(elapsed * (total - k) / k);
        std::cerr << strprintf("    %s: step %d/%d, %sabout %lldm%02llds left in this run\n", what.c_str(), k,
                               total, rate >= 0 ? strprintf("%.1f images/s, ", rate).c_str() : "",
                               left_s / 60, left_s % 60);
    };
}

// One run through the launcher (ddl-train-bench, or the PyTorch benchmark with COMM and COMPRESSION);
// rank 0's JSON line. WHAT names the run in progress lines.
Result<nlohmann::json> run_once(Context& ctx, const TrainBenchArgs& b, int nodes, int batch,
                                const std::string& comm, const std::string& compression, bool data,
                                const std::string& what) {
    RunArgs a = b.run;
    a.max_nodes = nodes;
    std::vector<std::string> common{"--batch",  std::to_string(batch),    "--steps", std::to_string(b.steps),
                                    "--warmup", std::to_string(b.warmup), "--json"};
    if (b.progress_every_s > 0) {
        // By a variable, which the tools of a cluster deployed by an older ddl ignore (an option they
        // refuse).
        a.env.emplace_back("DDL_PROGRESS=1");
        a.on_progress = progress_printer(b.progress_every_s, what);
    }
    if (b.framework == "pytorch") {
        a.command = {b.python,
                     "-m",
                     "ddl_torch.bench",
                     "--model",
                     b.model,
                     "--image-size",
                     std::to_string(b.image_size),
                     "--comm",
                     comm,
                     "--compression",
                     compression};
        if (data)
            a.command.insert(a.command.end(), {"--data", b.data_path, "--data-format", b.data_format,
                                               "--data-workers", std::to_string(b.data_workers)});
    } else {
        a.command = {"ddl-train-bench", "--profile", b.profile};
    }
    a.command.insert(a.command.end(), common.begin(), common.end());
    return run_tool_json(ctx, a);
}

// One line of the charts: what averaged the gradients and how they were compressed.
struct Series {
    std::string comm;        // pytorch: ddl, gloo, nccl; synthetic: ""
    std::string compression; // pytorch: none, fp16, powersgd:…, topk:…; synthetic: ""
    bool data = false;       // pytorch --data: batches from the dataset instead of one synthetic batch
};

// What to sweep: batch sizes, node counts (always from 1, the efficiency's baseline) and link rates.
struct Sweep {
    std::vector<Series> series; // pytorch: comms x compressions; synthetic: one empty entry
    std::vector<int> batches;
    std::vector<int> nodes;
    std::vector<std::uint64_t> rates; // one 0 or the deployed rate when the links are not re-shaped
    bool reshape = false;
};

// --compression values: ddl's compressors (none, fp16, powersgd[:…], topk[:…]); on gloo or nccl the same
// names pick PyTorch's own hooks, which have no top-k (that pair is skipped with a line saying so).
Status read_series(const TrainBenchArgs& b, Sweep& sw) {
    std::vector<std::string> compressions = b.compressions;
    if (compressions.empty()) compressions = {"none"};
    for (const auto& c : split(b.comms, ',')) {
        const std::string name = trim(c);
        if (name != "ddl" && name != "gloo" && name != "nccl")
            return Error{"--comm " + b.comms + ": each must be ddl, gloo or nccl"};
        for (const auto& k : compressions) {
            const std::string kind = k.substr(0, k.find(':'));
            if (kind != "none" && kind != "fp16" && kind != "powersgd" && kind != "topk")
                return Error{"--compression " + k + ": give none, fp16, powersgd[:rank=R] or topk[:ratio=F]"};
            if (kind == "topk" && name != "ddl") {
                std::cerr << strprintf(
                    "ddl bench train: %s with --comm %s skipped: PyTorch has no top-k hook\n", k.c_str(),
                    name.c_str());
                continue;
            }
            sw.series.push_back({name, k, false});
            if (!b.data.empty()) sw.series.push_back({name, k, true});
        }
    }
    return {};
}

Result<Sweep> read_sweep(const Context& ctx, const TrainBenchArgs& b) {
    Sweep sw;
    // The nodes that take ranks (not a spare or a cordoned node): launches take the first N of those.
    const int total_nodes = static_cast<int>(std::count_if(
        ctx.state.nodes.begin(), ctx.state.nodes.end(), [](const NodeState& n) { return n.gets_ranks(); }));
    auto batches = parse_int_list(b.batches, 4096, "--batch");
    auto nodes = parse_int_list(b.nodes.empty() ? "1.." + std::to_string(total_nodes) : b.nodes, total_nodes,
                                "--nodes");
    if (!batches) return batches.error();
    if (!nodes) return nodes.error();
    if ((*nodes)[0] != 1) nodes->insert(nodes->begin(), 1); // efficiency needs the 1-node baseline
    sw.batches = std::move(*batches);
    sw.nodes = std::move(*nodes);
    if (b.framework == "pytorch") {
        if (auto s = read_series(b, sw); !s) return s.error();
    } else if (b.model != "resnet50" || b.comms != "ddl" || b.image_size != 224 || !b.compressions.empty() ||
               !b.data.empty()) {
        return Error{"--model, --comm, --compression, --image-size and --data apply to --framework pytorch "
                     "(synthetic uses "
                     "--model-profile)"};
    } else {
        sw.series = {Series{}};
    }
    for (const auto& r : split(b.bandwidths, ',')) {
        if (trim(r).empty()) continue;
        auto v = parse_rate(r);
        if (!v) return Error{"--bandwidths " + r + ": not a rate like 1gbit"};
        sw.rates.push_back(*v);
    }
    if (!sw.rates.empty() && !shapes_links(ctx.spec))
        return Error{"--bandwidths re-shapes links, which only the local target can do"};
    sw.reshape = !sw.rates.empty();
    if (!sw.reshape) sw.rates.push_back(shaped_link_bps(ctx.spec));
    return sw;
}

TrainRow row_of(const nlohmann::json& j, const std::string& bw, int n, int batch) {
    TrainRow r;
    r.bandwidth = bw;
    r.comm = j.value("comm", std::string("ddl ring"));
    r.input = j.value("input", std::string("synthetic"));
    r.compression = j.value("compression", std::string());
    r.nodes = n;
    r.ranks = j.value("ranks", 0);
    r.batch = batch;
    r.samples_per_s = j.value("samples_per_s", 0.0);
    r.samples_per_s_rank = j.value("samples_per_s_rank", 0.0);
    r.step_s = j.value("step_s", 0.0);
    r.comm_exposed_s = j.value("comm_exposed_s", 0.0);
    auto number = [&](const char* key) {
        return j.contains(key) && j[key].is_number() ? j[key].get<double>() : -1.0;
    };
    r.bytes_per_step = number("bytes_per_step");
    r.iface_bytes_per_step = number("iface_bytes_per_step");
    return r;
}

// Every (rate, batch, nodes) point of the sweep: `rounds` rounds, each running every series once in turn
// (so a drift on the machine hits them all), the median run kept; one chart series per (rate, batch,
// series). The links are shaped back as deployed afterwards (also after a failed run).
Status run_sweep(Context& ctx, const TrainBenchArgs& b, const Sweep& sw, std::vector<TrainRow>& rows,
                 std::vector<std::string>& series) {
    // The plan up front, then each run with how many are left and an estimate from the runs so far: a sweep
    // takes minutes to hours and must not be silent.
    const std::size_t total = sw.rates.size() * sw.batches.size() * sw.nodes.size() *
                              static_cast<std::size_t>(b.rounds) * sw.series.size();
    std::cerr << "bench train: " << total << " run(s) (" << sw.rates.size() << " rate(s) x "
              << sw.batches.size() << " batch size(s) x " << sw.nodes.size() << " node count(s) x "
              << b.rounds << " round(s) x " << sw.series.size() << " series), " << b.steps
              << " steps each after " << b.warmup << " warm-up; an estimate follows the first run"
              << std::endl;
    const auto started = std::chrono::steady_clock::now();
    std::size_t done = 0;
    auto left_text = [&] {
        const double per_run =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / double(done);
        const auto left_s = static_cast<long long>(per_run * double(total - done));
        return strprintf("[%zu/%zu, about %lldm%02llds left]", done, total, left_s / 60, left_s % 60);
    };
    for (auto bps : sw.rates) {
        if (sw.reshape) {
            if (auto s = reshape_links(ctx, bps); !s) return s.error();
        }
        std::string bw = sw.reshape || shapes_links(ctx.spec) ? format_rate(bps) : "as deployed";
        for (int batch : sw.batches) {
            // runs[series][node index]: every round's row.
            std::vector<std::vector<std::vector<TrainRow>>> runs(
                sw.series.size(), std::vector<std::vector<TrainRow>>(sw.nodes.size()));
            for (std::size_t ni = 0; ni < sw.nodes.size(); ++ni) {
                const int n = sw.nodes[ni];
                for (int round = 1; round <= b.rounds; ++round) {
                    for (std::size_t si = 0; si < sw.series.size(); ++si) {
                        const Series& s = sw.series[si];
                        const std::string what =
                            std::to_string(n) + " node(s), batch " + std::to_string(batch) +
                            (s.comm.empty() ? "" : ", " + s.comm + ", " + s.compression) +
                            (s.data ? ", " + b.data_format : "");
                        auto j = run_once(ctx, b, n, batch, s.comm, s.compression, s.data, what);
                        if (!j) {
                            if (sw.reshape) restore_links(ctx);
                            return Error{what + ": " + j.error().message};
                        }
                        TrainRow r = row_of(*j, bw, n, batch);
                        ++done;
                        std::cerr << strprintf(
                            "  %-10s %-8s %-16s%s nodes %2d round %d batch %4d: %9.1f samples/s%s %s\n",
                            bw.c_str(), r.comm.c_str(), r.compression.c_str(),
                            b.data.empty() ? "" : (" " + r.input).c_str(), n, round, batch, r.samples_per_s,
                            r.bytes_per_step >= 0
                                ? (", " + std::to_string(r.bytes_per_step / 1e6) + " MB/step").c_str()
                                : "",
                            left_text().c_str());
                        runs[si][ni].push_back(std::move(r));
                    }
                }
            }
            for (std::size_t si = 0; si < sw.series.size(); ++si) {
                const Series& s = sw.series[si];
                std::string label = "batch " + std::to_string(batch) + (sw.rates.size() > 1 ? ", " + bw : "");
                if (!s.comm.empty())
                    label += ", " + s.comm + (s.compression == "none" ? "" : " " + s.compression);
                if (!b.data.empty())
                    label += s.data ? ", " + b.data_format + " (" + b.data_source + ")" : ", synthetic";
                series.push_back(label);
                double base = 0;
                for (auto& point : runs[si]) {
                    std::sort(point.begin(), point.end(), [](const TrainRow& x, const TrainRow& y) {
                        return x.samples_per_s < y.samples_per_s;
                    });
                    TrainRow r = point[(point.size() - 1) / 2];
                    if (r.nodes == 1) base = r.samples_per_s;
                    r.efficiency = base > 0 ? r.samples_per_s / (r.nodes * base) : 0;
                    rows.push_back(std::move(r));
                }
            }
        }
    }
    if (sw.reshape) restore_links(ctx);
    return {};
}

// --data: the bench dataset (files or shards: made where --data-source says unless it is there) or a
// dataset of the spec (its staged folder and its format); b.data_path/format/name/source set.
Status resolve_data_input(Context& ctx, TrainBenchArgs& b) {
    if (b.data == "files" || b.data == "shards") {
        if (auto s = check_data_source(ctx.spec, b.data_source); !s) return s;
        if (auto s = ensure_bench_dataset(ctx, b.dataset, b.data_source, b.python); !s) return s;
        b.data_path = bench_data_path(ctx.spec, b.data_source, b.dataset.name());
        b.data_format = b.data;
        b.data_name = b.dataset.name();
        return {};
    }
    const DatasetSpec* d = find_dataset(ctx.spec, b.data);
    if (!d) {
        std::string names;
        for (const auto& x : ctx.spec.datasets)
            names += (names.empty() ? "" : ", ") + x.name;
        return refusal_error(
            "--data " + b.data + ": neither files, shards nor a dataset of cluster " + ctx.state.cluster +
            (names.empty() ? " (its spec has none)" : " (it has: " + names + ")") +
            "; files or shards train from the bench dataset, a dataset of the spec's datasets: "
            "from its copy staged by ddl data stage");
    }
    if (d->format.empty())
        return refusal_error("--data " + d->name +
                             ": the dataset sets no format; add format: files "
                             "(train/<class>/*.jpg) or format: shards (shards/*.tar), the layouts python3 -m "
                             "ddl_data generate writes, to dataset " +
                             d->name + " in the spec");
    b.data_path = dataset_path(ctx.spec, *d);
    b.data_format = d->format;
    b.data_name = d->name;
    b.data_source = d->to_shared ? "shared" : "local";
    return {};
}

// The defaults the user left: sized for GPUs, or for CPUs where no node has one (a torchvision model at
// ImageNet's size takes seconds a step on a CPU core: the plan would be hours).
void size_defaults(const Context& ctx, TrainBenchArgs& b) {
    bool gpus = false;
    for (const auto& n : ctx.state.nodes)
        gpus = gpus || n.gpus > 0;
    const bool cpu = b.framework == "pytorch" && !gpus;
    const bool any_left = b.model.empty() || b.image_size == 0 || b.batches.empty();
    if (b.model.empty()) b.model = cpu ? "resnet18" : "resnet50";
    if (b.image_size == 0) b.image_size = cpu ? 64 : 224;
    if (b.batches.empty()) b.batches = cpu ? "8,16,32" : "32,64,96";
    if (cpu && any_left)
        std::cerr << strprintf("bench train: no GPU on cluster %s: sized for CPUs, %s at %d px, batch %s "
                               "(--model, --image-size, --batch choose others)\n",
                               ctx.state.cluster.c_str(), b.model.c_str(), b.image_size, b.batches.c_str());
}

int bench_train(const Invocation& inv, const TrainBenchArgs& given) {
    auto& ctx = *inv.cluster->ctx;
    TrainBenchArgs b = given;
    size_defaults(ctx, b);
    auto sweep = read_sweep(ctx, b);
    if (!sweep) return inv.fail(sweep.error().message, exit_code::k_bad_input);
    if (!b.data.empty()) {
        if (auto s = resolve_data_input(ctx, b); !s)
            return inv.fail(s.error().message,
                            s.error().refused ? exit_code::k_bad_input : exit_code::k_failure);
    }
    std::vector<TrainRow> rows;
    std::vector<std::string> series;
    if (auto s = run_sweep(ctx, b, *sweep, rows, series); !s)
        return inv.fail(s.error().message, exit_code::k_failure);

    if (auto s = make_dirs(b.out_dir, 0755); !s) return inv.fail(s.error().message, exit_code::k_failure);
    auto tables = tabulate(ctx.state.cluster, b, rows);
    write_train_files(b, tables);
    const bool plotted = draw_train_chart(b, sweep->nodes.size(), rows, series);
    if (b.format == "json")
        std::cout << tables.json.dump(2) << "\n";
    else if (b.format == "csv")
        std::cout << tables.csv;
    else
        print_train_table(b, rows, plotted);
    return exit_code::k_ok;
}

} // namespace

CommandBody bench_train_command() {
    auto tb = std::make_shared<TrainBenchArgs>();
    return {.add_options = [tb](CLI::App& sub) { add_options(sub, *tb); },
            .cluster = [tb] { return tb->run.cluster; },
            .action =
                [tb](Invocation& inv) {
                    if (inv.g.json) tb->format = "json";
                    return bench_train(inv, *tb);
                }};
}

} // namespace ddl::cli
