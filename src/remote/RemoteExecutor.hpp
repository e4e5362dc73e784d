#pragma once
// The seam between the pipeline and SSH: phases talk to nodes only through this interface, so unit
// tests substitute a recording fake and the e2e tests use real sshd's.
#include "remote/SshSession.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ddl {

class RemoteExecutor {
public:
    virtual ~RemoteExecutor() = default;
    virtual Result<ExecResult> exec(const SshEndpoint& ep, const std::string& command,
                                    std::chrono::milliseconds timeout) = 0;
    virtual Status upload(const SshEndpoint& ep, const std::string& content, const std::string& remote_path,
                          int mode) = 0;
    // Tries to connect until it succeeds or the deadline passes (backoff 0.2 s doubling to 3 s).
    virtual Status wait_ready(const SshEndpoint& ep, std::chrono::milliseconds deadline) = 0;
    // On: a connection that served a call may serve the next call to the same node. Off (the default):
    // every call connects anew, and kept connections are closed. The deploy pipeline turns it on for one
    // phase at a time, so a phase reaches each node once and nothing after it rides on a connection made
    // before (a check that sshd still accepts connections makes a new one).
    virtual void keep_connections(bool on) { (void)on; }
};

// While keep_connections is on, a session that served a call is kept and the next call to the same
// endpoint (same user, host, port, key, known_hosts and jump) reuses it: the hostfile phase writes both
// files over one connection per node instead of one each. A kept session that has gone (the node
// rebooted) is replaced by a new one when the call had not started anything on the node: exec before the
// command was started, upload at any point (it writes a temporary file and renames it).
class LibsshExecutor : public RemoteExecutor {
public:
    Result<ExecResult> exec(const SshEndpoint& ep, const std::string& command,
                            std::chrono::milliseconds timeout) override;
    Status upload(const SshEndpoint& ep, const std::string& content, const std::string& remote_path,
                  int mode) override;
    Status wait_ready(const SshEndpoint& ep, std::chrono::milliseconds deadline) override;
    void keep_connections(bool on) override;

private:
    // A kept session for `ep` (reused = true) or a new one.
    Result<SshSession> take(const SshEndpoint& ep, std::chrono::milliseconds timeout, bool& reused);
    void keep(const SshEndpoint& ep, SshSession session);

    std::mutex m_mutex;
    std::multimap<std::string, SshSession> m_idle;
    bool m_keep = false; // guarded by m_mutex
};

// Runs fn(i) for i in [0, count) on at most `parallel` threads; returns when all are done.
void parallel_for(std::size_t count, std::size_t parallel, const std::function<void(std::size_t)>& fn);

} // namespace ddl
