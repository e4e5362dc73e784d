#include "runtime/TcpRing.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

namespace ddl::runtime {

namespace {

// Iovec entries per sendmsg/recvmsg: enough that runs of small tensors move in one call.
constexpr int k_max_iov = 64;
// Fixed-size blocks: GCC's -O2 cost model vectorizes a loop only when it knows the trip count.
constexpr std::size_t k_block = 16;

void add_floats(float* __restrict d, const float* __restrict s, std::size_t n) {
    std::size_t i = 0;
    for (; i + k_block <= n; i += k_block)
        for (std::size_t j = 0; j < k_block; ++j)
            d[i + j] += s[i + j];
    for (; i < n; ++i)
        d[i] += s[i];
}

void scale_floats(float* __restrict d, float f, std::size_t n) {
    std::size_t i = 0;
    for (; i + k_block <= n; i += k_block)
        for (std::size_t j = 0; j < k_block; ++j)
            d[i + j] *= f;
    for (; i < n; ++i)
        d[i] *= f;
}

void reduce_into(std::byte* dst, const std::byte* src, std::size_t bytes, DataType type) {
    if (type == DataType::float32) {
        add_floats(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src), bytes / 4);
    } else {
        auto* d = reinterpret_cast<std::uint16_t*>(dst);
        const auto* s = reinterpret_cast<const std::uint16_t*>(src);
        const std::size_t n = bytes / 2;
        for (std::size_t i = 0; i < n; ++i)
            d[i] = float_to_half(half_to_float(d[i]) + half_to_float(s[i]));
    }
}

void scale(std::byte* data, std::size_t bytes, DataType type, float factor) {
    if (type == DataType::float32) {
        scale_floats(reinterpret_cast<float*>(data), factor, bytes / 4);
    } else {
        auto* d = reinterpret_cast<std::uint16_t*>(data);
        for (std::size_t i = 0; i < bytes / 2; ++i)
            d[i] = float_to_half(half_to_float(d[i]) * factor);
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

void TcpRing::set_single_piece(void* data, std::size_t bytes) {
    m_pieces.clear();
    if (bytes > 0) m_pieces.push_back({static_cast<std::byte*>(data), 0, bytes});
}

void TcpRing::allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) {
    set_single_piece(buffer, count * element_size(type));
    allreduce_pieces(count, type, op);
}

void TcpRing::allreduce_fused(std::span<const TensorSpan> tensors, DataType type, ReduceOp op) {
    const std::size_t esize = element_size(type);
    m_pieces.clear();
    std::size_t count = 0;
    for (const TensorSpan& t : tensors) {
        if (t.count == 0) continue;
        m_pieces.push_back({static_cast<std::byte*>(t.data), count * esize, t.count * esize});
        count += t.count;
    }
    // Reducing in place needs disjoint tensors (one buffer submitted twice would be summed twice over):
    // overlapping ones go through the packing default, which reduces copies.
    std::vector<std::pair<const std::byte*, const std::byte*>> ranges;
    ranges.reserve(m_pieces.size());
    for (const Piece& p : m_pieces)
        ranges.emplace_back(p.data, p.data + p.size);
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i) {
        if (ranges[i].first < ranges[i - 1].second) {
            Backend::allreduce_fused(tensors, type, op);
            return;
        }
    }
    allreduce_pieces(count, type, op);
}

void TcpRing::allreduce_pieces(std::size_t count, DataType type, ReduceOp op) {
    const int n = m_rv.size();
    if (count == 0) return;
    if (n > 1) {
        const int r = m_rv.rank();
        const std::size_t esize = element_size(type);
        std::vector<SendOp> sends;
        std::vector<RecvOp> recvs;
        // Reduce-scatter: after step g, chunk r-g-1 holds the sum of g+2 ranks.
        for (int g = 0; g < n - 1; ++g) {
            const Chunk s = chunk_of(count, n, mod(r - g, n));
            const Chunk v = chunk_of(count, n, mod(r - g - 1, n));
            sends.push_back({s.offset * esize, s.count * esize, g - 1});
            recvs.push_back({v.offset * esize, v.count * esize, true});
        }
        // Allgather: pass the fully reduced chunks around.
        for (int s = 0; s < n - 1; ++s) {
            const int g = n - 1 + s;
            const Chunk sc = chunk_of(count, n, mod(r + 1 - s, n));
            const Chunk rc = chunk_of(count, n, mod(r - s, n));
            sends.push_back({sc.offset * esize, sc.count * esize, g - 1});
            recvs.push_back({rc.offset * esize, rc.count * esize, false});
        }
        run(sends, recvs, type);
    }
    if (op == ReduceOp::average && n > 1) {
        const float inv = 1.0f / static_cast<float>(n);
        for (const Piece& p : m_pieces)
            scale(p.data, p.size, type, inv);
    }
}

void TcpRing::broadcast(void* buffer, std::size_t bytes, int root) {
    const int n = m_rv.size();
    if (n == 1 || bytes == 0) return;
    set_single_piece(buffer, bytes);
    const int pos = mod(m_rv.rank() - root, n);
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    // A pipelined chain root -> root+1 -> ... -> root-1.
    if (pos > 0) recvs.push_back({0, bytes, false});
    if (pos < n - 1) sends.push_back({0, bytes, pos > 0 ? 0 : -1});
    run(sends, recvs, DataType::float32);
}

void TcpRing::allgather(void* recv, std::size_t bytes) {
    const int n = m_rv.size();
    if (n == 1 || bytes == 0) return;
    const int r = m_rv.rank();
    set_single_piece(recv, bytes * static_cast<std::size_t>(n));
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    for (int s = 0; s < n - 1; ++s) {
        sends.push_back({static_cast<std::size_t>(mod(r - s, n)) * bytes, bytes, s - 1});
        recvs.push_back({static_cast<std::size_t>(mod(r - s - 1, n)) * bytes, bytes, false});
    }
    run(sends, recvs, DataType::float32);
}

int TcpRing::gather(std::size_t from, std::size_t to, iovec* iov, int max) const {
    auto it = std::upper_bound(m_pieces.begin(), m_pieces.end(), from,
                               [](std::size_t off, const Piece& p) { return off < p.begin; });
    int k = 0;
    for (--it; from < to && k < max; ++it) {
        const std::size_t within = from - it->begin;
        const std::size_t len = std::min(it->size - within, to - from);
        iov[k++] = iovec{it->data + within, len};
        from += len;
    }
    return k;
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

// The ring's one event loop (send, receive, reduce in place, overlap), kept whole: it is the hot path that
// bench/ measures against iperf3, Gloo and Open MPI, and its state is shared by every branch.
// NOLINTNEXTLINE(readability-function-size)
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
    iovec iov[k_max_iov];
    for (;;) {
        skip_finished();
        if (si == sends.size() && ri == recvs.size()) return;
        bool progressed = false;
        bool send_blocked = false;

        while (si < sends.size()) {
            const std::size_t limit = sendable();
            if (sent >= limit) break;
            msghdr msg{};
            msg.msg_iov = iov;
            msg.msg_iovlen = static_cast<std::size_t>(
                gather(sends[si].offset + sent, sends[si].offset + limit, iov, k_max_iov));
            const ssize_t k = ::sendmsg(send_fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) {
                sent += static_cast<std::size_t>(k);
                m_bytes_sent += static_cast<std::uint64_t>(k);
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
            std::size_t seg_begin = 0;
            msghdr msg{};
            msg.msg_iov = iov;
            if (op.reduce) {
                // Into the staging segment; reduced into the pieces once the segment is complete.
                seg_begin = got / m_segment * m_segment;
                const std::size_t seg_end = std::min(op.size, seg_begin + m_segment);
                iov[0] = iovec{staging + (got - seg_begin), seg_end - got};
                msg.msg_iovlen = 1;
            } else {
                msg.msg_iovlen =
                    static_cast<std::size_t>(gather(op.offset + got, op.offset + op.size, iov, k_max_iov));
            }
            const ssize_t k = ::recvmsg(recv_fd, &msg, MSG_DONTWAIT);
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
                const std::size_t from = op.offset + seg_begin;
                const std::size_t to = op.offset + got;
                std::size_t at = 0;
                for (std::size_t next_from = from; next_from < to;) {
                    const int pieces = gather(next_from, to, iov, k_max_iov);
                    for (int i = 0; i < pieces; ++i) {
                        reduce_into(static_cast<std::byte*>(iov[i].iov_base), staging + at, iov[i].iov_len,
                                    type);
                        at += iov[i].iov_len;
                        next_from += iov[i].iov_len;
                    }
                }
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
