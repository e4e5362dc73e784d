#pragma once
// Socket: owns one file descriptor (closed on destruction), plus the blocking-with-deadline helpers the
// bootstrap uses. The ring's data path uses the raw fd with non-blocking calls (TcpRing.cpp).
#include "util/Result.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>

namespace ddl::runtime {

using Clock = std::chrono::steady_clock;

class Socket {
public:
    Socket() = default;
    explicit Socket(int fd) : m_fd(fd) {}
    ~Socket() { reset(); }
    Socket(Socket&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    Socket& operator=(Socket&& other) noexcept {
        if (this != &other) {
            reset();
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;

    [[nodiscard]] int fd() const { return m_fd; }
    [[nodiscard]] bool valid() const { return m_fd >= 0; }
    void reset();
    // shutdown(2) both directions: the peer sees EOF at once even if another copy of the fd lives on.
    void shutdown_both();

    // Sends/receives exactly `size` bytes or fails at `deadline` (the error says which).
    [[nodiscard]] ddl::Status send_all(const void* data, std::size_t size, Clock::time_point deadline);
    [[nodiscard]] ddl::Status recv_all(void* data, std::size_t size, Clock::time_point deadline);

    // Data-path settings: TCP_NODELAY, large kernel buffers, non-blocking mode.
    void tune_for_bulk(int buffer_bytes);
    void set_nonblocking(bool on);

private:
    int m_fd = -1;
};

} // namespace ddl::runtime
