#pragma once
// Launcher: the core of `ddl run`. Assigns ranks to hostfile slots (packed host by host), builds each
// rank's environment, starts every rank through a RankTransport, prefixes output lines with "[rank] ",
// and supervises: the first rank to fail (non-zero exit, signal, lost host) gets every other rank
// stopped (SIGTERM, SIGKILL after a grace period) and the launch fails naming its rank, host and
// status. SIGINT/SIGTERM sent to the launcher are forwarded to all ranks. Ranks that have not started
// by the start-up timeout fail the launch, naming their hosts.
#include "runtime/Hostfile.hpp"
#include "runtime/RankTransport.hpp"
#include "util/Result.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddl::runtime {

struct RankAssignment {
    int rank = 0;
    std::string host;
    int local_rank = 0;
    int local_size = 1;
};

struct LaunchOptions {
    std::vector<HostfileEntry> hosts;
    int np = 0; // 0: every slot
    std::vector<std::string> argv;
    std::string iface;       // DDL_IFACE and NCCL_SOCKET_IFNAME; empty: default choice on each node
    std::string master_addr; // empty: the host of rank 0
    int master_port = 29500;
    std::map<std::string, std::string> extra_env;
    std::string workdir; // every rank starts here (RankStart::workdir); empty: the transport's default
    std::chrono::milliseconds startup_timeout{std::chrono::seconds(60)};
    std::chrono::milliseconds kill_grace{std::chrono::seconds(3)};
    bool forward_signals = true; // install SIGINT/SIGTERM handlers for the duration of run()
    // Receives every prefixed output line ("[3] text"); default: the launcher's stdout/stderr.
    std::function<void(const std::string& line, OutputStream stream)> output;
};

struct LaunchResult {
    int exit_code = 0;   // 0 when every rank succeeded
    std::string message; // why it failed
    int failed_rank = -1;
    std::string failed_host;
};

// Packs ranks onto hosts in order; np above the total is an error listing the slots.
[[nodiscard]] ddl::Result<std::vector<RankAssignment>> assign_ranks(const std::vector<HostfileEntry>& hosts,
                                                                    int np);

// The environment contract of a rank (see src/runtime/README.md).
[[nodiscard]] std::map<std::string, std::string> rank_environment(const LaunchOptions& opts,
                                                                  const RankAssignment& rank, int world_size,
                                                                  const std::string& master_addr);

// The signal (SIGINT, SIGTERM) that interrupted a run of this process, or 0: the command that ran it ends
// with 128 + it whatever it makes of the run's failure (Ctrl-C is 130 in every command).
[[nodiscard]] int interrupting_signal();

class Launcher {
public:
    explicit Launcher(RankTransport& transport) : m_transport(transport) {}
    // Runs the job to the end. An Error for bad options (np, empty argv); otherwise the outcome.
    [[nodiscard]] ddl::Result<LaunchResult> run(const LaunchOptions& opts);

private:
    // Starts every rank in order until one cannot start; that failure, or nullopt when all started.
    std::optional<LaunchResult> start_ranks(const std::vector<RankAssignment>& ranks,
                                            const LaunchOptions& opts, const std::string& master,
                                            RankEvents& events,
                                            std::vector<std::unique_ptr<RankHandle>>& handles, int& alive);

    RankTransport& m_transport;
};

} // namespace ddl::runtime
