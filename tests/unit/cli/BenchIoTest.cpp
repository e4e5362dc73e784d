// `ddl bench io` and `ddl bench train --data`: option lists, the dataset's places, the report and the chart.
#include "cli/IoBench.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/ScalingChart.hpp"
#include "cli/TrainBench.hpp"

#include <catch2/catch.hpp>

using namespace ddl;
using namespace ddl::cli;

TEST_CASE("bench io reads its lists and starts the node counts at 1") {
    IoBenchArgs b;
    b.sources = "local";
    b.formats = "shards,files,shards";
    b.workers = "0,4";
    b.nodes = "2,4";
    auto sw = read_io_sweep(b, 4);
    REQUIRE(sw.ok());
    CHECK(sw->sources == std::vector<std::string>{"local"});
    CHECK(sw->formats == std::vector<std::string>{"shards", "files"});
    CHECK(sw->workers == std::vector<int>{0, 4});
    CHECK(sw->nodes == std::vector<int>{1, 2, 4});
    b.nodes.clear();
    b.workers = "1..3";
    auto all = read_io_sweep(b, 3);
    REQUIRE(all.ok());
    CHECK(all->nodes == std::vector<int>{1, 2, 3});
    CHECK(all->workers == std::vector<int>{1, 2, 3});
}

TEST_CASE("bench io names the option of a value it refuses") {
    IoBenchArgs b;
    b.sources = "shared,s3";
    CHECK(read_io_sweep(b, 2).error().message.find("--source shared,s3: each must be shared or local") == 0);
    b = IoBenchArgs{};
    b.formats = "tfrecord";
    CHECK(read_io_sweep(b, 2).error().message.find("--format tfrecord") == 0);
    b = IoBenchArgs{};
    b.workers = "-1";
    CHECK(read_io_sweep(b, 2).error().message.find("--workers -1: values must be 0-64") == 0);
    b = IoBenchArgs{};
    b.nodes = "1,5";
    CHECK(read_io_sweep(b, 4).error().message.find("--nodes 1,5: values must be 1-4") == 0);
    b = IoBenchArgs{};
    b.dataset.shards = 2;
    CHECK(read_io_sweep(b, 4).error().message.find("--shards 2") == 0);
}

TEST_CASE("the bench dataset lies in the shared folder or under /var/lib/ddl/data, named by its parameters") {
    Spec spec;
    spec.services.nfs_mount = "/mnt/team";
    BenchDataset d;
    d.images = 500;
    d.classes = 5;
    d.seed = 3;
    CHECK(d.name() == "synth-500x5-s3");
    CHECK(bench_data_path(spec, "shared", d.name()) == "/mnt/team/ddl-data/synth-500x5-s3");
    CHECK(bench_data_path(spec, "local", d.name()) == "/var/lib/ddl/data/synth-500x5-s3");
    CHECK(check_data_source(spec, "shared").ok());
    spec.services.nfs = false;
    auto refused = check_data_source(spec, "shared");
    REQUIRE(!refused.ok());
    CHECK(refused.error().refused);
    CHECK(check_data_source(spec, "local").ok());
}

TEST_CASE("bench io's report has a row per point with per-node figures, in CSV and JSON") {
    const auto j =
        nlohmann::json::parse(R"({"images": 200, "bytes": 6000000, "seconds": 2.0, "images_per_s": 100.0,
        "mb_per_s": 3.0, "per_rank": [{"host": "node1", "images_per_s": 60.0, "mb_per_s": 1.8},
                                      {"host": "node2", "images_per_s": 50.0, "mb_per_s": 1.5}]})");
    IoRow r = io_row_of(j, "shared", "shards", 4, 2);
    CHECK(r.images == 200);
    REQUIRE(r.per_node.size() == 2);
    CHECK(r.per_node[1].host == "node2");
    r.efficiency = 0.8;
    IoBenchArgs b;
    auto t = tabulate_io("c1", b, "page cache dropped", {r});
    CHECK(t.csv.find("source,format,workers,nodes,images,bytes,seconds,images_per_s,mb_per_s,efficiency,") ==
          0);
    CHECK(t.csv.find("\nshared,shards,4,2,200,6000000,2.000,100.00,3.000,0.8000,50.00,60.00\n") !=
          std::string::npos);
    CHECK(t.json["cache"] == "page cache dropped");
    CHECK(t.json["dataset"] == b.dataset.name());
    CHECK(t.json["results"][0]["per_node"][0]["host"] == "node1");
    CHECK(t.json["results"][0]["mb_per_s"] == 3.0);
}

TEST_CASE("the scaling chart draws each series with its ideal line into the asked PNG") {
    ScalingChart c{.dir = "/tmp/x",
                   .stem = "io",
                   .png = "/tmp/out.png",
                   .title = "Read throughput",
                   .ylabel = "images/s (all nodes)",
                   .series = {{"shared, files, 4 workers", {{1, 100, 1}, {4, 200, 0.5}}},
                              {"local, shards, 4 workers", {{1, 100, 1}, {4, 400, 1}}}}};
    const std::string s = scaling_gnuplot(c);
    CHECK(s.find("set output '/tmp/out.png'") != std::string::npos);
    CHECK(s.find("set xrange [0:4.3]") != std::string::npos);
    CHECK(s.find("'/tmp/x/series-1.csv' using 1:2 with linespoints") != std::string::npos);
    CHECK(s.find("title 'local, shards, 4 workers'") != std::string::npos);
    CHECK(s.find("set title 'Read throughput'") != std::string::npos);
    CHECK(s.find("using 1:4 with lines dt 2") != std::string::npos);
}

TEST_CASE("bench train --data sets each dataset row against the synthetic row of the same point") {
    TrainRow syn{.bandwidth = "1gbit",
                 .comm = "ddl/tcp",
                 .compression = "none",
                 .input = "synthetic",
                 .nodes = 2,
                 .ranks = 2,
                 .batch = 16,
                 .samples_per_s = 100};
    TrainRow data = syn;
    data.input = "shards, 2 workers";
    data.samples_per_s = 80;
    TrainRow other = syn;
    other.nodes = 1; // no dataset row at 1 node: no gap
    const std::vector<TrainRow> rows{other, syn, data};
    auto gaps = input_gaps(rows);
    REQUIRE(gaps.size() == 1);
    CHECK(gaps[0].synthetic == &rows[1]);
    CHECK(gaps[0].gap == Approx(0.2));
    TrainBenchArgs b;
    b.framework = "pytorch";
    b.data = "imgs"; // a dataset of the spec, resolved to its folder and layout
    b.data_format = "shards";
    b.data_name = "imgs";
    b.data_path = "/var/lib/ddl/data/imgs";
    auto t = tabulate("c1", b, rows);
    CHECK(t.csv.find(",input\n") != std::string::npos);
    CHECK(t.csv.find(",\"shards, 2 workers\"\n") != std::string::npos);
    CHECK(t.json["data"]["format"] == "shards");
    CHECK(t.json["data"]["dataset"] == "imgs");
    CHECK(t.json["data"]["path"] == "/var/lib/ddl/data/imgs");
    CHECK_FALSE(t.json["data"].contains("images")); // known for the bench dataset only
    CHECK(t.json["input_gaps"][0]["gap"].get<double>() == Approx(0.2));
}
