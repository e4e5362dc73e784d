#pragma once
// One function per command; App.cpp only parses arguments into these option structs.
#include <string>
#include <vector>

namespace ddl::cli {

struct GlobalOptions {
    std::string state_dir = ".ddl";
    bool json = false;
};

int cmd_init(const GlobalOptions& g, const std::string& target, const std::string& out,
             const std::string& name, bool force);
int cmd_validate(const GlobalOptions& g, const std::string& file);
int cmd_render(const GlobalOptions& g, const std::string& file, const std::string& out_dir,
               const std::string& public_key_file = "");

struct DeployArgs {
    std::string file;
    std::string only;
    bool yes = false;
    int ssh_timeout_s = 90;
    std::string manifest; // virtualwall: the manifest RSpec saved by the jFed GUI
    bool skip_preflight = false;
    std::string terraform_bin; // openstack: overrides openstack.terraform
    bool force_configure = false;
};
int cmd_deploy(const GlobalOptions& g, const DeployArgs& a);
int cmd_destroy(const GlobalOptions& g, const std::string& ref, bool yes,
                const std::string& terraform_bin = "");
// `--output json` leaves the secrets out unless `show_secrets`.
// Every cluster in the state folder: target, nodes, how far its deploy got, age, lock holder.
int cmd_list(const GlobalOptions& g);
int cmd_status(const GlobalOptions& g, const std::string& ref, bool show_secrets = false);
int cmd_hostfile(const GlobalOptions& g, const std::string& ref, const std::string& format,
                 const std::string& out);
int cmd_exec(const GlobalOptions& g, const std::string& ref, const std::vector<std::string>& nodes,
             const std::vector<std::string>& command, int timeout_s, bool container = false);
// Forwards 127.0.0.1:LOCAL to a service bound to a node's localhost (jupyter, grafana, prometheus or a
// port) with OpenSSH, printing the URL; runs until interrupted.
int cmd_tunnel(const GlobalOptions& g, const std::string& ref, const std::string& service, int local_port,
               const std::string& node);
int cmd_ssh(const GlobalOptions& g, const std::string& ref, const std::string& node,
            const std::vector<std::string>& command);
struct RunArgs {
    std::string cluster;
    std::string hostfile;
    int np = 0;
    std::string iface;
    int port = 0; // 0: the spec's runtime.master_port
    int startup_timeout_s = 60;
    std::vector<std::string> env; // NAME=VALUE or NAME (take this shell's value), as mpirun -x
    int max_nodes = 0;            // 0: every node; else only the first N nodes of the cluster
    bool forward_signals = true;  // the launcher relays SIGINT/SIGTERM to the ranks
    bool container = false;       // each rank inside its node's training container (runtime.image)
    std::vector<std::string> command;
};
int cmd_run(const GlobalOptions& g, const RunArgs& a);

struct BenchArgs {
    RunArgs run; // cluster, hostfile, np, iface, port, env
    std::string sizes = "1MiB:64MiB";
    int iters = 5;
    int warmup = 1;
    double link_gbit = 0;        // 0: from the spec
    std::string format = "text"; // text | json | csv
};
int cmd_bench_allreduce(const GlobalOptions& g, const BenchArgs& b);

struct TrainBenchArgs {
    RunArgs run;
    std::string profile = "resnet50";
    std::string batches = "32,64,96"; // per rank
    std::string nodes;                // "1..N" or "1,2,4"; empty: 1..all
    std::string bandwidths;           // local target only: e.g. "1gbit,10gbit"; empty: as deployed
    int steps = 10;
    int warmup = 2;
    std::string out_dir = "bench-train";
    std::string format = "text";
};
int cmd_bench_train(const GlobalOptions& g, const TrainBenchArgs& b);
int cmd_gc(const GlobalOptions& g, const std::string& older_than, const std::string& prefix, bool dry_run);
struct SmokeArgs;
int cmd_smoke_test(const GlobalOptions& g, const SmokeArgs& a);

} // namespace ddl::cli
