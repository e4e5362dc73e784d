#pragma once
// An SSH local port forward (like `ssh -L`): a listener on 127.0.0.1 whose connections are carried to
// remote_host:remote_port as seen from the SSH server. Used to reach services that nodes bind to
// their localhost only (JupyterLab, Prometheus, Grafana). One connection at a time, which is what
// ddl's HTTP checks need.
#include "remote/SshSession.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace ddl {

class LocalForward {
public:
    static Result<std::unique_ptr<LocalForward>> open(const SshEndpoint& ep, const std::string& remote_host,
                                                      int remote_port);
    ~LocalForward();
    LocalForward(const LocalForward&) = delete;
    LocalForward& operator=(const LocalForward&) = delete;

    int local_port() const { return m_port; }

private:
    LocalForward() = default;
    void serve();
    void bridge(int client);

    SshSession m_session;
    std::string m_remote_host;
    int m_remote_port = 0;
    int m_listen_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

} // namespace ddl
