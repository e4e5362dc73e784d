#pragma once
// Launching ranks over SSH with the bundled runtime's launcher: `ddl run`, `ddl bench` and the smoke
// test's allreduce.
#include "provision/Context.hpp"
#include "provision/SshRankTransport.hpp"
#include "runtime/Launcher.hpp"

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl::cli {

// What `ddl run` takes; `ddl bench` and the smoke test fill one for their tools.
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
    // The user's job (`ddl run`): ranks start in the synced workdir, as `ddl run -d`'s do; the bundled
    // tools (bench, smoke test, doctor) start in the login folder.
    bool as_job = false;
    std::vector<std::string> command;
    // The bundled tools' rank 0 progress lines ("ddl-progress ..." on stderr, run_tool_lines): the rest of
    // the line; unset: they are kept with the error lines.
    std::function<void(const std::string&)> on_progress;
};

// The -x arguments as variables: NAME=VALUE, or NAME with this shell's value (empty when unset); the
// last one for a name wins. Names are not checked (see check_env_args).
std::map<std::string, std::string> env_from_args(const std::vector<std::string>& args);
// An Error for the first -x argument whose NAME is not a variable name.
Status check_env_args(const std::vector<std::string>& args);

// Hosts, transport and launch options.
struct PreparedLaunch {
    std::unique_ptr<SshRankTransport> transport;
    runtime::LaunchOptions opts;
};
Result<PreparedLaunch> prepare_launch(Context& ctx, const RunArgs& a);
// Whether the cluster has training containers to run in (runtime.image set, configure done).
Status training_containers_ready(const Context& ctx);
// Runs a runtime tool that prints one JSON line on rank 0 (ddl-allreduce-test, ddl-train-bench
// with --json) and returns that line; an Error names the failed rank or the tool's last error lines.
Result<nlohmann::json> run_tool_json(Context& ctx, const RunArgs& a);
// Runs a runtime program to its end and returns what rank 0 printed on stdout, line by line (without the
// "[0] " prefix); an Error names the failed rank or the program's last error lines.
Result<std::vector<std::string>> run_tool_lines(Context& ctx, const RunArgs& a);

} // namespace ddl::cli
