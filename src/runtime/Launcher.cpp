#include "runtime/Launcher.hpp"

#include "util/Strings.hpp"

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>

namespace ddl::runtime {

namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_interrupted_by{0}; // sticky: the run's caller may map its failure to another code

extern "C" void on_launcher_signal(int sig) {
    g_signal.store(sig);
    g_interrupted_by.store(sig);
}

// Installs the forwarding handlers for the duration of a run and restores the old ones.
class SignalForwarding {
public:
    explicit SignalForwarding(bool enabled) : m_enabled(enabled) {
        g_signal.store(0);
        if (!m_enabled) return;
        struct sigaction sa {};
        sa.sa_handler = on_launcher_signal;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGINT, &sa, &m_old_int);
        ::sigaction(SIGTERM, &sa, &m_old_term);
    }
    ~SignalForwarding() {
        if (!m_enabled) return;
        ::sigaction(SIGINT, &m_old_int, nullptr);
        ::sigaction(SIGTERM, &m_old_term, nullptr);
    }
    SignalForwarding(const SignalForwarding&) = delete;
    SignalForwarding& operator=(const SignalForwarding&) = delete;

private:
    bool m_enabled;
    struct sigaction m_old_int {};
    struct sigaction m_old_term {};
};

struct Event {
    enum class Kind { started, output, exited } kind;
    int rank;
    OutputStream stream = OutputStream::out;
    std::string line;
    RankExit exit;
};

// Collects the transports' events (any thread) for the supervising loop.
class EventQueue : public RankEvents {
public:
    void on_started(int rank) override { push(Event{Event::Kind::started, rank, {}, {}, {}}); }
    void on_output(int rank, OutputStream stream, std::string line) override {
        push(Event{Event::Kind::output, rank, stream, std::move(line), {}});
    }
    void on_exit(int rank, RankExit exit) override {
        push(Event{Event::Kind::exited, rank, {}, {}, std::move(exit)});
    }

    std::deque<Event> take(std::chrono::milliseconds wait) {
        std::unique_lock lock(m_mutex);
        m_cv.wait_for(lock, wait, [&] { return !m_events.empty(); });
        return std::exchange(m_events, {});
    }

private:
    void push(Event e) {
        {
            std::lock_guard lock(m_mutex);
            m_events.push_back(std::move(e));
        }
        m_cv.notify_one();
    }
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Event> m_events;
};

void default_output(const std::string& line, OutputStream stream) {
    FILE* f = stream == OutputStream::out ? stdout : stderr;
    std::fwrite(line.data(), 1, line.size(), f);
    std::fputc('\n', f);
    std::fflush(f);
}

std::string seconds_text(std::chrono::milliseconds d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(d.count()) / 1000.0);
    return buf;
}

// Sends `sig` to every rank that started and has not exited.
void signal_running(std::vector<std::unique_ptr<RankHandle>>& handles, const std::vector<bool>& exited,
                    int sig) {
    for (std::size_t r = 0; r < handles.size(); ++r)
        if (handles[r] && !exited[r]) handles[r]->kill(sig);
}

// The hosts of ranks that have not reported being started.
std::vector<std::string> hosts_not_started(const std::vector<RankAssignment>& ranks,
                                           const std::vector<bool>& started) {
    std::set<std::string> late;
    for (std::size_t r = 0; r < ranks.size(); ++r)
        if (!started[r]) late.insert(ranks[r].host);
    return {late.begin(), late.end()};
}

// "R (host)" for every rank that started and has not exited.
std::vector<std::string> ranks_running(const std::vector<RankAssignment>& ranks,
                                       const std::vector<std::unique_ptr<RankHandle>>& handles,
                                       const std::vector<bool>& exited) {
    std::vector<std::string> out;
    for (std::size_t r = 0; r < ranks.size(); ++r)
        if (handles[r] && !exited[r]) out.push_back(std::to_string(r) + " (" + ranks[r].host + ")");
    return out;
}

int exit_code_for(const RankExit& e) {
    if (e.host_lost) return 1;
    if (e.term_signal != 0) return 128 + e.term_signal;
    return e.exit_code == 0 ? 1 : e.exit_code;
}

} // namespace

std::string RankExit::describe() const {
    if (host_lost) return "lost its host" + (detail.empty() ? std::string() : ": " + detail);
    if (term_signal != 0)
        return "was killed by signal " + std::to_string(term_signal) + " (" + ::strsignal(term_signal) + ")";
    return "exited with status " + std::to_string(exit_code);
}

ddl::Result<std::vector<RankAssignment>> assign_ranks(const std::vector<HostfileEntry>& hosts, int np) {
    const int total = total_slots(hosts);
    if (hosts.empty()) return ddl::Error{"no hosts to run on"};
    if (np < 0) return ddl::Error{"-np must be positive"};
    if (np == 0) np = total;
    if (np > total) {
        std::vector<std::string> slots;
        slots.reserve(hosts.size());
        for (const auto& h : hosts)
            slots.push_back(h.host + ": " + std::to_string(h.slots));
        return ddl::Error{"-np " + std::to_string(np) + " is more than the " + std::to_string(total) +
                          " slots in the hostfile (" + join(slots, ", ") + ")"};
    }
    std::vector<RankAssignment> out;
    for (const auto& h : hosts) {
        const int here = std::min(h.slots, np - static_cast<int>(out.size()));
        for (int i = 0; i < here; ++i)
            out.push_back(RankAssignment{static_cast<int>(out.size()), h.host, i, here});
        if (static_cast<int>(out.size()) == np) break;
    }
    return out;
}

std::map<std::string, std::string> rank_environment(const LaunchOptions& opts, const RankAssignment& rank,
                                                    int world_size, const std::string& master_addr) {
    std::map<std::string, std::string> env = opts.extra_env;
    const std::string r = std::to_string(rank.rank), n = std::to_string(world_size);
    const std::string lr = std::to_string(rank.local_rank), ls = std::to_string(rank.local_size);
    const std::string port = std::to_string(opts.master_port);
    env["DDL_RANK"] = r;
    env["DDL_SIZE"] = n;
    env["DDL_LOCAL_RANK"] = lr;
    env["DDL_LOCAL_SIZE"] = ls;
    env["DDL_MASTER_ADDR"] = master_addr;
    env["DDL_MASTER_PORT"] = port;
    env["DDL_IFACE"] = opts.iface;
    // torch.distributed's env:// init reads these, so a DDP script runs unchanged.
    env["RANK"] = r;
    env["WORLD_SIZE"] = n;
    env["LOCAL_RANK"] = lr;
    env["LOCAL_WORLD_SIZE"] = ls;
    env["MASTER_ADDR"] = master_addr;
    env["MASTER_PORT"] = port;
    env["NCCL_SOCKET_IFNAME"] = opts.iface.empty() ? "^lo,docker" : opts.iface;
    if (!opts.iface.empty()) env["GLOO_SOCKET_IFNAME"] = opts.iface;
    return env;
}

std::optional<LaunchResult> Launcher::start_ranks(const std::vector<RankAssignment>& ranks,
                                                  const LaunchOptions& opts, const std::string& master,
                                                  RankEvents& events,
                                                  std::vector<std::unique_ptr<RankHandle>>& handles,
                                                  int& alive) {
    const int n = static_cast<int>(ranks.size());
    for (const auto& a : ranks) {
        RankStart rs{a.rank, a.host, rank_environment(opts, a, n, master), opts.argv, opts.workdir};
        auto h = m_transport.start(rs, events);
        if (!h)
            return LaunchResult{1,
                                "rank " + std::to_string(a.rank) + " on " + a.host +
                                    " could not start: " + h.error().message,
                                a.rank, a.host};
        handles[static_cast<std::size_t>(a.rank)] = std::move(*h);
        ++alive;
    }
    return std::nullopt;
}

int interrupting_signal() {
    return g_interrupted_by.load();
}

ddl::Result<LaunchResult> Launcher::run(const LaunchOptions& opts) {
    if (opts.argv.empty()) return ddl::Error{"no program given to run"};
    auto ranks = assign_ranks(opts.hosts, opts.np);
    if (!ranks) return ranks.error();
    const int n = static_cast<int>(ranks->size());
    const std::string master = opts.master_addr.empty() ? ranks->front().host : opts.master_addr;
    auto print = opts.output ? opts.output : default_output;

    EventQueue events;
    SignalForwarding signals(opts.forward_signals);
    std::vector<std::unique_ptr<RankHandle>> handles(static_cast<std::size_t>(n));
    std::vector<bool> started(static_cast<std::size_t>(n), false);
    std::vector<bool> exited(static_cast<std::size_t>(n), false);
    LaunchResult result;
    int alive = 0;

    using Clock = std::chrono::steady_clock;
    const auto start_time = Clock::now();
    std::optional<Clock::time_point> stop_at; // when stopping began
    bool killed = false;

    auto begin_stop = [&](int signal) {
        if (stop_at) return;
        stop_at = Clock::now();
        signal_running(handles, exited, signal);
    };
    auto fail = [&](int rank, const std::string& host, const std::string& message, int code) {
        if (result.exit_code != 0) return; // the first failure is the one to report
        result = LaunchResult{code, message, rank, host};
    };

    if (auto failed = start_ranks(*ranks, opts, master, events, handles, alive)) {
        result = *failed;
        begin_stop(SIGTERM);
    }

    while (alive > 0) {
        for (Event& e : events.take(std::chrono::milliseconds(100))) {
            const auto idx = static_cast<std::size_t>(e.rank);
            const std::string& host = (*ranks)[idx].host;
            switch (e.kind) {
            case Event::Kind::started:
                started[idx] = true;
                break;
            case Event::Kind::output:
                print("[" + std::to_string(e.rank) + "] " + e.line, e.stream);
                break;
            case Event::Kind::exited:
                if (exited[idx]) break;
                exited[idx] = true;
                started[idx] = true;
                --alive;
                if (!e.exit.success() && !stop_at) {
                    fail(e.rank, host,
                         "rank " + std::to_string(e.rank) + " on " + host + " " + e.exit.describe(),
                         exit_code_for(e.exit));
                    begin_stop(SIGTERM);
                }
                break;
            }
        }
        const auto now = Clock::now();
        if (const int sig = g_signal.exchange(0); sig != 0) {
            // The user's interrupt is the reason, even where a rank the same Ctrl-C reached failed first.
            result = LaunchResult{
                128 + sig, std::string("interrupted by ") + ::strsignal(sig) + "; stopped all ranks", -1, ""};
            // Forward the signal itself first: a rank may want to save a checkpoint on SIGTERM.
            stop_at.reset();
            begin_stop(sig);
        }
        if (!stop_at && now - start_time > opts.startup_timeout) {
            if (auto late = hosts_not_started(*ranks, started); !late.empty()) {
                fail(-1, late.front(),
                     "ranks did not start within " + seconds_text(opts.startup_timeout) +
                         " s on: " + join(late, ", "),
                     1);
                begin_stop(SIGTERM);
            }
        }
        if (stop_at && !killed && now - *stop_at > opts.kill_grace) {
            killed = true;
            signal_running(handles, exited, SIGKILL);
        }
        if (stop_at && killed && now - *stop_at > opts.kill_grace + std::chrono::seconds(2)) {
            print("ddl: ranks " + join(ranks_running(*ranks, handles, exited), ", ") +
                      " did not stop; giving up on them",
                  OutputStream::err);
            break;
        }
    }
    // Output of ranks that ended in the same instant.
    for (Event& e : events.take(std::chrono::milliseconds(0)))
        if (e.kind == Event::Kind::output) print("[" + std::to_string(e.rank) + "] " + e.line, e.stream);
    handles.clear();
    // An interrupt that arrived as the last rank ended (the same Ctrl-C reached both).
    if (const int sig = g_signal.exchange(0); sig != 0)
        result = LaunchResult{
            128 + sig, std::string("interrupted by ") + ::strsignal(sig) + "; stopped all ranks", -1, ""};
    return result;
}

} // namespace ddl::runtime
