// `ddl bench train`: data-parallel training throughput over nodes x batch size (x link bandwidth on
// the local target), as the Horovod reference-deployment experiments present it; CSV, JSON and a PNG.
// Two frameworks: `synthetic` (ddl-train-bench: sgemm compute and a model's gradient layout) and
// `pytorch` (a torchvision model under DDP on synthetic ImageNet-shaped data, python3 -m ddl_torch.bench,
// gradients through ddl's hook, Gloo or NCCL), with a time-to-train estimate from a data set's size.
#include "cli/Capabilities.hpp"
#include "cli/CommandTable.hpp"
#include "cli/Launch.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "util/Files.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

namespace ddl::cli {
namespace {

struct TrainBenchArgs {
    RunArgs run;
    std::string framework = "synthetic";
    std::string profile = "resnet50";
    std::string model = "resnet50"; // pytorch: a torchvision model
    std::string comms = "ddl";      // pytorch: ddl, gloo, nccl (comma separated: one series each)
    int image_size = 224;
    std::string python = "python3";
    long long dataset_images = 0; // > 0: time-to-train per row
    int epochs = 90;
    std::string batches = "32,64,96"; // per rank
    std::string nodes;                // "1..N" or "1,2,4"; empty: 1..all
    std::string bandwidths;           // links ddl shapes only: e.g. "1gbit,10gbit"; empty: as deployed
    int steps = 10;
    int warmup = 2;
    std::string out_dir = "bench-train";
    std::string format = "text";
};

void add_options(CLI::App& sub, TrainBenchArgs& tb) {
    add_cluster_ref(sub, tb.run.cluster, ClusterRef::option);
    sub.add_option("--framework", tb.framework,
                   "synthetic (sgemm + gradient layout) or pytorch (torchvision)")
        ->check(CLI::IsMember({"synthetic", "pytorch"}))
        ->capture_default_str();
    sub.add_option("--model", tb.model, "pytorch: torchvision model, e.g. resnet50, resnet101, resnet18")
        ->capture_default_str();
    sub.add_option("--comm", tb.comms,
                   "pytorch: ddl (ddl's DDP hook), gloo, nccl; comma separated to compare")
        ->capture_default_str();
    sub.add_option("--image-size", tb.image_size, "pytorch: image side in pixels")
        ->check(CLI::Range(16, 1024))
        ->capture_default_str();
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
    sub.add_option("--model-profile", tb.profile, "resnet50, resnet101 or custom:N1,N2,... (gradient layout)")
        ->capture_default_str();
    sub.add_option("--batch", tb.batches, "Batch sizes per rank, comma separated")->capture_default_str();
    sub.add_option("--nodes", tb.nodes, "Node counts: 1..N or 1,2,4 (default: 1..all)");
    sub.add_option("--bandwidths", tb.bandwidths, "Local target: re-shape links to each, e.g. 1gbit,10gbit");
    sub.add_option("--steps", tb.steps, "Timed steps")->check(CLI::Range(1, 1000000))->capture_default_str();
    sub.add_option("--warmup", tb.warmup, "Untimed steps")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    sub.add_option("--out", tb.out_dir, "Folder for train.csv, train.json, train.png")
        ->check(k_non_empty)
        ->capture_default_str();
    add_table_format(sub, tb.format);
}

Result<std::vector<int>> parse_int_list(const std::string& text, int max, const std::string& what) {
    std::vector<int> out;
    auto dots = text.find("..");
    if (dots != std::string::npos) {
        auto lo = parse_int(text.substr(0, dots)), hi = parse_int(text.substr(dots + 2));
        if (!lo || !hi || *lo < 1 || *hi < *lo || *hi > max)
            return Error{what + " " + text + ": give A..B with 1 <= A <= B <= " + std::to_string(max)};
        for (auto i = *lo; i <= *hi; ++i)
            out.push_back(static_cast<int>(i));
        return out;
    }
    for (const auto& part : split(text, ',')) {
        auto v = parse_int(trim(part));
        if (!v || *v < 1 || *v > max)
            return Error{what + " " + text + ": values must be 1-" + std::to_string(max)};
        out.push_back(static_cast<int>(*v));
    }
    return out;
}

struct Row {
    std::string bandwidth;
    std::string comm; // pytorch: what averaged the gradients (ddl/tcp, gloo, nccl); synthetic: ddl's ring
    int nodes = 0;
    int ranks = 0;
    int batch = 0;
    double samples_per_s = 0;
    double samples_per_s_rank = 0;
    double step_s = 0;
    double comm_exposed_s = 0;
    double efficiency = 0;
};

// One run through the launcher (ddl-train-bench, or the PyTorch benchmark with COMM); rank 0's JSON line.
Result<nlohmann::json> run_once(Context& ctx, const TrainBenchArgs& b, int nodes, int batch,
                                const std::string& comm) {
    RunArgs a = b.run;
    a.max_nodes = nodes;
    const std::vector<std::string> common{
        "--batch",  std::to_string(batch),    "--steps", std::to_string(b.steps),
        "--warmup", std::to_string(b.warmup), "--json"};
    if (b.framework == "pytorch")
        a.command = {b.python,
                     "-m",
                     "ddl_torch.bench",
                     "--model",
                     b.model,
                     "--image-size",
                     std::to_string(b.image_size),
                     "--comm",
                     comm};
    else
        a.command = {"ddl-train-bench", "--profile", b.profile};
    a.command.insert(a.command.end(), common.begin(), common.end());
    return run_tool_json(ctx, a);
}

// "3h 12m" / "42m 10s" / "9.5 s": a time-to-train figure.
std::string human_duration(double s) {
    char buf[64];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%dh %02dm", static_cast<int>(s / 3600),
                      static_cast<int>(s / 60) % 60);
    else if (s >= 60)
        std::snprintf(buf, sizeof buf, "%dm %02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
    else
        std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
}

std::string gnuplot_script(const std::string& dir, const std::vector<std::string>& series) {
    std::string s =
        "set terminal pngcairo size 1200,500 font 'sans,10'\nset output '" + dir +
        "/train.png'\nset datafile separator ','\nset key top left\nset grid\nset multiplot layout 1,2\n";
    auto plot = [&](const std::string& title, const std::string& ylabel, int column) {
        s += "set title '" + title + "'\nset xlabel 'nodes'\nset ylabel '" + ylabel + "'\nplot ";
        for (std::size_t i = 0; i < series.size(); ++i) {
            s += (i ? ", " : "") + std::string("'") + dir + "/series-" + std::to_string(i) +
                 ".csv' using 1:" + std::to_string(column) + " with linespoints title '" + series[i] + "'";
        }
        s += "\n";
    };
    plot("Training throughput", "samples/s (images/s for pytorch; all ranks)", 2);
    plot("Scaling efficiency", "throughput(N) / (N x throughput(1))", 3);
    return s + "unset multiplot\n";
}

// What to sweep: batch sizes, node counts (always from 1, the efficiency's baseline) and link rates.
struct Sweep {
    std::vector<std::string> comms; // pytorch: one series per entry; synthetic: one empty entry
    std::vector<int> batches;
    std::vector<int> nodes;
    std::vector<std::uint64_t> rates; // one 0 or the deployed rate when the links are not re-shaped
    bool reshape = false;
};

Result<Sweep> read_sweep(const Context& ctx, const TrainBenchArgs& b) {
    Sweep sw;
    int total_nodes = static_cast<int>(ctx.state.nodes.size());
    auto batches = parse_int_list(b.batches, 4096, "--batch");
    auto nodes = parse_int_list(b.nodes.empty() ? "1.." + std::to_string(total_nodes) : b.nodes, total_nodes,
                                "--nodes");
    if (!batches) return batches.error();
    if (!nodes) return nodes.error();
    if ((*nodes)[0] != 1) nodes->insert(nodes->begin(), 1); // efficiency needs the 1-node baseline
    sw.batches = std::move(*batches);
    sw.nodes = std::move(*nodes);
    sw.comms = {""};
    if (b.framework == "pytorch") {
        sw.comms.clear();
        for (const auto& c : split(b.comms, ',')) {
            const std::string name = trim(c);
            if (name != "ddl" && name != "gloo" && name != "nccl")
                return Error{"--comm " + b.comms + ": each must be ddl, gloo or nccl"};
            sw.comms.push_back(name);
        }
    } else if (b.model != "resnet50" || b.comms != "ddl" || b.image_size != 224) {
        return Error{"--model, --comm and --image-size apply to --framework pytorch (synthetic uses "
                     "--model-profile)"};
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

// Every (rate, batch, nodes) point of the sweep, in order, and one chart series per (rate, batch); the
// links are shaped back as deployed afterwards (also after a failed run).
Status run_sweep(Context& ctx, const TrainBenchArgs& b, const Sweep& sw, std::vector<Row>& rows,
                 std::vector<std::string>& series) {
    for (auto bps : sw.rates) {
        if (sw.reshape) {
            if (auto s = reshape_links(ctx, bps); !s) return s.error();
        }
        std::string bw = sw.reshape || shapes_links(ctx.spec) ? format_rate(bps) : "as deployed";
        for (int batch : sw.batches) {
            for (const auto& comm : sw.comms) {
                double base = 0;
                series.push_back("batch " + std::to_string(batch) + (sw.rates.size() > 1 ? ", " + bw : "") +
                                 (comm.empty() ? "" : ", " + comm));
                for (int n : sw.nodes) {
                    auto j = run_once(ctx, b, n, batch, comm);
                    if (!j) {
                        if (sw.reshape) restore_links(ctx);
                        return Error{std::to_string(n) + " node(s), batch " + std::to_string(batch) +
                                     (comm.empty() ? "" : ", " + comm) + ": " + j.error().message};
                    }
                    Row r{bw,
                          j->value("comm", std::string("ddl ring")),
                          n,
                          j->value("ranks", 0),
                          batch,
                          j->value("samples_per_s", 0.0),
                          j->value("samples_per_s_rank", 0.0),
                          j->value("step_s", 0.0),
                          j->value("comm_exposed_s", 0.0),
                          0};
                    if (n == 1) base = r.samples_per_s;
                    r.efficiency = base > 0 ? r.samples_per_s / (n * base) : 0;
                    rows.push_back(r);
                    if (b.format == "text")
                        std::fprintf(stderr,
                                     "  %-10s %-8s nodes %2d ranks %2d batch %4d: %9.1f samples/s, "
                                     "efficiency %5.1f%%\n",
                                     bw.c_str(), r.comm.c_str(), n, r.ranks, batch, r.samples_per_s,
                                     100 * r.efficiency);
                }
            }
        }
    }
    if (sw.reshape) restore_links(ctx);
    return {};
}

// The rows as train.csv and train.json.
struct Tables {
    std::string csv;
    nlohmann::json json;
};

// Seconds for one epoch and for the whole training at this row's throughput (0 without a data set).
std::pair<double, double> time_to_train(const TrainBenchArgs& b, const Row& r) {
    if (b.dataset_images <= 0 || r.samples_per_s <= 0) return {0, 0};
    const double epoch = static_cast<double>(b.dataset_images) / r.samples_per_s;
    return {epoch, epoch * b.epochs};
}

Tables tabulate(const std::string& cluster, const TrainBenchArgs& b, const std::vector<Row>& rows) {
    Tables t;
    t.csv = "bandwidth,comm,nodes,ranks,batch_per_rank,samples_per_s,samples_per_s_rank,step_s,comm_"
            "exposed_s,efficiency,epoch_s,train_s\n";
    const bool torch = b.framework == "pytorch";
    t.json = nlohmann::json{
        {"cluster", cluster}, {"framework", b.framework}, {"profile", torch ? b.model : b.profile},
        {"steps", b.steps},   {"warmup", b.warmup},       {"results", nlohmann::json::array()}};
    if (torch) t.json["image_size"] = b.image_size;
    if (b.dataset_images > 0) {
        t.json["dataset_images"] = b.dataset_images;
        t.json["epochs"] = b.epochs;
    }
    char line[320];
    for (const auto& r : rows) {
        const auto [epoch, train] = time_to_train(b, r);
        std::snprintf(line, sizeof line, "%s,%s,%d,%d,%d,%.2f,%.2f,%.5f,%.5f,%.4f,%.1f,%.1f\n",
                      r.bandwidth.c_str(), r.comm.c_str(), r.nodes, r.ranks, r.batch, r.samples_per_s,
                      r.samples_per_s_rank, r.step_s, r.comm_exposed_s, r.efficiency, epoch, train);
        t.csv += line;
        t.json["results"].push_back({{"bandwidth", r.bandwidth},
                                     {"comm", r.comm},
                                     {"epoch_s", epoch},
                                     {"train_s", train},
                                     {"nodes", r.nodes},
                                     {"ranks", r.ranks},
                                     {"batch_per_rank", r.batch},
                                     {"samples_per_s", r.samples_per_s},
                                     {"samples_per_s_rank", r.samples_per_s_rank},
                                     {"step_s", r.step_s},
                                     {"comm_exposed_s", r.comm_exposed_s},
                                     {"efficiency", r.efficiency}});
    }
    return t;
}

// train.csv, train.json, one CSV per chart series and the gnuplot script, in out_dir.
void write_files(const TrainBenchArgs& b, const Sweep& sw, const std::vector<Row>& rows,
                 const std::vector<std::string>& series, const Tables& t) {
    (void)write_file_atomic(b.out_dir + "/train.csv", t.csv, 0644);
    (void)write_file_atomic(b.out_dir + "/train.json", t.json.dump(2) + "\n", 0644);
    // One small CSV per line of the chart (nodes, throughput, efficiency), in sweep order.
    std::size_t per_series = sw.nodes.size();
    char line[256];
    for (std::size_t si = 0; si < series.size(); ++si) {
        std::string data;
        for (std::size_t k = 0; k < per_series; ++k) {
            const auto& r = rows[si * per_series + k];
            std::snprintf(line, sizeof line, "%d,%.2f,%.4f\n", r.nodes, r.samples_per_s, r.efficiency);
            data += line;
        }
        (void)write_file_atomic(b.out_dir + "/series-" + std::to_string(si) + ".csv", data, 0644);
    }
    (void)write_file_atomic(b.out_dir + "/train.gnuplot", gnuplot_script(b.out_dir, series), 0644);
}

void print_table(const TrainBenchArgs& b, const std::vector<Row>& rows, bool plotted) {
    if (b.framework == "pytorch")
        std::printf("# PyTorch DDP, torchvision %s on synthetic %dx%d images, %d steps (+%d warm-up); "
                    "efficiency = thr(N) / (N * thr(1))\n",
                    b.model.c_str(), b.image_size, b.image_size, b.steps, b.warmup);
    else
        std::printf("# data-parallel training, profile %s, %d steps (+%d warm-up); efficiency = thr(N) / (N "
                    "* thr(1))\n",
                    b.profile.c_str(), b.steps, b.warmup);
    const bool ttt = b.dataset_images > 0;
    std::printf("%-12s %-9s %6s %6s %7s %14s %12s %10s %12s %10s%s\n", "bandwidth", "comm", "nodes", "ranks",
                "batch", "samples/s", "per rank", "step(s)", "exposed(s)", "effic.",
                ttt ? "        epoch   time-to-train" : "");
    for (const auto& r : rows) {
        const auto [epoch, train] = time_to_train(b, r);
        std::printf("%-12s %-9s %6d %6d %7d %14.1f %12.1f %10.4f %12.4f %9.1f%%", r.bandwidth.c_str(),
                    r.comm.c_str(), r.nodes, r.ranks, r.batch, r.samples_per_s, r.samples_per_s_rank,
                    r.step_s, r.comm_exposed_s, 100 * r.efficiency);
        if (ttt) std::printf(" %12s %15s", human_duration(epoch).c_str(), human_duration(train).c_str());
        std::printf("\n");
    }
    if (ttt)
        std::printf("# time-to-train: %lld images per epoch x %d epochs at the measured throughput\n",
                    b.dataset_images, b.epochs);
    std::printf("# wrote %s/train.csv, train.json%s\n", b.out_dir.c_str(), plotted ? ", train.png" : "");
}

int bench_train(const Invocation& inv, const TrainBenchArgs& b) {
    auto& ctx = *inv.cluster->ctx;
    auto sweep = read_sweep(ctx, b);
    if (!sweep) return inv.fail(sweep.error().message, exit_code::k_bad_input);
    std::vector<Row> rows;
    std::vector<std::string> series;
    if (auto s = run_sweep(ctx, b, *sweep, rows, series); !s)
        return inv.fail(s.error().message, exit_code::k_failure);

    if (auto s = make_dirs(b.out_dir, 0755); !s) return inv.fail(s.error().message, exit_code::k_failure);
    auto tables = tabulate(ctx.state.cluster, b, rows);
    write_files(b, *sweep, rows, series, tables);
    SystemProcessRunner proc;
    auto plot =
        proc.run({.argv = {"gnuplot", b.out_dir + "/train.gnuplot"}, .timeout = std::chrono::seconds(60)});
    bool plotted = plot && plot->success();
    if (!plotted)
        std::cerr << "ddl bench train: no chart: "
                  << (plot ? describe_failure({.argv = {"gnuplot"}}, *plot) : plot.error().message)
                  << " (install gnuplot-nox)\n";
    if (b.format == "json")
        std::cout << tables.json.dump(2) << "\n";
    else if (b.format == "csv")
        std::cout << tables.csv;
    else
        print_table(b, rows, plotted);
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
