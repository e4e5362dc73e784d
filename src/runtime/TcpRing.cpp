#include "runtime/TcpRing.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>

namespace ddl::runtime {

namespace {

void reduce_into(std::byte* dst, const std::byte* src, std::size_t bytes, DataType type) {
    if (type == DataType::float32) {
        auto* d = reinterpret_cast<float*>(dst);
        const auto* s = reinterpret_cast<const float*>(src);
        const std::size_t n = bytes / 4;
        for (std::size_t i = 0; i < n; ++i)
            d[i] += s[i];
    } else {
        auto* d = reinterpret_cast<std::uint16_t*>(dst);
        const auto* s = reinterpret_cast<const std::uint16_t*>(src);
        const std::size_t n = bytes / 2;
        for (std::size_t i = 0; i < n; ++i)
            d[i] = float_to_half(half_to_float(d[i]) + half_to_float(s[i]));
    }
}

// Chunk c of a buffer of `count` elements split over n ranks: the first count % n chunks get one more.
struct Chunk {
    std::size_t offset;
    std::size_t count;
};
Chunk chunk_of(std::size_t count, int n, int c) {
    const auto un = static_cast<std::size_t>(n);
    const auto uc = static_cast<std::size_t>(c);
    const std::size_t base = count / un;
    const std::size_t extra = count % un;
    return {uc * base + std::min(uc, extra), base + (uc < extra ? 1 : 0)};
}

int mod(int a, int n) {
    return ((a % n) + n) % n;
}

} // namespace

TcpRing::TcpRing(Rendezvous& rendezvous, const CommOptions& opts)
    : m_rv(rendezvous), m_opts(opts), m_segment(std::max<std::size_t>(4096, opts.segment_bytes / 4 * 4)) {
    m_rv.connect_ring();
    m_staging.resize(m_segment / 4);
}

void TcpRing::allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) {
    const int n = m_rv.size();
    if (count == 0) return;
    if (n > 1) {
        const int r = m_rv.rank();
        const std::size_t esize = element_size(type);
        auto* base = static_cast<std::byte*>(buffer);
        std::vector<SendOp> sends;
        std::vector<RecvOp> recvs;
        // Reduce-scatter: after step g, chunk r-g-1 holds the sum of g+2 ranks.
        for (int g = 0; g < n - 1; ++g) {
            const Chunk s = chunk_of(count, n, mod(r - g, n));
            const Chunk v = chunk_of(count, n, mod(r - g - 1, n));
            sends.push_back({base + s.offset * esize, s.count * esize, g - 1});
            recvs.push_back({base + v.offset * esize, v.count * esize, true});
        }
        // Allgather: pass the fully reduced chunks around.
        for (int s = 0; s < n - 1; ++s) {
            const int g = n - 1 + s;
            const Chunk sc = chunk_of(count, n, mod(r + 1 - s, n));
            const Chunk rc = chunk_of(count, n, mod(r - s, n));
            sends.push_back({base + sc.offset * esize, sc.count * esize, g - 1});
            recvs.push_back({base + rc.offset * esize, rc.count * esize, false});
        }
        run(sends, recvs, type);
    }
    if (op == ReduceOp::average && n > 1) {
        const float inv = 1.0f / static_cast<float>(n);
        if (type == DataType::float32) {
            auto* d = static_cast<float*>(buffer);
            for (std::size_t i = 0; i < count; ++i)
                d[i] *= inv;
        } else {
            auto* d = static_cast<std::uint16_t*>(buffer);
            for (std::size_t i = 0; i < count; ++i)
                d[i] = float_to_half(half_to_float(d[i]) * inv);
        }
    }
}

void TcpRing::broadcast(void* buffer, std::size_t bytes, int root) {
    const int n = m_rv.size();
    if (n == 1 || bytes == 0) return;
    auto* data = static_cast<std::byte*>(buffer);
    const int pos = mod(m_rv.rank() - root, n);
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    // A pipelined chain root -> root+1 -> ... -> root-1.
    if (pos > 0) recvs.push_back({data, bytes, false});
    if (pos < n - 1) sends.push_back({data, bytes, pos > 0 ? 0 : -1});
    run(sends, recvs, DataType::float32);
}

void TcpRing::allgather(void* recv, std::size_t bytes) {
    const int n = m_rv.size();
    if (n == 1 || bytes == 0) return;
    const int r = m_rv.rank();
    auto* base = static_cast<std::byte*>(recv);
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    for (int s = 0; s < n - 1; ++s) {
        sends.push_back({base + static_cast<std::size_t>(mod(r - s, n)) * bytes, bytes, s - 1});
        recvs.push_back({base + static_cast<std::size_t>(mod(r - s - 1, n)) * bytes, bytes, false});
    }
    run(sends, recvs, DataType::float32);
}

void TcpRing::fail_peer(int peer, const std::string& what) {
    // The neighbour may only be reacting to a failure elsewhere: give rank 0's relay, which names the
    // real culprit, a moment to arrive before blaming the neighbour.
    const auto until = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < until) {
        std::vector<pollfd> fds;
        m_rv.append_control_fds(fds);
        if (fds.empty()) break;
        if (::poll(fds.data(), fds.size(), 100) > 0) m_rv.process_control(fds, 0);
    }
    throw CommError(CommErrorKind::peer_failed, what, peer,
                    m_rv.peers()[static_cast<std::size_t>(peer)].host);
}

void TcpRing::run(const std::vector<SendOp>& sends, const std::vector<RecvOp>& recvs, DataType type) {
    const int send_fd = m_rv.next_fd();
    const int recv_fd = m_rv.prev_fd();
    const int next = m_rv.next_rank();
    const int prev = m_rv.prev_rank();
    auto* staging = reinterpret_cast<std::byte*>(m_staging.data());

    std::size_t si = 0, sent = 0;          // current send op and bytes of it sent
    std::size_t ri = 0, got = 0, done = 0; // current receive op, bytes received, bytes processed
    auto skip_finished = [&] {
        while (si < sends.size() && sent == sends[si].size) {
            ++si;
            sent = 0;
        }
        while (ri < recvs.size() && done == recvs[ri].size) {
            ++ri;
            got = 0;
            done = 0;
        }
    };
    auto sendable = [&]() -> std::size_t {
        const SendOp& op = sends[si];
        if (op.after_recv < 0 || static_cast<std::size_t>(op.after_recv) < ri) return op.size;
        if (static_cast<std::size_t>(op.after_recv) == ri) return std::min(done, op.size);
        return 0;
    };

    auto last_progress = Clock::now();
    std::vector<pollfd> fds;
    for (;;) {
        skip_finished();
        if (si == sends.size() && ri == recvs.size()) return;
        bool progressed = false;
        bool send_blocked = false;

        while (si < sends.size()) {
            const std::size_t limit = sendable();
            if (sent >= limit) break;
            const ssize_t k =
                ::send(send_fd, sends[si].data + sent, limit - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) {
                sent += static_cast<std::size_t>(k);
                progressed = true;
                skip_finished();
                continue;
            }
            if (k < 0 && errno == EINTR) continue;
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                send_blocked = true;
                break;
            }
            fail_peer(next, "sending to " + m_rv.describe(next) + " failed: " + std::strerror(errno));
        }

        while (ri < recvs.size()) {
            const RecvOp& op = recvs[ri];
            std::byte* dst = nullptr;
            std::size_t want = 0;
            std::size_t seg_begin = 0;
            if (op.reduce) {
                seg_begin = got / m_segment * m_segment;
                const std::size_t seg_end = std::min(op.size, seg_begin + m_segment);
                dst = staging + (got - seg_begin);
                want = seg_end - got;
            } else {
                dst = op.data + got;
                want = op.size - got;
            }
            const ssize_t k = ::recv(recv_fd, dst, want, MSG_DONTWAIT);
            if (k == 0) fail_peer(prev, m_rv.describe(prev) + " closed the connection (did it die?)");
            if (k < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                fail_peer(prev, "receiving from " + m_rv.describe(prev) + " failed: " + std::strerror(errno));
            }
            got += static_cast<std::size_t>(k);
            progressed = true;
            if (!op.reduce) {
                done = got;
                if (si < sends.size() && sends[si].after_recv == static_cast<int>(ri))
                    break; // forward it now
                skip_finished();
                continue;
            }
            if (got == std::min(op.size, seg_begin + m_segment)) {
                reduce_into(op.data + seg_begin, staging, got - seg_begin, type);
                done = got;
                skip_finished();
                break; // the reduced segment can go on to the next rank
            }
        }

        if (progressed) {
            last_progress = Clock::now();
            continue;
        }

        // Nothing moved: sleep in poll until a socket is ready, the control plane speaks or time is up.
        fds.clear();
        const bool want_send = si < sends.size() && sent < sendable();
        const bool want_recv = ri < recvs.size();
        fds.push_back(pollfd{send_fd, static_cast<short>(want_send ? POLLOUT : 0), 0});
        fds.push_back(pollfd{recv_fd, static_cast<short>(want_recv ? POLLIN : 0), 0});
        m_rv.append_control_fds(fds);
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(last_progress +
                                                                                m_opts.timeout - Clock::now())
                              .count();
        if (left <= 0) {
            // A full send buffer means the next rank stopped reading; otherwise we wait for the previous one.
            const int culprit = send_blocked || !want_recv ? next : prev;
            const std::string secs = std::to_string(static_cast<double>(m_opts.timeout.count()) / 1000.0);
            throw CommError(CommErrorKind::timeout,
                            "no progress for " + secs.substr(0, secs.find('.') + 2) +
                                " s: " + m_rv.describe(culprit) + " is not " +
                                (culprit == next ? "receiving" : "sending") +
                                " (hung, stopped or a silent network)",
                            culprit, m_rv.peers()[static_cast<std::size_t>(culprit)].host);
        }
        const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, 1000)));
        if (rc < 0 && errno != EINTR)
            throw CommError(CommErrorKind::internal, std::string("poll: ") + std::strerror(errno));
        if (rc > 0) m_rv.process_control(fds, 2);
    }
}

} // namespace ddl::runtime
