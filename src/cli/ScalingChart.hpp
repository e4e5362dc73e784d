#pragma once
// The chart `ddl bench train` and `ddl bench io` draw (gnuplot): throughput and scaling efficiency against
// node counts, one line per series, the ideal dashed.
#include <string>
#include <vector>

namespace ddl::cli {

struct ScalingPoint {
    int nodes = 0;
    double throughput = 0;
    double efficiency = 0; // throughput(N) / (N x throughput(1))
};

struct ScalingSeries {
    std::string label;
    std::vector<ScalingPoint> points; // by node count, the first the baseline of the ideal line
};

struct ScalingChart {
    std::string dir;    // the series' CSVs and the gnuplot script go here
    std::string stem;   // <dir>/<stem>.gnuplot
    std::string png;    // the chart
    std::string title;  // of the throughput panel
    std::string ylabel; // of the throughput panel
    std::vector<ScalingSeries> series;
};

// The gnuplot script (pure; tests read it).
std::string scaling_gnuplot(const ScalingChart& c);
// Writes <dir>/series-I.csv (nodes, throughput, efficiency, ideal) and the script, and runs gnuplot;
// true when the PNG was drawn, else a line on stderr from `command` saying why.
bool draw_scaling_chart(const ScalingChart& c, const std::string& command);

} // namespace ddl::cli
