// `ddl bench train`'s report: the table, train.csv, train.json and the chart (gnuplot) of the sweep's rows.
#include "cli/ScalingChart.hpp"
#include "cli/TrainBench.hpp"
#include "util/Files.hpp"
#include "util/Format.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace ddl::cli {
namespace {

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

// Seconds for one epoch and for the whole training at this row's throughput (0 without a data set).
std::pair<double, double> time_to_train(const TrainBenchArgs& b, const TrainRow& r) {
    if (b.dataset_images <= 0 || r.samples_per_s <= 0) return {0, 0};
    const double epoch = static_cast<double>(b.dataset_images) / r.samples_per_s;
    return {epoch, epoch * b.epochs};
}

// "12.34" MB, or "-" where not measured.
std::string megabytes(double bytes) {
    if (bytes < 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", bytes / 1e6);
    return buf;
}

// A byte count for the CSV, empty where not measured.
std::string csv_bytes(double bytes) {
    return bytes < 0 ? std::string() : std::to_string(static_cast<long long>(bytes));
}

} // namespace

TrainTables tabulate(const std::string& cluster, const TrainBenchArgs& b, const std::vector<TrainRow>& rows) {
    TrainTables t;
    t.csv =
        "bandwidth,comm,compression,nodes,ranks,batch_per_rank,samples_per_s,samples_per_s_rank,step_s,comm_"
        "exposed_s,efficiency,epoch_s,train_s,bytes_per_step,iface_bytes_per_step,input\n";
    const bool torch = b.framework == "pytorch";
    t.json = nlohmann::json{{"cluster", cluster},
                            {"framework", b.framework},
                            {"profile", torch ? b.model : b.profile},
                            {"steps", b.steps},
                            {"warmup", b.warmup},
                            {"rounds", b.rounds},
                            {"results", nlohmann::json::array()}};
    if (torch) t.json["image_size"] = b.image_size;
    if (!b.data.empty()) {
        t.json["data"] = {{"format", b.data_format},
                          {"source", b.data_source},
                          {"workers", b.data_workers},
                          {"dataset", b.data_name},
                          {"path", b.data_path}};
        if (b.data_name == b.dataset.name()) t.json["data"]["images"] = b.dataset.images;
        t.json["input_gaps"] = nlohmann::json::array();
        for (const auto& g : input_gaps(rows))
            t.json["input_gaps"].push_back({{"bandwidth", g.data->bandwidth},
                                            {"comm", g.data->comm},
                                            {"compression", g.data->compression},
                                            {"nodes", g.data->nodes},
                                            {"batch_per_rank", g.data->batch},
                                            {"input", g.data->input},
                                            {"samples_per_s", g.data->samples_per_s},
                                            {"synthetic_samples_per_s", g.synthetic->samples_per_s},
                                            {"gap", g.gap}});
    }
    if (b.dataset_images > 0) {
        t.json["dataset_images"] = b.dataset_images;
        t.json["epochs"] = b.epochs;
    }
    char line[400];
    for (const auto& r : rows) {
        const auto [epoch, train] = time_to_train(b, r);
        std::snprintf(line, sizeof line, "%s,%s,%s,%d,%d,%d,%.2f,%.2f,%.5f,%.5f,%.4f,%.1f,%.1f,",
                      r.bandwidth.c_str(), r.comm.c_str(), r.compression.c_str(), r.nodes, r.ranks, r.batch,
                      r.samples_per_s, r.samples_per_s_rank, r.step_s, r.comm_exposed_s, r.efficiency, epoch,
                      train);
        t.csv += line + csv_bytes(r.bytes_per_step) + "," + csv_bytes(r.iface_bytes_per_step) + ",\"" +
                 r.input + "\"\n";
        nlohmann::json j{{"bandwidth", r.bandwidth},
                         {"comm", r.comm},
                         {"compression", r.compression},
                         {"input", r.input},
                         {"epoch_s", epoch},
                         {"train_s", train},
                         {"nodes", r.nodes},
                         {"ranks", r.ranks},
                         {"batch_per_rank", r.batch},
                         {"samples_per_s", r.samples_per_s},
                         {"samples_per_s_rank", r.samples_per_s_rank},
                         {"step_s", r.step_s},
                         {"comm_exposed_s", r.comm_exposed_s},
                         {"efficiency", r.efficiency}};
        j["bytes_per_step"] =
            r.bytes_per_step < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.bytes_per_step);
        j["iface_bytes_per_step"] =
            r.iface_bytes_per_step < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.iface_bytes_per_step);
        t.json["results"].push_back(std::move(j));
    }
    return t;
}

void write_train_files(const TrainBenchArgs& b, const TrainTables& t) {
    (void)write_file_atomic(b.out_dir + "/train.csv", t.csv, 0644);
    (void)write_file_atomic(b.out_dir + "/train.json", t.json.dump(2) + "\n", 0644);
}

bool draw_train_chart(const TrainBenchArgs& b, std::size_t nodes_per_series,
                      const std::vector<TrainRow>& rows, const std::vector<std::string>& series) {
    ScalingChart c{.dir = b.out_dir,
                   .stem = "train",
                   .png = b.out_dir + "/train.png",
                   .title = "Training throughput",
                   .ylabel = b.framework == "pytorch" ? "images/s (all ranks)" : "samples/s (all ranks)",
                   .series = {}};
    for (std::size_t si = 0; si < series.size(); ++si) {
        ScalingSeries s{.label = series[si], .points = {}};
        for (std::size_t k = 0; k < nodes_per_series; ++k) {
            const auto& r = rows[si * nodes_per_series + k];
            s.points.push_back({.nodes = r.nodes, .throughput = r.samples_per_s, .efficiency = r.efficiency});
        }
        c.series.push_back(std::move(s));
    }
    return draw_scaling_chart(c, "ddl bench train");
}

void print_train_table(const TrainBenchArgs& b, const std::vector<TrainRow>& rows, bool plotted) {
    const bool torch = b.framework == "pytorch";
    if (torch)
        std::cout << strprintf(
            "# PyTorch DDP, torchvision %s on %s %dx%d images, %d steps (+%d warm-up), median of %d "
            "alternating round(s); efficiency = thr(N) / (N * thr(1)); MB/step: rank 0's bytes sent, "
            "counted by libddlcomm (ddl) and on its interface (all traffic)\n",
            b.model.c_str(),
            b.data.empty() ? "synthetic"
                           : ("synthetic and dataset " + b.data_name + " (" + b.data_format + " from " +
                              b.data_source + ", " + std::to_string(b.data_workers) +
                              " loader workers per rank; exposed(s) then "
                              "includes waiting for input)")
                                 .c_str(),
            b.image_size, b.image_size, b.steps, b.warmup, b.rounds);
    else
        std::cout << strprintf(
            "# data-parallel training, profile %s, %d steps (+%d warm-up); efficiency = thr(N) / (N "
            "* thr(1))\n",
            b.profile.c_str(), b.steps, b.warmup);
    const bool ttt = b.dataset_images > 0;
    const bool data = !b.data.empty();
    if (data) std::cout << strprintf("%-20s ", "input");
    std::cout << strprintf("%-12s %-9s %-17s %6s %6s %7s %14s %12s %10s %12s %10s", "bandwidth", "comm",
                           "compression", "nodes", "ranks", "batch", torch ? "images/s" : "samples/s",
                           "per rank", "step(s)", "exposed(s)", "effic.");
    if (torch) std::cout << strprintf(" %10s %10s", "MB/step", "iface MB");
    std::cout << strprintf("%s\n", ttt ? "        epoch   time-to-train" : "");
    for (const auto& r : rows) {
        const auto [epoch, train] = time_to_train(b, r);
        if (data) std::cout << strprintf("%-20s ", r.input.c_str());
        std::cout << strprintf(
            "%-12s %-9s %-17s %6d %6d %7d %14.1f %12.1f %10.4f %12.4f %9.1f%%", r.bandwidth.c_str(),
            r.comm.c_str(), r.compression.empty() ? "-" : r.compression.c_str(), r.nodes, r.ranks, r.batch,
            r.samples_per_s, r.samples_per_s_rank, r.step_s, r.comm_exposed_s, 100 * r.efficiency);
        if (torch)
            std::cout << strprintf(" %10s %10s", megabytes(r.bytes_per_step).c_str(),
                                   megabytes(r.iface_bytes_per_step).c_str());
        if (ttt)
            std::cout << strprintf(" %12s %15s", human_duration(epoch).c_str(),
                                   human_duration(train).c_str());
        std::cout << strprintf("\n");
    }
    if (ttt)
        std::cout << strprintf(
            "# time-to-train: %lld images per epoch x %d epochs at the measured throughput\n",
            b.dataset_images, b.epochs);
    for (const auto& g : input_gaps(rows))
        std::cout << strprintf(
            "# input pipeline, %d node(s), batch %d, %s: %.1f images/s from the dataset (%s, %s) against "
            "%.1f synthetic: %.1f%% %s\n",
            g.data->nodes, g.data->batch, g.data->comm.c_str(), g.data->samples_per_s, g.data->input.c_str(),
            b.data_source.c_str(), g.synthetic->samples_per_s, 100 * std::abs(g.gap),
            g.gap >= 0 ? "slower" : "faster");
    std::cout << strprintf("# wrote %s/train.csv, train.json%s\n", b.out_dir.c_str(),
                           plotted ? ", train.png" : "");
}

std::vector<InputGap> input_gaps(const std::vector<TrainRow>& rows) {
    std::vector<InputGap> out;
    for (const auto& d : rows) {
        if (d.input == "synthetic") continue;
        for (const auto& s : rows)
            if (s.input == "synthetic" && s.bandwidth == d.bandwidth && s.comm == d.comm &&
                s.compression == d.compression && s.nodes == d.nodes && s.batch == d.batch &&
                s.samples_per_s > 0) {
                out.push_back({&d, &s, 1 - d.samples_per_s / s.samples_per_s});
                break;
            }
    }
    return out;
}

} // namespace ddl::cli
