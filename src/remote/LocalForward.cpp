#include "remote/LocalForward.hpp"

#include <arpa/inet.h>
#include <libssh/libssh.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ddl {

Result<std::unique_ptr<LocalForward>> LocalForward::open(const SshEndpoint& ep,
                                                         const std::string& remote_host, int remote_port) {
    std::unique_ptr<LocalForward> f(new LocalForward());
    auto s = SshSession::connect(ep, std::chrono::seconds(30));
    if (!s) return s.error();
    f->m_session = std::move(*s);
    f->m_remote_host = remote_host;
    f->m_remote_port = remote_port;
    f->m_listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (f->m_listen_fd < 0) return errno_error("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(f->m_listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(f->m_listen_fd, 4) != 0 ||
        getsockname(f->m_listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        return errno_error("cannot listen on 127.0.0.1");
    f->m_port = ntohs(addr.sin_port);
    f->m_thread = std::thread([p = f.get()] { p->serve(); });
    return f;
}

LocalForward::~LocalForward() {
    m_stop = true;
    if (m_thread.joinable()) m_thread.join();
    if (m_listen_fd >= 0) close(m_listen_fd);
}

void LocalForward::serve() {
    while (!m_stop) {
        pollfd p{m_listen_fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) continue;
        int client = accept4(m_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) continue;
        bridge(client);
        close(client);
    }
}

void LocalForward::bridge(int client) {
    ssh_channel ch = ssh_channel_new(m_session.raw());
    if (!ch) return;
    if (ssh_channel_open_forward(ch, m_remote_host.c_str(), m_remote_port, "127.0.0.1", m_port) != SSH_OK) {
        ssh_channel_free(ch);
        return; // the client sees the connection close: nothing listens there
    }
    char buf[16384];
    bool client_open = true;
    while (!m_stop && ssh_channel_is_open(ch) && !ssh_channel_is_eof(ch)) {
        bool moved = false;
        if (client_open) {
            pollfd p{client, POLLIN, 0};
            if (poll(&p, 1, 20) > 0) {
                ssize_t n = read(client, buf, sizeof buf);
                if (n <= 0) {
                    client_open = false;
                    ssh_channel_send_eof(ch);
                } else {
                    ssh_channel_write(ch, buf, static_cast<uint32_t>(n));
                    moved = true;
                }
            }
        }
        int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 0);
        if (n == SSH_ERROR) break;
        if (n > 0) {
            for (int done = 0; done < n;) {
                ssize_t w = write(client, buf + done, static_cast<std::size_t>(n - done));
                if (w <= 0) break;
                done += static_cast<int>(w);
            }
            moved = true;
        }
        if (!moved && !client_open) ssh_channel_poll_timeout(ch, 20, 0);
    }
    int n;
    while ((n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 0)) > 0)
        (void)!write(client, buf, static_cast<std::size_t>(n));
    ssh_channel_close(ch);
    ssh_channel_free(ch);
}

} // namespace ddl
