#pragma once
// Pieces shared by the command implementations (Commands.cpp, SmokeTest.cpp); not a public API.
#include "cli/Commands.hpp"
#include "provision/Context.hpp"
#include "provision/SshRankTransport.hpp"
#include "runtime/Launcher.hpp"
#include "targets/Registry.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ddl::cli {

// Set by SIGINT/SIGTERM once install_signal_handlers() ran.
extern std::atomic<bool> g_interrupted;
void install_signal_handlers();

// A cluster opened for a command: its lock (when mutating), state, spec, driver and side effects.
struct OpenCluster {
    StateStore store;
    ClusterLock lock;
    ClusterState state;
    SystemProcessRunner proc;
    LibsshExecutor remote;
    ConsoleProgress progress;
    std::optional<Context> ctx;
    std::unique_ptr<TargetDriver> driver;
};

// An existing cluster from the state folder (ref: name, spec file or empty for the only one). On failure
// *rc (when given) is the exit code: bad input when ref names no cluster, a runtime failure otherwise.
Result<std::unique_ptr<OpenCluster>> open_cluster(const GlobalOptions& g, const std::string& ref, bool mutate,
                                                  const std::string& what, int* rc = nullptr);
// The spec's cluster, locked, with state created or loaded and reconciled with the spec; rc is the
// exit code to use when it fails.
Result<std::unique_ptr<OpenCluster>> open_for_deploy(const GlobalOptions& g, const Spec& spec,
                                                     const DeployArgs& a, const std::string& what, int& rc);

// Hosts, transport and launch options for `ddl run`, `ddl bench` and the smoke test's allreduce.
struct PreparedLaunch {
    std::unique_ptr<SshRankTransport> transport;
    runtime::LaunchOptions opts;
};
Result<PreparedLaunch> prepare_launch(Context& ctx, const RunArgs& a);
// Whether the cluster has training containers to run in (runtime.image set, configure done).
Status training_containers_ready(const Context& ctx);
// The targets `ddl deploy --manifest` applies to (their drivers take a testbed tool's manifest).
std::set<std::string> manifest_targets();
std::vector<std::string> manifest_target_list();
// Runs a runtime tool that prints one JSON line on rank 0 (ddl-allreduce-test, ddl-train-bench
// with --json) and returns that line; an Error names the failed rank or the tool's last error lines.
Result<nlohmann::json> run_tool_json(Context& ctx, const RunArgs& a);

} // namespace ddl::cli
