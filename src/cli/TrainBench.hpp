#pragma once
// `ddl bench train`'s pieces shared by the sweep (BenchTrainCommand.cpp) and its report
// (TrainBenchReport.cpp).
#include "cli/BenchData.hpp"
#include "cli/Launch.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl::cli {

struct TrainBenchArgs {
    RunArgs run;
    std::string framework = "synthetic";
    std::string profile = "resnet50";
    // pytorch: a torchvision model, its images' side and the batch sizes per rank; empty/0: sized for the
    // cluster (bench_train: resnet50, 224 px, 32,64,96 with GPUs; resnet18, 64 px, 8,16,32 on CPUs only).
    std::string model;
    std::string comms = "ddl";             // pytorch: ddl, gloo, nccl (comma separated: one series each)
    std::vector<std::string> compressions; // pytorch: one series per (comm, compression); empty: none
    int rounds = 1;                        // runs per point, the series alternating; the median is kept
    int image_size = 0;
    std::string python = "python3";
    long long dataset_images = 0; // > 0: time-to-train per row
    int epochs = 90;
    std::string batches;    // per rank, comma separated
    std::string nodes;      // "1..N" or "1,2,4"; empty: 1..all
    std::string bandwidths; // links ddl shapes only: e.g. "1gbit,10gbit"; empty: as deployed
    int steps = 10;
    int warmup = 2;
    int progress_every_s = 10; // a run that lasts longer says its step this often; 0: never
    // pytorch: "", files or shards (the bench dataset, generated once if absent), or the name of one of
    // the spec's datasets (staged by `ddl data stage`): also train from it, beside synthetic input.
    std::string data;
    std::string data_source = "local"; // where the bench dataset is read: local (staged) or shared
    int data_workers = 2;              // DataLoader workers per rank
    BenchDataset dataset;              // the bench dataset's size and seed
    // What --data resolves to (resolve_data_input): the folder the ranks read, its layout, its name.
    std::string data_path, data_format, data_name;
    std::string out_dir = "bench-train";
    std::string format = "text";
};

struct TrainRow {
    std::string bandwidth;
    std::string comm; // pytorch: what averaged the gradients (ddl/tcp, gloo, nccl); synthetic: ddl's ring
    std::string
        compression; // pytorch: none, fp16, powersgd:…, topk:… (ddl's, or PyTorch's hook on gloo/nccl)
    std::string input = "synthetic"; // pytorch --data: "shards, 2 workers" etc.
    int nodes = 0;
    int ranks = 0;
    int batch = 0;
    double samples_per_s = 0;
    double samples_per_s_rank = 0;
    double step_s = 0;
    double comm_exposed_s = 0;
    double efficiency = 0;
    double bytes_per_step = -1;       // rank 0's, counted by libddlcomm; -1: not counted (Gloo, NCCL)
    double iface_bytes_per_step = -1; // rank 0's interface, all traffic; -1: not read
};

// The report: train.csv and train.json as text, the chart's files, the table on stdout.
struct TrainTables {
    std::string csv;
    nlohmann::json json;
};
TrainTables tabulate(const std::string& cluster, const TrainBenchArgs& b, const std::vector<TrainRow>& rows);
// train.csv and train.json.
void write_train_files(const TrainBenchArgs& b, const TrainTables& t);
// The chart (ScalingChart): one series per label, nodes_per_series rows each in sweep order.
bool draw_train_chart(const TrainBenchArgs& b, std::size_t nodes_per_series,
                      const std::vector<TrainRow>& rows, const std::vector<std::string>& series);
void print_train_table(const TrainBenchArgs& b, const std::vector<TrainRow>& rows, bool plotted);
// --data: for each row read from the dataset, its throughput against the synthetic row of the same point
// (bandwidth, comm, compression, nodes, batch): "gap" = 1 - data / synthetic.
struct InputGap {
    const TrainRow* data;
    const TrainRow* synthetic;
    double gap;
};
std::vector<InputGap> input_gaps(const std::vector<TrainRow>& rows);

} // namespace ddl::cli
