#pragma once
// The seam between the pipeline and SSH: phases talk to nodes only through this interface, so unit
// tests substitute a recording fake and the e2e tests use real sshd's.
#include "remote/SshSession.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ddl {

class RemoteExecutor {
public:
    virtual ~RemoteExecutor() = default;
    virtual Result<ExecResult> exec(const SshEndpoint& ep, const std::string& command,
                                    std::chrono::milliseconds timeout) = 0;
    // The same, with `input` on the command's standard input (closed after it).
    virtual Result<ExecResult> exec_with_input(const SshEndpoint& ep, const std::string& command,
                                               const std::string& input,
                                               std::chrono::milliseconds timeout) = 0;
    // The command's standard output handed to `on_out` as it arrives, never held whole (a job's log can be
    // larger than memory); `idle` bounds each wait for more (SshSession::exec_streaming).
    virtual Result<ExecResult> exec_streaming(const SshEndpoint& ep, const std::string& command,
                                              const std::function<bool(std::string_view)>& on_out,
                                              std::chrono::milliseconds idle) = 0;
    // Tries to connect until it succeeds or the deadline passes (backoff 0.2 s doubling to 3 s).
    virtual Status wait_ready(const SshEndpoint& ep, std::chrono::milliseconds deadline) = 0;
};

class LibsshExecutor : public RemoteExecutor {
public:
    Result<ExecResult> exec(const SshEndpoint& ep, const std::string& command,
                            std::chrono::milliseconds timeout) override;
    Result<ExecResult> exec_with_input(const SshEndpoint& ep, const std::string& command,
                                       const std::string& input, std::chrono::milliseconds timeout) override;
    Result<ExecResult> exec_streaming(const SshEndpoint& ep, const std::string& command,
                                      const std::function<bool(std::string_view)>& on_out,
                                      std::chrono::milliseconds idle) override;
    Status wait_ready(const SshEndpoint& ep, std::chrono::milliseconds deadline) override;
};

// Runs fn(i) for i in [0, count) on at most `parallel` threads; returns when all are done.
void parallel_for(std::size_t count, std::size_t parallel, const std::function<void(std::size_t)>& fn);

} // namespace ddl
