// `ddl bench train`: data-parallel training throughput over nodes x batch size (x link bandwidth on
// the local target), as the Horovod reference-deployment experiments present it; CSV, JSON and a PNG.
#include "cli/Internal.hpp"
#include "core/Diagnostics.hpp"
#include "util/Files.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <cstdio>
#include <iostream>

namespace ddl::cli {
namespace {

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
    int nodes = 0;
    int ranks = 0;
    int batch = 0;
    double samples_per_s = 0;
    double samples_per_s_rank = 0;
    double step_s = 0;
    double comm_exposed_s = 0;
    double efficiency = 0;
};

// One ddl-train-bench run through the launcher; rank 0's JSON line.
Result<nlohmann::json> run_once(Context& ctx, const TrainBenchArgs& b, int nodes, int batch) {
    RunArgs a = b.run;
    a.max_nodes = nodes;
    a.command = {"ddl-train-bench",
                 "--profile",
                 b.profile,
                 "--batch",
                 std::to_string(batch),
                 "--steps",
                 std::to_string(b.steps),
                 "--warmup",
                 std::to_string(b.warmup),
                 "--json"};
    return run_tool_json(ctx, a);
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
    plot("Training throughput", "samples/s (all ranks)", 2);
    plot("Scaling efficiency", "throughput(N) / (N x throughput(1))", 3);
    return s + "unset multiplot\n";
}

} // namespace

int cmd_bench_train(const GlobalOptions& g, const TrainBenchArgs& b) {
    auto fail = [](const std::string& m, int rc) {
        std::cerr << "ddl bench train: " << m << "\n";
        return rc;
    };
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, b.run.cluster, false, "", &open_rc);
    if (!oc) return fail(oc.error().message, open_rc);
    auto& ctx = *(*oc)->ctx;
    int total_nodes = static_cast<int>(ctx.state.nodes.size());
    auto batches = parse_int_list(b.batches, 4096, "--batch");
    auto nodes = parse_int_list(b.nodes.empty() ? "1.." + std::to_string(total_nodes) : b.nodes, total_nodes,
                                "--nodes");
    if (!batches) return fail(batches.error().message, exit_code::k_bad_input);
    if (!nodes) return fail(nodes.error().message, exit_code::k_bad_input);
    if ((*nodes)[0] != 1) nodes->insert(nodes->begin(), 1); // efficiency needs the 1-node baseline
    std::vector<std::uint64_t> rates;
    for (const auto& r : split(b.bandwidths, ',')) {
        if (trim(r).empty()) continue;
        auto v = parse_rate(r);
        if (!v) return fail("--bandwidths " + r + ": not a rate like 1gbit", exit_code::k_bad_input);
        rates.push_back(*v);
    }
    auto& driver = *(*oc)->driver;
    // Where ddl shapes the links itself, their rate is known and can be swept.
    const bool shapes_links = driver.can_reshape_links();
    if (!rates.empty() && !shapes_links)
        return fail("--bandwidths re-shapes links, which only the local target can do",
                    exit_code::k_bad_input);
    const bool reshape = !rates.empty();
    if (!reshape) rates.push_back(shapes_links ? ctx.spec.link_rate_bps() : 0);

    std::vector<Row> rows;
    std::vector<std::string> series;
    for (auto bps : rates) {
        if (reshape) {
            if (auto s = driver.reshape_links(ctx, bps); !s)
                return fail(s.error().message, exit_code::k_failure);
        }
        std::string bw = reshape || shapes_links ? format_rate(bps) : "as deployed";
        for (int batch : *batches) {
            double base = 0;
            series.push_back("batch " + std::to_string(batch) + (rates.size() > 1 ? ", " + bw : ""));
            for (int n : *nodes) {
                auto j = run_once(ctx, b, n, batch);
                if (!j) {
                    if (reshape) (void)driver.reshape_links(ctx, ctx.spec.link_rate_bps());
                    return fail(std::to_string(n) + " node(s), batch " + std::to_string(batch) + ": " +
                                    j.error().message,
                                exit_code::k_failure);
                }
                Row r{bw,
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
                    std::fprintf(
                        stderr,
                        "  %-10s nodes %2d ranks %2d batch %4d: %9.1f samples/s, efficiency %5.1f%%\n",
                        bw.c_str(), n, r.ranks, batch, r.samples_per_s, 100 * r.efficiency);
            }
        }
    }
    if (reshape) (void)driver.reshape_links(ctx, ctx.spec.link_rate_bps());

    if (auto s = make_dirs(b.out_dir, 0755); !s) return fail(s.error().message, exit_code::k_failure);
    std::string csv = "bandwidth,nodes,ranks,batch_per_rank,samples_per_s,samples_per_s_rank,step_s,comm_"
                      "exposed_s,efficiency\n";
    nlohmann::json j{{"cluster", ctx.state.cluster},
                     {"profile", b.profile},
                     {"steps", b.steps},
                     {"warmup", b.warmup},
                     {"results", nlohmann::json::array()}};
    char line[256];
    for (const auto& r : rows) {
        std::snprintf(line, sizeof line, "%s,%d,%d,%d,%.2f,%.2f,%.5f,%.5f,%.4f\n", r.bandwidth.c_str(),
                      r.nodes, r.ranks, r.batch, r.samples_per_s, r.samples_per_s_rank, r.step_s,
                      r.comm_exposed_s, r.efficiency);
        csv += line;
        j["results"].push_back({{"bandwidth", r.bandwidth},
                                {"nodes", r.nodes},
                                {"ranks", r.ranks},
                                {"batch_per_rank", r.batch},
                                {"samples_per_s", r.samples_per_s},
                                {"samples_per_s_rank", r.samples_per_s_rank},
                                {"step_s", r.step_s},
                                {"comm_exposed_s", r.comm_exposed_s},
                                {"efficiency", r.efficiency}});
    }
    (void)write_file_atomic(b.out_dir + "/train.csv", csv, 0644);
    (void)write_file_atomic(b.out_dir + "/train.json", j.dump(2) + "\n", 0644);
    // One small CSV per line of the chart (nodes, throughput, efficiency), in sweep order.
    std::size_t per_series = nodes->size();
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
    SystemProcessRunner proc;
    auto plot =
        proc.run({.argv = {"gnuplot", b.out_dir + "/train.gnuplot"}, .timeout = std::chrono::seconds(60)});
    bool plotted = plot && plot->success();
    if (!plotted)
        std::cerr << "ddl bench train: no chart: "
                  << (plot ? describe_failure({.argv = {"gnuplot"}}, *plot) : plot.error().message)
                  << " (install gnuplot-nox)\n";
    if (b.format == "json") {
        std::cout << j.dump(2) << "\n";
    } else if (b.format == "csv") {
        std::cout << csv;
    } else {
        std::printf("# data-parallel training, profile %s, %d steps (+%d warm-up); efficiency = thr(N) / (N "
                    "* thr(1))\n",
                    b.profile.c_str(), b.steps, b.warmup);
        std::printf("%-12s %6s %6s %7s %14s %12s %10s %12s %10s\n", "bandwidth", "nodes", "ranks", "batch",
                    "samples/s", "per rank", "step(s)", "exposed(s)", "effic.");
        for (const auto& r : rows)
            std::printf("%-12s %6d %6d %7d %14.1f %12.1f %10.4f %12.4f %9.1f%%\n", r.bandwidth.c_str(),
                        r.nodes, r.ranks, r.batch, r.samples_per_s, r.samples_per_s_rank, r.step_s,
                        r.comm_exposed_s, 100 * r.efficiency);
        std::printf("# wrote %s/train.csv, train.json%s\n", b.out_dir.c_str(), plotted ? ", train.png" : "");
    }
    return exit_code::k_ok;
}

} // namespace ddl::cli
