#pragma once
// RankTransport: how the launcher starts one rank on one host. LocalTransport (fork/exec here) and
// the SSH transport (src/remote, libssh) implement it; tests substitute fakes.
//
// Contract
// - start() returns quickly. It may complete the start asynchronously (an SSH connection takes time);
//   it reports through `events`, from any thread:
//     on_started(rank)              once the program runs (for SSH: the exec request succeeded);
//     on_output(rank, stream, line) one call per complete line, without the '\n'; a last unterminated
//                                   line is delivered at EOF;
//     on_exit(rank, exit)           exactly once, after the last on_output of that rank. A rank that
//                                   could not be started, or whose host/connection was lost, also ends
//                                   with on_exit (host_lost = true, detail says why).
//   An Error from start() means nothing was started and no events will come for that rank.
// - RankHandle::kill(signal) asks for the rank's whole process group to get `signal`; idempotent, no-op
//   after exit, never blocks for long. The launcher sends SIGTERM, then SIGKILL after a grace period,
//   and treats a rank without on_exit 2 s after SIGKILL as lost.
//   An SSH transport should run the command under a wrapper on the remote side that starts the
//   program in its own process group and kills that group when the channel closes (stdin EOF/SIGHUP);
//   kill() then sends the signal to the group (e.g. via the wrapper or ssh_channel_request_send_signal)
//   and, for SIGKILL, closes the channel.
// - Destroying a RankHandle kills the rank if it is still running, stops the transport's threads
//   for it, and returns only when no more events will be delivered for it.
// - env holds the variables to set on top of the remote's default environment; argv[0] is looked up in
//   PATH on the host.
#include "util/Result.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ddl::runtime {

enum class OutputStream { out, err };

struct RankStart {
    int rank = 0;
    std::string host;
    std::map<std::string, std::string> env;
    std::vector<std::string> argv;
    // The folder the rank starts in (the synced workdir); empty: where the transport logs in (home).
    std::string workdir;
};

struct RankExit {
    int exit_code = -1;     // -1 when killed by a signal or lost
    int term_signal = 0;    // the signal, when killed
    bool host_lost = false; // transport failure: connection dropped, host unreachable, could not start
    std::string detail;     // transport's explanation (host_lost)

    [[nodiscard]] bool success() const { return !host_lost && exit_code == 0; }
    // "exited with status 3", "was killed by signal 9 (Killed)", "lost its host: ..."
    [[nodiscard]] std::string describe() const;
};

class RankEvents {
public:
    virtual ~RankEvents() = default;
    virtual void on_started(int rank) = 0;
    virtual void on_output(int rank, OutputStream stream, std::string line) = 0;
    virtual void on_exit(int rank, RankExit exit) = 0;
};

class RankHandle {
public:
    virtual ~RankHandle() = default;
    virtual void kill(int signal) = 0;
};

class RankTransport {
public:
    virtual ~RankTransport() = default;
    [[nodiscard]] virtual ddl::Result<std::unique_ptr<RankHandle>> start(const RankStart& start,
                                                                         RankEvents& events) = 0;
};

} // namespace ddl::runtime
