#include "runtime/Socket.hpp"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ddl::runtime {

namespace {

int millis_until(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000LL * 60 * 60));
}

// Waits until fd is ready for `events`; false on timeout.
ddl::Status wait_ready(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        pollfd pfd{fd, events, 0};
        const int rc = ::poll(&pfd, 1, millis_until(deadline));
        if (rc > 0) return {};
        if (rc == 0) return ddl::Error{"timed out"};
        if (errno != EINTR) return ddl::errno_error("poll");
    }
}

} // namespace

void Socket::reset() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
}

void Socket::shutdown_both() {
    if (m_fd >= 0) ::shutdown(m_fd, SHUT_RDWR);
}

ddl::Status Socket::send_all(const void* data, std::size_t size, Clock::time_point deadline) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::send(m_fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            size -= static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (auto st = wait_ready(m_fd, POLLOUT, deadline); !st) return st;
            continue;
        }
        return ddl::errno_error("send");
    }
    return {};
}

ddl::Status Socket::recv_all(void* data, std::size_t size, Clock::time_point deadline) {
    auto* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::recv(m_fd, p, size, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            size -= static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0) return ddl::Error{"connection closed by peer"};
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (auto st = wait_ready(m_fd, POLLIN, deadline); !st) return st;
            continue;
        }
        return ddl::errno_error("recv");
    }
    return {};
}

void Socket::tune_for_bulk(int buffer_bytes) {
    int one = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (buffer_bytes <= 0) return; // the kernel's autotuning sizes them
    // Large buffers keep a 1-10 Gbit/s link busy while this rank is reducing instead of reading, or
    // is not scheduled. A size set with SO_SNDBUF/SO_RCVBUF is capped at net.core.[wr]mem_max (208 KiB
    // on a stock kernel) and switches autotuning off, which would pin a buffer far below what
    // autotuning reaches (tcp_[wr]mem, 4-6 MiB). So: the *FORCE variants where allowed
    // (CAP_NET_ADMIN), the plain ones only when the maximum admits the size, else autotuning.
    auto set = [&](int force, int plain, const char* max_file) {
        if (::setsockopt(m_fd, SOL_SOCKET, force, &buffer_bytes, sizeof buffer_bytes) == 0) return;
        long max = 0;
        if (std::FILE* f = std::fopen(max_file, "r")) {
            if (std::fscanf(f, "%ld", &max) != 1) max = 0;
            std::fclose(f);
        }
        if (max >= buffer_bytes) ::setsockopt(m_fd, SOL_SOCKET, plain, &buffer_bytes, sizeof buffer_bytes);
    };
    set(SO_SNDBUFFORCE, SO_SNDBUF, "/proc/sys/net/core/wmem_max");
    set(SO_RCVBUFFORCE, SO_RCVBUF, "/proc/sys/net/core/rmem_max");
}

void Socket::set_nonblocking(bool on) {
    const int flags = ::fcntl(m_fd, F_GETFL, 0);
    ::fcntl(m_fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

} // namespace ddl::runtime
