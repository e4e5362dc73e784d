// The scaling chart of `ddl bench train` and `ddl bench io`: series CSVs, a gnuplot script, the PNG.
#include "cli/ScalingChart.hpp"

#include "util/Files.hpp"
#include "util/Process.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

namespace ddl::cli {

// Two charts as a scaling paper draws them: throughput and efficiency against whole node counts, axes
// from zero, one line with markers per series, the ideal (linear scaling from the series' own first
// point) dashed in the series' colour, the legend below the plots.
std::string scaling_gnuplot(const ScalingChart& c) {
    int max_nodes = 1;
    for (const auto& s : c.series)
        for (const auto& p : s.points)
            max_nodes = std::max(max_nodes, p.nodes);
    std::string s = "set terminal pngcairo size 1400,600 font 'sans,10'\nset output '" + c.png +
                    "'\nset datafile separator ','\nset key below maxrows 4\nset grid\nset xtics 1\n"
                    "set format x '%.0f'\nset xrange [0:" +
                    std::to_string(max_nodes) +
                    ".3]\nset yrange [0:*]\nset offsets 0, 0, graph 0.08, 0\nset multiplot layout 1,2\n";
    auto plot = [&](const std::string& title, const std::string& ylabel, int column, bool per_series_ideal) {
        s += "set title '" + title + "'\nset xlabel 'nodes'\nset ylabel '" + ylabel + "'\nplot ";
        for (std::size_t i = 0; i < c.series.size(); ++i) {
            const std::string file = "'" + c.dir + "/series-" + std::to_string(i) + ".csv'";
            const std::string colour = " lc " + std::to_string(i + 1);
            s += (i ? ", " : "") + file + " using 1:" + std::to_string(column) +
                 " with linespoints lw 2 pt " + std::to_string(i % 8 + 4) + " ps 1.4" + colour + " title '" +
                 c.series[i].label + "'";
            if (per_series_ideal)
                s += ", " + file + " using 1:4 with lines dt 2" + colour +
                     (i == 0 ? " title 'ideal (dashed): N x the line''s 1-node throughput'" : " notitle");
        }
        if (!per_series_ideal) s += ", 1 with lines dt 2 lc rgb 'black' title 'ideal'";
        s += "\n";
    };
    plot(c.title, c.ylabel, 2, true);
    plot("Scaling efficiency", "throughput(N) / (N x throughput(1))", 3, false);
    return s + "unset multiplot\n";
}

bool draw_scaling_chart(const ScalingChart& c, const std::string& command) {
    char line[256];
    for (std::size_t si = 0; si < c.series.size(); ++si) {
        const auto& points = c.series[si].points;
        std::string data;
        const double base =
            points.empty() || points[0].nodes == 0 ? 0 : points[0].throughput / points[0].nodes;
        for (const auto& p : points) {
            std::snprintf(line, sizeof line, "%d,%.2f,%.4f,%.2f\n", p.nodes, p.throughput, p.efficiency,
                          base * p.nodes);
            data += line;
        }
        (void)write_file_atomic(c.dir + "/series-" + std::to_string(si) + ".csv", data, 0644);
    }
    const std::string script = c.dir + "/" + c.stem + ".gnuplot";
    if (auto s = write_file_atomic(script, scaling_gnuplot(c), 0644); !s) {
        std::cerr << command << ": no chart: " << s.error().message << "\n";
        return false;
    }
    SystemProcessRunner proc;
    auto plot = proc.run({.argv = {"gnuplot", script}, .timeout = std::chrono::seconds(60)});
    if (plot && plot->success()) return true;
    std::cerr << command << ": no chart: "
              << (plot ? describe_failure({.argv = {"gnuplot"}}, *plot) : plot.error().message)
              << " (install gnuplot-nox)\n";
    return false;
}

} // namespace ddl::cli
