#pragma once
// ddl's own SSH client on libssh: every session, channel and SFTP handle is owned by RAII.
// Host keys are pinned in the cluster's own known_hosts file: the first contact is recorded, a changed
// key is refused.
#include "util/Result.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct ssh_session_struct;
struct ssh_channel_struct;

namespace ddl {

struct SshEndpoint {
    std::string host;
    int port = 22;
    std::string user;
    std::string key_path;              // private key
    std::string known_hosts_path;      // the cluster's pinned host keys
    std::shared_ptr<SshEndpoint> jump; // bastion, when set
    std::string label() const;         // user@host:port
};

struct ExecResult {
    int exit_status = -1;
    std::string out;
    std::string err;
    bool ok() const { return exit_status == 0; }
};

class SshSession {
public:
    SshSession();
    ~SshSession();
    SshSession(SshSession&&) noexcept;
    SshSession& operator=(SshSession&&) noexcept;
    SshSession(const SshSession&) = delete;
    SshSession& operator=(const SshSession&) = delete;

    // Connects (through ep.jump when set, recursively), verifies/pins the host key and authenticates with
    // the endpoint's key.
    static Result<SshSession> connect(const SshEndpoint& ep, std::chrono::milliseconds timeout);

    // Runs `command` through the remote user's shell; stdin optional; output kept apart.
    Result<ExecResult> exec(const std::string& command, const std::string& stdin_data,
                            std::chrono::milliseconds timeout);
    // The same without input, its standard output handed to `on_out` as it arrives and not kept (the
    // result's `out` stays empty), so that output larger than memory passes through: `idle` bounds the wait
    // for the next bytes, not the whole run; `on_out` returning false stops reading (its reader is gone).
    Result<ExecResult> exec_streaming(const std::string& command,
                                      const std::function<bool(std::string_view)>& on_out,
                                      std::chrono::milliseconds idle);

    ssh_session_struct* raw() { return m_session; }

private:
    // exec and exec_streaming: with `on_out`, stdout goes there and the deadline moves with each arrival.
    Result<ExecResult> run(const std::string& command, const std::string& stdin_data,
                           std::chrono::milliseconds timeout,
                           const std::function<bool(std::string_view)>* on_out);
    ssh_session_struct* m_session = nullptr;
    struct Bridge; // the bastion's session and the channel carrying this one, when reached through a jump
    std::unique_ptr<Bridge> m_bridge;
};

} // namespace ddl
