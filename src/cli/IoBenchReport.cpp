// `ddl bench io`'s options check and report: the table, io.csv, io.json and the chart.
#include "cli/IoBench.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/ScalingChart.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cstdio>
#include <iostream>

namespace ddl::cli {
namespace {

Result<std::vector<std::string>> members(const std::string& text, const std::vector<std::string>& allowed,
                                         const std::string& what) {
    std::vector<std::string> out;
    for (const auto& part : split(text, ',')) {
        const std::string v = trim(part);
        if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
            return Error{what + " " + text + ": each must be " + join(allowed, " or ")};
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
}

std::string series_label(const IoRow& r) {
    return r.source + ", " + r.format + ", " + std::to_string(r.workers) + " worker" +
           (r.workers == 1 ? "" : "s");
}

} // namespace

Result<IoSweep> read_io_sweep(const IoBenchArgs& b, int total_nodes) {
    IoSweep sw;
    auto sources = members(b.sources, {"shared", "local"}, "--source");
    auto formats = members(b.formats, {"files", "shards"}, "--format");
    auto workers = parse_int_list(b.workers, 64, "--workers", 0);
    auto nodes = parse_int_list(b.nodes.empty() ? "1.." + std::to_string(total_nodes) : b.nodes, total_nodes,
                                "--nodes");
    if (!sources) return sources.error();
    if (!formats) return formats.error();
    if (!workers) return workers.error();
    if (!nodes) return nodes.error();
    if ((*nodes)[0] != 1) nodes->insert(nodes->begin(), 1); // efficiency needs the 1-node baseline
    if (b.dataset.shards < *std::max_element(nodes->begin(), nodes->end()))
        return Error{"--shards " + std::to_string(b.dataset.shards) +
                     ": fewer shards than nodes leaves nodes idle"};
    return IoSweep{std::move(*sources), std::move(*formats), std::move(*workers), std::move(*nodes)};
}

IoRow io_row_of(const nlohmann::json& j, const std::string& source, const std::string& format, int workers,
                int nodes) {
    IoRow r{.source = source, .format = format, .workers = workers, .nodes = nodes};
    r.images = j.value("images", 0LL);
    r.bytes = j.value("bytes", 0.0);
    r.seconds = j.value("seconds", 0.0);
    r.images_per_s = j.value("images_per_s", 0.0);
    r.mb_per_s = j.value("mb_per_s", 0.0);
    if (j.contains("per_rank") && j["per_rank"].is_array())
        for (const auto& p : j["per_rank"])
            r.per_node.push_back(
                {p.value("host", std::string("?")), p.value("images_per_s", 0.0), p.value("mb_per_s", 0.0)});
    return r;
}

IoTables tabulate_io(const std::string& cluster, const IoBenchArgs& b, const std::string& cache,
                     const std::vector<IoRow>& rows) {
    IoTables t;
    t.csv = "source,format,workers,nodes,images,bytes,seconds,images_per_s,mb_per_s,efficiency,"
            "node_images_per_s_min,node_images_per_s_max\n";
    t.json = nlohmann::json{{"cluster", cluster},
                            {"dataset", b.dataset.name()},
                            {"images", b.dataset.images},
                            {"classes", b.dataset.classes},
                            {"decode", b.decode},
                            {"image_size", b.image_size},
                            {"batch", b.batch},
                            {"cache", cache},
                            {"results", nlohmann::json::array()}};
    char line[400];
    for (const auto& r : rows) {
        double lo = 0, hi = 0;
        for (std::size_t i = 0; i < r.per_node.size(); ++i) {
            lo = i == 0 ? r.per_node[i].images_per_s : std::min(lo, r.per_node[i].images_per_s);
            hi = std::max(hi, r.per_node[i].images_per_s);
        }
        std::snprintf(line, sizeof line, "%s,%s,%d,%d,%lld,%.0f,%.3f,%.2f,%.3f,%.4f,%.2f,%.2f\n",
                      r.source.c_str(), r.format.c_str(), r.workers, r.nodes, r.images, r.bytes, r.seconds,
                      r.images_per_s, r.mb_per_s, r.efficiency, lo, hi);
        t.csv += line;
        nlohmann::json nodes = nlohmann::json::array();
        for (const auto& p : r.per_node)
            nodes.push_back({{"host", p.host}, {"images_per_s", p.images_per_s}, {"mb_per_s", p.mb_per_s}});
        t.json["results"].push_back({{"source", r.source},
                                     {"format", r.format},
                                     {"workers", r.workers},
                                     {"nodes", r.nodes},
                                     {"images", r.images},
                                     {"bytes", r.bytes},
                                     {"seconds", r.seconds},
                                     {"images_per_s", r.images_per_s},
                                     {"mb_per_s", r.mb_per_s},
                                     {"efficiency", r.efficiency},
                                     {"per_node", std::move(nodes)}});
    }
    return t;
}

void print_io_table(const IoBenchArgs& b, const std::string& cache, const std::vector<IoRow>& rows,
                    const std::string& written) {
    // Through std::cout, not printf: what ddl prints passes the shared redactor (util/Redactor.hpp).
    std::cout << "# " << (b.decode ? "read and decode" : "read only (no decode)")
              << ": one pass over dataset " << b.dataset.name() << " (" << b.dataset.images << " JPEGs, "
              << b.dataset.classes
              << " classes), each node reading its share through a PyTorch DataLoader (batch " << b.batch
              << ", "
              << (b.decode ? "decoded with PIL, random crop to " + std::to_string(b.image_size) + "px"
                           : std::string("bytes only"))
              << "); images/s and MB/s of JPEG over all nodes (the slowest node ends the pass); efficiency = "
                 "thr(N) / (N * thr(1)); "
              << cache << "\n";
    char line[160];
    std::snprintf(line, sizeof line, "%-7s %-7s %8s %6s %12s %10s %8s   ", "source", "format", "workers",
                  "nodes", "images/s", "MB/s", "effic.");
    std::cout << line << "per node images/s\n";
    for (const auto& r : rows) {
        std::string per;
        char buf[64];
        for (const auto& p : r.per_node) {
            std::snprintf(buf, sizeof buf, "%s%s %.0f", per.empty() ? "" : ", ", p.host.c_str(),
                          p.images_per_s);
            per += buf;
        }
        std::snprintf(line, sizeof line, "%-7s %-7s %8d %6d %12.1f %10.2f %7.1f%%   ", r.source.c_str(),
                      r.format.c_str(), r.workers, r.nodes, r.images_per_s, r.mb_per_s, 100 * r.efficiency);
        std::cout << line << per << "\n";
    }
    std::cout << "# wrote " << written << "\n";
}

std::string write_io_files(const IoBenchArgs& b, const IoSweep& sw, const std::vector<IoRow>& rows,
                           const IoTables& t) {
    (void)write_file_atomic(b.out_dir + "/io.csv", t.csv, 0644);
    (void)write_file_atomic(b.out_dir + "/io.json", t.json.dump(2) + "\n", 0644);
    ScalingChart c{.dir = b.out_dir,
                   .stem = "io",
                   .png = b.chart.empty() ? b.out_dir + "/io.png" : b.chart,
                   .title = b.decode ? "Read and decode throughput" : "Read throughput",
                   .ylabel = "images/s (all nodes)",
                   .series = {}};
    // rows come series by series, sw.nodes.size() each.
    for (std::size_t i = 0; i + sw.nodes.size() <= rows.size(); i += sw.nodes.size()) {
        ScalingSeries s{.label = series_label(rows[i]), .points = {}};
        for (std::size_t k = 0; k < sw.nodes.size(); ++k)
            s.points.push_back({.nodes = rows[i + k].nodes,
                                .throughput = rows[i + k].images_per_s,
                                .efficiency = rows[i + k].efficiency});
        c.series.push_back(std::move(s));
    }
    const bool plotted = draw_scaling_chart(c, "ddl bench io");
    return b.out_dir + "/io.csv, io.json" + (plotted ? ", " + c.png : "");
}

} // namespace ddl::cli
