#pragma once
// A cluster opened for a command: an existing one from the state folder (read-only, or under its lock),
// or the one a spec file names, created when new (deploy, smoke-test).
#include "provision/Context.hpp"
#include "spec/SpecDrift.hpp"
#include "targets/Registry.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace ddl::cli {

// Its lock (when mutating), state, spec, driver and side effects.
struct OpenCluster {
    explicit OpenCluster(StateStore s) : store(std::move(s)) {}
    StateStore store;
    ClusterLock lock;
    ClusterState state;
    // The state as it was before this command (deploy, smoke-test) reconciled it with the spec: put back
    // when the command changes nothing after all (a refused or declined approval). Empty for a new cluster.
    std::optional<ClusterState> before;
    SystemProcessRunner proc;
    LibsshExecutor remote;
    ConsoleProgress progress;
    std::optional<Context> ctx;
    std::unique_ptr<TargetDriver> driver;
    // How the spec file it was deployed from (or the one named) differs from the deployed spec.
    SpecDrift drift;
};

// The cluster's master node (the first node when none is in the master group); nullptr without nodes.
const NodeState* master_of(const Context& ctx);

// An existing cluster from `state_dir` (ref: name, spec file or empty for the only one); locked when
// `mutate`, its holder described by `what`. On failure *rc (when given) is the exit code: bad input when
// ref names no cluster, a runtime failure otherwise.
Result<std::unique_ptr<OpenCluster>> open_cluster(const std::string& state_dir, const std::string& ref,
                                                  bool mutate, const std::string& what, int* rc = nullptr);
// The spec's cluster, locked, with state created or loaded and reconciled with the spec, and its driver;
// `spec_file` is kept as the spec text; SIGINT/SIGTERM handlers are installed. rc is the exit code to use
// when it fails.
Result<std::unique_ptr<OpenCluster>> open_for_deploy(const std::string& state_dir, const Spec& spec,
                                                     const std::string& spec_file,
                                                     const DeployOptions& options, const std::string& what,
                                                     int& rc);

} // namespace ddl::cli
