#include "remote/SshSession.hpp"

#include "util/Net.hpp"

#include <atomic>
#include <fcntl.h>
#include <libssh/libssh.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace ddl {

// A connection to a host behind a bastion: a direct-tcpip channel on the bastion's session, pumped
// to one end of a socketpair whose other end the inner session uses as its socket. libssh 0.10 has no
// in-library ProxyJump (its ProxyCommand would run OpenSSH's client).
struct SshSession::Bridge {
    std::unique_ptr<SshSession> jump; // declared first: destroyed last, after the channel
    ssh_channel channel = nullptr;
    int fd = -1; // our end of the socketpair
    std::atomic<bool> stop{false};
    std::thread thread;

    Bridge() = default;
    Bridge(const Bridge&) = delete;
    Bridge& operator=(const Bridge&) = delete;
    ~Bridge() {
        stop = true;
        if (thread.joinable()) thread.join();
        if (channel) {
            if (ssh_channel_is_open(channel)) ssh_channel_close(channel);
            ssh_channel_free(channel);
        }
        if (fd >= 0) close(fd);
    }

    // Moves bytes both ways until either side closes or the owner stops it. Only this thread touches
    // the bastion's session once the channel is open.
    void pump() {
        std::string to_fd;
        char buf[32768];
        bool fd_open = true;
        while (!stop) {
            pollfd p[2] = {
                {fd, static_cast<short>((fd_open ? POLLIN : 0) | (to_fd.empty() ? 0 : POLLOUT)), 0},
                {ssh_get_fd(jump->m_session), POLLIN, 0}};
            (void)poll(p, 2, 50);
            if (fd_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n > 0) {
                    if (ssh_channel_write(channel, buf, static_cast<uint32_t>(n)) == SSH_ERROR) break;
                } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    fd_open = false;
                    ssh_channel_send_eof(channel);
                }
            }
            int n = ssh_channel_read_nonblocking(channel, buf, sizeof buf, 0);
            if (n == SSH_ERROR) break;
            if (n > 0) to_fd.append(buf, static_cast<std::size_t>(n));
            if (!to_fd.empty()) {
                ssize_t w = write(fd, to_fd.data(), to_fd.size());
                if (w > 0)
                    to_fd.erase(0, static_cast<std::size_t>(w));
                else if (w < 0 && errno != EAGAIN && errno != EINTR)
                    break;
            }
            if (to_fd.empty() && (ssh_channel_is_eof(channel) || !ssh_channel_is_open(channel))) break;
        }
        // The inner session sees its socket close.
        shutdown(fd, SHUT_RDWR);
    }
};

std::string SshEndpoint::label() const {
    return user + "@" + host_for_port(host) + ":" + std::to_string(port);
}

SshSession::SshSession() = default;

SshSession::~SshSession() {
    // The inner session goes first so that its goodbye still crosses the bridge.
    if (m_session) {
        ssh_disconnect(m_session);
        ssh_free(m_session);
    }
    m_bridge.reset();
}

SshSession::SshSession(SshSession&& o) noexcept : m_session(o.m_session), m_bridge(std::move(o.m_bridge)) {
    o.m_session = nullptr;
}

SshSession& SshSession::operator=(SshSession&& o) noexcept {
    if (this != &o) {
        this->~SshSession();
        new (this) SshSession(std::move(o));
    }
    return *this;
}

namespace {

struct ChannelCloser {
    void operator()(ssh_channel c) const {
        if (ssh_channel_is_open(c)) ssh_channel_close(c);
        ssh_channel_free(c);
    }
};
using ChannelPtr = std::unique_ptr<std::remove_pointer_t<ssh_channel>, ChannelCloser>;

struct KeyFree {
    void operator()(ssh_key k) const { ssh_key_free(k); }
};

Status verify_host(ssh_session s, const SshEndpoint& ep) {
    ssh_key raw = nullptr;
    if (ssh_get_server_publickey(s, &raw) != SSH_OK)
        return Error{"cannot read the host key of " + ep.label()};
    std::unique_ptr<std::remove_pointer_t<ssh_key>, KeyFree> key(raw);
    unsigned char* hash = nullptr;
    size_t hlen = 0;
    std::string fingerprint;
    if (ssh_get_publickey_hash(key.get(), SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == SSH_OK) {
        char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
        if (fp) {
            fingerprint = fp;
            ssh_string_free_char(fp);
        }
        ssh_clean_pubkey_hash(&hash);
    }
    switch (ssh_session_is_known_server(s)) {
    case SSH_KNOWN_HOSTS_OK:
        return {};
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
        return Error{"host key of " + ep.label() + " has CHANGED (now " + fingerprint +
                     "); refusing to connect. If the machine was rebuilt on purpose, remove its line from " +
                     ep.known_hosts_path};
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
        // First contact: pin the key for every later connection.
        if (ssh_session_update_known_hosts(s) != SSH_OK)
            return Error{"cannot record the host key of " + ep.label() + " in " + ep.known_hosts_path};
        return {};
    case SSH_KNOWN_HOSTS_ERROR:
    default:
        return Error{"cannot check the host key of " + ep.label() + ": " + ssh_get_error(s)};
    }
}

} // namespace

Result<SshSession> SshSession::connect(const SshEndpoint& ep, std::chrono::milliseconds timeout) {
    SshSession out;
    int inner_fd = -1;
    if (ep.jump) {
        auto bridge = std::make_unique<Bridge>();
        auto jump = connect(*ep.jump, timeout);
        if (!jump)
            return Error{"cannot reach " + ep.label() + " through its jump host: " + jump.error().message};
        bridge->jump = std::make_unique<SshSession>(std::move(*jump));
        ssh_session js = bridge->jump->m_session;
        bridge->channel = ssh_channel_new(js);
        if (!bridge->channel) return Error{"cannot open a channel on the jump host " + ep.jump->label()};
        if (ssh_channel_open_forward(bridge->channel, ep.host.c_str(), ep.port, "127.0.0.1", 0) != SSH_OK)
            return Error{"jump host " + ep.jump->label() + " cannot connect to " + host_for_port(ep.host) +
                         ":" + std::to_string(ep.port) + ": " + ssh_get_error(js)};
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
            return errno_error("socketpair for the jump host connection");
        bridge->fd = pair[0];
        inner_fd = pair[1];
        fcntl(bridge->fd, F_SETFL, fcntl(bridge->fd, F_GETFL) | O_NONBLOCK);
        bridge->thread = std::thread([b = bridge.get()] { b->pump(); });
        out.m_bridge = std::move(bridge);
    }
    out.m_session = ssh_new();
    if (!out.m_session) {
        if (inner_fd >= 0) close(inner_fd);
        return Error{"cannot create an SSH session"};
    }
    if (!out.m_session) return Error{"cannot create an SSH session"};
    ssh_session s = out.m_session;
    long secs = std::max<long>(1, static_cast<long>(timeout.count() / 1000));
    int port = ep.port;
    int strict = 1;
    int no_config = 0;
    ssh_options_set(s, SSH_OPTIONS_HOST, ep.host.c_str());
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
    ssh_options_set(s, SSH_OPTIONS_USER, ep.user.c_str());
    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &secs);
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, ep.known_hosts_path.c_str());
    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
    ssh_options_set(s, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict);
    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no_config);
    ssh_options_set(s, SSH_OPTIONS_HOSTKEYS, "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256");
    // The session owns (and closes) the bridged socket from here on.
    if (inner_fd >= 0) ssh_options_set(s, SSH_OPTIONS_FD, &inner_fd);
    if (ssh_connect(s) != SSH_OK) return Error{"cannot connect to " + ep.label() + ": " + ssh_get_error(s)};
    // Programs ddl starts while a session is open (ansible-playbook, its ssh masters) do not inherit it.
    if (socket_t fd = ssh_get_fd(s); fd != SSH_INVALID_SOCKET) (void)::fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (auto v = verify_host(s, ep); !v) return v.error();
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(ep.key_path.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK)
        return Error{"cannot read the private key " + ep.key_path};
    std::unique_ptr<std::remove_pointer_t<ssh_key>, KeyFree> key_owner(key);
    int rc = ssh_userauth_publickey(s, nullptr, key);
    if (rc != SSH_AUTH_SUCCESS)
        return Error{"authentication to " + ep.label() + " with " + ep.key_path + " was refused"};
    return out;
}

Result<ExecResult> SshSession::exec(const std::string& command, const std::string& stdin_data,
                                    std::chrono::milliseconds timeout) {
    return run(command, stdin_data, timeout, nullptr);
}

Result<ExecResult> SshSession::exec_streaming(const std::string& command,
                                              const std::function<bool(std::string_view)>& on_out,
                                              std::chrono::milliseconds idle) {
    return run(command, "", idle, &on_out);
}

Result<ExecResult> SshSession::run(const std::string& command, const std::string& stdin_data,
                                   std::chrono::milliseconds timeout,
                                   const std::function<bool(std::string_view)>* on_out) {
    ChannelPtr ch(ssh_channel_new(m_session));
    if (!ch) return Error{"cannot open a channel"};
    if (ssh_channel_open_session(ch.get()) != SSH_OK)
        return Error{std::string("cannot open a session channel: ") + ssh_get_error(m_session)};
    if (ssh_channel_request_exec(ch.get(), command.c_str()) != SSH_OK)
        return Error{std::string("cannot start the remote command: ") + ssh_get_error(m_session)};
    if (!stdin_data.empty()) {
        std::size_t done = 0;
        while (done < stdin_data.size()) {
            int n = ssh_channel_write(ch.get(), stdin_data.data() + done,
                                      static_cast<uint32_t>(stdin_data.size() - done));
            if (n == SSH_ERROR) return Error{"cannot send input to the remote command"};
            done += static_cast<std::size_t>(n);
        }
    }
    ssh_channel_send_eof(ch.get());
    ExecResult r;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[16384];
    bool reading = true;
    // What arrived: stderr kept; stdout kept, or handed on (false once the reader is gone).
    auto take = [&](int is_err, int n) {
        const std::string_view got(buf, static_cast<std::size_t>(n));
        if (is_err || !on_out)
            (is_err ? r.err : r.out).append(got);
        else if (reading)
            reading = (*on_out)(got);
    };
    while (reading) {
        if (std::chrono::steady_clock::now() > deadline)
            return Error{"remote command timed out after " + std::to_string(timeout.count() / 1000) + " s" +
                         (on_out ? " without output" : "")};
        bool got = false;
        for (int is_err = 0; is_err < 2; ++is_err) {
            int n = ssh_channel_read_timeout(ch.get(), buf, sizeof buf, is_err, is_err ? 0 : 100);
            if (n == SSH_ERROR) return Error{std::string("lost the connection: ") + ssh_get_error(m_session)};
            if (n > 0) {
                take(is_err, n);
                got = true;
            }
        }
        if (got && on_out) deadline = std::chrono::steady_clock::now() + timeout;
        if (!got && ssh_channel_is_eof(ch.get())) break;
    }
    // Drain what arrived between the last read and EOF.
    for (int is_err = 0; is_err < 2 && reading; ++is_err) {
        int n;
        while (reading && (n = ssh_channel_read_nonblocking(ch.get(), buf, sizeof buf, is_err)) > 0)
            take(is_err, n);
    }
    if (!reading) return r; // the reader has gone: how the command ends is nobody's concern
    r.exit_status = ssh_channel_get_exit_status(ch.get());
    return r;
}

} // namespace ddl
