#include "runtime/Rendezvous.hpp"

#include "runtime/Net.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdint>
#include <cstring>

namespace ddl::runtime {

namespace {

constexpr std::uint32_t k_magic = 0xdd1c0001;
constexpr std::uint32_t k_max_message = 1u << 20;
constexpr auto k_control_send_budget = std::chrono::seconds(2);

enum class MessageType : std::uint32_t { hello = 1, table = 2, blob = 3, abort = 4, bye = 5, ring_hello = 6 };

struct Message {
    MessageType type{};
    std::string payload;
};

void put_u32(std::string& out, std::uint32_t v) {
    const std::uint32_t be = htonl(v);
    out.append(reinterpret_cast<const char*>(&be), 4);
}
void put_string(std::string& out, const std::string& s) {
    put_u32(out, static_cast<std::uint32_t>(s.size()));
    out += s;
}

// Reads fields from a payload; any overrun marks the reader bad instead of reading past the end.
class Reader {
public:
    explicit Reader(const std::string& data) : m_data(data) {}
    std::uint32_t u32() {
        if (m_pos + 4 > m_data.size()) {
            m_bad = true;
            return 0;
        }
        std::uint32_t be = 0;
        std::memcpy(&be, m_data.data() + m_pos, 4);
        m_pos += 4;
        return ntohl(be);
    }
    std::string str() {
        const std::uint32_t n = u32();
        if (m_bad || m_pos + n > m_data.size()) {
            m_bad = true;
            return {};
        }
        std::string s = m_data.substr(m_pos, n);
        m_pos += n;
        return s;
    }
    bool bad() const { return m_bad; }

private:
    const std::string& m_data;
    std::size_t m_pos = 0;
    bool m_bad = false;
};

ddl::Status send_message(Socket& sock, MessageType type, const std::string& payload,
                         Clock::time_point deadline) {
    std::string frame;
    put_u32(frame, static_cast<std::uint32_t>(type));
    put_u32(frame, static_cast<std::uint32_t>(payload.size()));
    frame += payload;
    return sock.send_all(frame.data(), frame.size(), deadline);
}

ddl::Result<Message> recv_message(Socket& sock, Clock::time_point deadline) {
    std::uint32_t header[2];
    if (auto st = sock.recv_all(header, sizeof header, deadline); !st) return st.error();
    Message msg;
    msg.type = static_cast<MessageType>(ntohl(header[0]));
    const std::uint32_t len = ntohl(header[1]);
    if (len > k_max_message)
        return ddl::Error{"control message too large (" + std::to_string(len) + " bytes)"};
    msg.payload.resize(len);
    if (auto st = sock.recv_all(msg.payload.data(), len, deadline); !st) return st.error();
    return msg;
}

std::string abort_payload(int culprit, const std::string& message) {
    std::string p;
    put_u32(p, static_cast<std::uint32_t>(culprit + 1));
    put_string(p, message);
    return p;
}

} // namespace

Rendezvous::Rendezvous(const CommOptions& opts) : m_rank(opts.rank), m_size(opts.size), m_opts(opts) {
    if (m_size < 1 || m_rank < 0 || m_rank >= m_size)
        throw CommError(CommErrorKind::invalid_argument,
                        "invalid rank " + std::to_string(m_rank) + " of size " + std::to_string(m_size));
    m_peers.resize(static_cast<std::size_t>(m_size));
    m_departed.assign(static_cast<std::size_t>(m_size), false);
    if (m_size == 1) return;

    const auto deadline = Clock::now() + opts.bootstrap_timeout;
    auto family = resolve_family(opts.master_addr);
    if (!family) throw CommError(CommErrorKind::bootstrap, "bootstrap: " + family.error().message);
    // On a loopback master (tests, a single machine) the peers are all here: advertise loopback.
    const std::string iface = opts.iface.empty() && is_loopback_host(opts.master_addr) ? "lo" : opts.iface;
    // Without a named interface: the address that routes to the master, which is the network the
    // hostfile's addresses live on (a bastion master has a public and a private one).
    auto my_host =
        iface.empty() ? source_address_towards(opts.master_addr) : interface_address(iface, *family);
    if (!my_host && iface.empty()) my_host = interface_address(iface, *family);
    if (!my_host) throw CommError(CommErrorKind::bootstrap, "bootstrap: " + my_host.error().message);
    auto my_family = resolve_family(*my_host);
    auto listener = listen_tcp(my_family ? *my_family : *family, 0, 4);
    if (!listener)
        throw CommError(CommErrorKind::bootstrap, "bootstrap: ring listener: " + listener.error().message);
    m_ring_listener = std::move(*listener);
    auto my_port = local_port(m_ring_listener);
    if (!my_port) throw CommError(CommErrorKind::bootstrap, "bootstrap: " + my_port.error().message);

    if (m_rank == 0)
        bootstrap_root(deadline, *my_host, *my_port);
    else
        bootstrap_worker(deadline, *my_host, *my_port);
}

Rendezvous::~Rendezvous() {
    const auto deadline = Clock::now() + std::chrono::milliseconds(500);
    for (std::size_t i = 0; i < m_control.size(); ++i) {
        if (m_control[i].valid() && !m_departed[i])
            (void)send_message(m_control[i], MessageType::bye, {}, deadline);
    }
}

std::string Rendezvous::describe(int rank) const {
    const auto& p = m_peers[static_cast<std::size_t>(rank)];
    if (p.host.empty()) return "rank " + std::to_string(rank);
    return "rank " + std::to_string(rank) + " (" + format_host_port(p.host, p.port) + ")";
}

void Rendezvous::bootstrap_root(Clock::time_point deadline, const std::string& my_host, int my_port) {
    auto family = resolve_family(m_opts.master_addr);
    auto listener = listen_tcp(family ? *family : AF_INET, m_opts.master_port, 128);
    if (!listener)
        throw CommError(CommErrorKind::bootstrap,
                        "bootstrap: rank 0 cannot listen on " +
                            format_host_port(m_opts.master_addr, m_opts.master_port) + ": " +
                            listener.error().message);
    m_control.resize(static_cast<std::size_t>(m_size));
    m_peers[0] = {my_host, my_port};
    int joined = 1;
    while (joined < m_size) {
        auto conn = accept_tcp(*listener, deadline);
        if (!conn) {
            std::vector<std::string> missing;
            for (int r = 1; r < m_size; ++r)
                if (!m_control[static_cast<std::size_t>(r)].valid()) missing.push_back(std::to_string(r));
            const std::string msg = "bootstrap: rank(s) " + join(missing, ", ") +
                                    " did not join the rendezvous at " +
                                    format_host_port(m_opts.master_addr, m_opts.master_port) + " within " +
                                    std::to_string(m_opts.bootstrap_timeout.count() / 1000) + " s";
            relay_abort(-1, msg, -1);
            throw CommError(CommErrorKind::bootstrap, msg);
        }
        // A stray connection (port scanner, wrong job) must not stall the bootstrap for long.
        auto msg = recv_message(*conn, std::min(deadline, Clock::now() + std::chrono::seconds(10)));
        if (!msg || msg->type != MessageType::hello) continue;
        Reader rd(msg->payload);
        const std::uint32_t magic = rd.u32();
        const auto rank = static_cast<int>(rd.u32());
        const auto size = static_cast<int>(rd.u32());
        const auto port = static_cast<int>(rd.u32());
        std::string host = rd.str();
        if (rd.bad() || magic != k_magic) continue;
        std::string problem;
        if (size != m_size)
            problem = "rank " + std::to_string(rank) + " at " + host + " says the job has " +
                      std::to_string(size) + " ranks, rank 0 says " + std::to_string(m_size);
        else if (rank <= 0 || rank >= m_size)
            problem = "a peer at " + host + " claims the invalid rank " + std::to_string(rank);
        else if (m_control[static_cast<std::size_t>(rank)].valid())
            problem = "rank " + std::to_string(rank) + " joined twice (from " +
                      m_peers[static_cast<std::size_t>(rank)].host + " and " + host + ")";
        if (!problem.empty()) {
            (void)send_message(*conn, MessageType::abort, abort_payload(-1, "bootstrap: " + problem),
                               deadline);
            relay_abort(-1, "bootstrap: " + problem, -1);
            throw CommError(CommErrorKind::bootstrap, "bootstrap: " + problem);
        }
        m_peers[static_cast<std::size_t>(rank)] = {std::move(host), port};
        m_control[static_cast<std::size_t>(rank)] = std::move(*conn);
        ++joined;
    }
    std::string table;
    for (const auto& p : m_peers) {
        put_u32(table, static_cast<std::uint32_t>(p.port));
        put_string(table, p.host);
    }
    for (int r = 1; r < m_size; ++r) {
        if (auto st =
                send_message(m_control[static_cast<std::size_t>(r)], MessageType::table, table, deadline);
            !st)
            throw CommError(CommErrorKind::bootstrap,
                            "bootstrap: sending the peer table to " + describe(r) + ": " + st.error().message,
                            r, m_peers[static_cast<std::size_t>(r)].host);
    }
}

void Rendezvous::bootstrap_worker(Clock::time_point deadline, const std::string& my_host, int my_port) {
    const std::string master = format_host_port(m_opts.master_addr, m_opts.master_port);
    auto conn = connect_tcp(m_opts.master_addr, m_opts.master_port, deadline);
    if (!conn)
        throw CommError(CommErrorKind::bootstrap, "bootstrap: rank 0: " + conn.error().message, 0, master);
    std::string hello;
    put_u32(hello, k_magic);
    put_u32(hello, static_cast<std::uint32_t>(m_rank));
    put_u32(hello, static_cast<std::uint32_t>(m_size));
    put_u32(hello, static_cast<std::uint32_t>(my_port));
    put_string(hello, my_host);
    if (auto st = send_message(*conn, MessageType::hello, hello, deadline); !st)
        throw CommError(CommErrorKind::bootstrap,
                        "bootstrap: sending hello to rank 0 at " + master + ": " + st.error().message, 0,
                        master);
    auto msg = recv_message(*conn, deadline);
    if (!msg)
        throw CommError(CommErrorKind::bootstrap,
                        "bootstrap: no peer table from rank 0 at " + master + " (" + msg.error().message +
                            ")",
                        0, master);
    if (msg->type == MessageType::abort) {
        Reader rd(msg->payload);
        rd.u32();
        throw CommError(CommErrorKind::bootstrap, rd.str(), 0, master);
    }
    Reader rd(msg->payload);
    for (auto& p : m_peers) {
        p.port = static_cast<int>(rd.u32());
        p.host = rd.str();
    }
    if (rd.bad() || msg->type != MessageType::table)
        throw CommError(CommErrorKind::bootstrap, "bootstrap: malformed peer table from rank 0 at " + master,
                        0, master);
    m_control.clear();
    m_control.push_back(std::move(*conn));
}

void Rendezvous::connect_ring() {
    if (m_size == 1 || m_next.valid()) return;
    const auto deadline = Clock::now() + m_opts.bootstrap_timeout;
    const int next = next_rank();
    const auto& np = m_peers[static_cast<std::size_t>(next)];
    auto conn = connect_tcp(np.host, np.port, deadline);
    if (!conn)
        throw CommError(CommErrorKind::bootstrap, "ring: " + describe(next) + ": " + conn.error().message,
                        next, np.host);
    std::string hello;
    put_u32(hello, k_magic);
    put_u32(hello, static_cast<std::uint32_t>(m_rank));
    if (auto st = send_message(*conn, MessageType::ring_hello, hello, deadline); !st)
        throw CommError(CommErrorKind::bootstrap, "ring: " + describe(next) + ": " + st.error().message, next,
                        np.host);
    const int prev = prev_rank();
    for (;;) {
        auto in = accept_tcp(m_ring_listener, deadline);
        if (!in)
            throw CommError(CommErrorKind::bootstrap,
                            "ring: " + describe(prev) + " did not connect: " + in.error().message, prev,
                            m_peers[static_cast<std::size_t>(prev)].host);
        auto msg = recv_message(*in, std::min(deadline, Clock::now() + std::chrono::seconds(10)));
        if (!msg || msg->type != MessageType::ring_hello) continue;
        Reader rd(msg->payload);
        if (rd.u32() != k_magic || static_cast<int>(rd.u32()) != prev || rd.bad()) continue;
        m_prev = std::move(*in);
        break;
    }
    m_next = std::move(*conn);
    m_ring_listener.reset();
    for (Socket* s : {&m_next, &m_prev}) {
        s->tune_for_bulk(m_opts.socket_buffer_bytes);
        s->set_nonblocking(true);
    }
}

void Rendezvous::broadcast_from_root(std::string& blob) {
    if (m_size == 1) return;
    const auto deadline = Clock::now() + m_opts.bootstrap_timeout;
    if (m_rank == 0) {
        for (int r = 1; r < m_size; ++r) {
            if (auto st =
                    send_message(m_control[static_cast<std::size_t>(r)], MessageType::blob, blob, deadline);
                !st)
                throw CommError(CommErrorKind::bootstrap,
                                "sending to " + describe(r) + ": " + st.error().message, r,
                                m_peers[static_cast<std::size_t>(r)].host);
        }
        return;
    }
    auto msg = recv_message(m_control[0], deadline);
    if (!msg)
        throw CommError(CommErrorKind::bootstrap, "waiting for " + describe(0) + ": " + msg.error().message,
                        0, m_peers[0].host);
    if (msg->type == MessageType::abort) {
        Reader rd(msg->payload);
        const int culprit = static_cast<int>(rd.u32()) - 1;
        fail_from_control(culprit, rd.str());
    }
    blob = std::move(msg->payload);
}

std::vector<std::string> Rendezvous::gather_to_root(const std::string& mine) {
    std::vector<std::string> all;
    const auto deadline = Clock::now() + m_opts.bootstrap_timeout;
    if (m_rank != 0) {
        if (auto st = send_message(m_control[0], MessageType::blob, mine, deadline); !st)
            throw CommError(CommErrorKind::bootstrap, "sending to " + describe(0) + ": " + st.error().message,
                            0, m_peers[0].host);
        return all;
    }
    all.resize(static_cast<std::size_t>(m_size));
    all[0] = mine;
    for (int r = 1; r < m_size; ++r) {
        auto msg = recv_message(m_control[static_cast<std::size_t>(r)], deadline);
        if (!msg)
            throw CommError(CommErrorKind::bootstrap,
                            "waiting for " + describe(r) + ": " + msg.error().message, r,
                            m_peers[static_cast<std::size_t>(r)].host);
        if (msg->type == MessageType::abort) {
            Reader rd(msg->payload);
            const int culprit = static_cast<int>(rd.u32()) - 1;
            fail_from_control(culprit, rd.str());
        }
        all[static_cast<std::size_t>(r)] = std::move(msg->payload);
    }
    return all;
}

void Rendezvous::append_control_fds(std::vector<pollfd>& fds) const {
    for (std::size_t i = 0; i < m_control.size(); ++i) {
        if (m_control[i].valid() && !m_departed[i]) fds.push_back(pollfd{m_control[i].fd(), POLLIN, 0});
    }
}

void Rendezvous::process_control(const std::vector<pollfd>& fds, std::size_t first) {
    std::size_t k = first;
    for (std::size_t i = 0; i < m_control.size(); ++i) {
        if (!m_control[i].valid() || m_departed[i]) continue;
        const pollfd& pfd = fds[k++];
        if (pfd.revents == 0) continue;
        // The index in m_control is the peer's rank on rank 0, and rank 0 elsewhere.
        const int peer = m_rank == 0 ? static_cast<int>(i) : 0;
        auto msg = recv_message(m_control[i], Clock::now() + std::chrono::seconds(2));
        if (!msg) {
            const std::string text =
                describe(peer) + " died or closed its connection (" + msg.error().message + ")";
            if (m_rank == 0) relay_abort(peer, text, peer);
            m_reported = true;
            fail_from_control(peer, text);
        }
        if (msg->type == MessageType::bye) {
            m_departed[i] = true;
            continue;
        }
        if (msg->type == MessageType::abort) {
            Reader rd(msg->payload);
            const int culprit = static_cast<int>(rd.u32()) - 1;
            const std::string text = rd.str();
            if (m_rank == 0) relay_abort(culprit, text, peer);
            m_reported = true;
            fail_from_control(culprit, text);
        }
    }
}

void Rendezvous::check_control() {
    std::vector<pollfd> fds;
    append_control_fds(fds);
    if (fds.empty()) return;
    if (::poll(fds.data(), fds.size(), 0) > 0) process_control(fds, 0);
}

void Rendezvous::fail_from_control(int culprit, const std::string& message) {
    const bool known = culprit >= 0 && culprit < m_size;
    throw CommError(CommErrorKind::peer_failed, message, known ? culprit : -1,
                    known ? m_peers[static_cast<std::size_t>(culprit)].host : std::string());
}

void Rendezvous::relay_abort(int culprit, const std::string& message, int except_rank) noexcept {
    const auto deadline = Clock::now() + k_control_send_budget;
    const std::string payload = abort_payload(culprit, message);
    for (int r = 1; r < static_cast<int>(m_control.size()); ++r) {
        auto& sock = m_control[static_cast<std::size_t>(r)];
        if (r == except_rank || !sock.valid() || m_departed[static_cast<std::size_t>(r)]) continue;
        (void)send_message(sock, MessageType::abort, payload, deadline);
    }
}

void Rendezvous::report_failure(const CommError& error) noexcept {
    if (m_reported || m_size == 1) return;
    m_reported = true;
    if (m_rank == 0) {
        relay_abort(error.peer_rank(), error.what(), -1);
    } else if (!m_control.empty() && m_control[0].valid()) {
        (void)send_message(m_control[0], MessageType::abort, abort_payload(error.peer_rank(), error.what()),
                           Clock::now() + k_control_send_budget);
    }
}

void Rendezvous::shutdown_ring() noexcept {
    m_next.shutdown_both();
    m_prev.shutdown_both();
}

} // namespace ddl::runtime
