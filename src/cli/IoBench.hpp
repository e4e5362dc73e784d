#pragma once
// `ddl bench io`'s pieces shared by the sweep (BenchIoCommand.cpp) and its report (IoBenchReport.cpp).
#include "cli/BenchData.hpp"
#include "cli/Launch.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl::cli {

struct IoBenchArgs {
    RunArgs run;
    std::string sources = "shared,local"; // where the nodes read: the shared folder, their own disk
    std::string formats = "files,shards";
    std::string workers = "1,4,8"; // DataLoader worker processes per node
    std::string nodes;             // "1..N" or "1,2,4"; empty: 1..all
    BenchDataset dataset;
    int batch = 32;
    int image_size = 224;
    bool decode = true;      // false: read the bytes only (the storage's own rate)
    bool keep_cache = false; // true: no drop_caches between runs
    std::string python = "python3";
    std::string out_dir = "bench-io";
    std::string chart; // empty: <out_dir>/io.png
    std::string output = "text";
};

// The sweep's lists, checked before the cluster is touched.
struct IoSweep {
    std::vector<std::string> sources;
    std::vector<std::string> formats;
    std::vector<int> workers;
    std::vector<int> nodes; // always from 1: the efficiency's baseline
};
// An Error for a value outside its list (a source, a format), or a count out of range; total_nodes bounds
// --nodes.
Result<IoSweep> read_io_sweep(const IoBenchArgs& b, int total_nodes);

struct IoRankFigures {
    std::string host;
    double images_per_s = 0;
    double mb_per_s = 0;
};

struct IoRow {
    std::string source;
    std::string format;
    int workers = 0;
    int nodes = 0;
    long long images = 0;
    double bytes = 0;
    double seconds = 0;
    double images_per_s = 0; // all nodes: images / the slowest node's seconds
    double mb_per_s = 0;
    double efficiency = 0; // images_per_s(N) / (N x images_per_s(1)) of the same series
    std::vector<IoRankFigures> per_node;
};
// A row from python3 -m ddl_data bench's JSON line.
IoRow io_row_of(const nlohmann::json& j, const std::string& source, const std::string& format, int workers,
                int nodes);

struct IoTables {
    std::string csv;
    nlohmann::json json;
};
// cache: what drop_page_caches said (or that it was not asked for).
IoTables tabulate_io(const std::string& cluster, const IoBenchArgs& b, const std::string& cache,
                     const std::vector<IoRow>& rows);
void print_io_table(const IoBenchArgs& b, const std::string& cache, const std::vector<IoRow>& rows,
                    const std::string& written);
// io.csv, io.json and the chart (one series per source, format and worker count); what was written.
std::string write_io_files(const IoBenchArgs& b, const IoSweep& sw, const std::vector<IoRow>& rows,
                           const IoTables& t);

} // namespace ddl::cli
