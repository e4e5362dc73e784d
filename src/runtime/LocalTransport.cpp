#include "runtime/LocalTransport.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace ddl::runtime {

namespace {

// A pipe's two ends, each closed by its owner.
struct Pipe {
    int read = -1;
    int write = -1;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) == 0) {
            read = fds[0];
            write = fds[1];
        }
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    void close_read() {
        if (read >= 0) ::close(read);
        read = -1;
    }
    void close_write() {
        if (write >= 0) ::close(write);
        write = -1;
    }
    bool ok() const { return read >= 0 && write >= 0; }
};

class LocalRank : public RankHandle {
public:
    LocalRank(int rank, pid_t pid, int out_fd, int err_fd, RankEvents& events)
        : m_rank(rank), m_pid(pid), m_fds{out_fd, err_fd}, m_events(events) {
        m_thread = std::thread([this] { pump(); });
    }

    ~LocalRank() override {
        kill(SIGKILL);
        m_thread.join();
        for (int fd : m_fds)
            if (fd >= 0) ::close(fd);
    }
    LocalRank(const LocalRank&) = delete;
    LocalRank& operator=(const LocalRank&) = delete;

    void kill(int signal) override {
        std::lock_guard lock(m_mutex);
        // The process group: the rank's own children (a shell, a python launcher) go too.
        if (!m_reaped) ::kill(-m_pid, signal);
    }

private:
    void pump() {
        m_events.on_started(m_rank);
        std::string partial[2];
        bool open[2] = {true, true};
        char buf[65536];
        std::optional<int> status;
        auto exited_at = std::chrono::steady_clock::time_point{};
        while (open[0] || open[1]) {
            pollfd pfds[2];
            nfds_t n = 0;
            int which[2];
            for (int i = 0; i < 2; ++i) {
                if (!open[i]) continue;
                pfds[n] = pollfd{m_fds[i], POLLIN, 0};
                which[n++] = i;
            }
            const int rc = ::poll(pfds, n, 200);
            if (rc < 0 && errno != EINTR) break;
            for (nfds_t k = 0; rc > 0 && k < n; ++k) {
                if (pfds[k].revents == 0) continue;
                const int i = which[k];
                const ssize_t got = ::read(m_fds[i], buf, sizeof buf);
                if (got <= 0) {
                    if (got < 0 && errno == EINTR) continue;
                    open[i] = false;
                    continue;
                }
                partial[i].append(buf, static_cast<std::size_t>(got));
                std::size_t start = 0;
                for (std::size_t nl; (nl = partial[i].find('\n', start)) != std::string::npos; start = nl + 1)
                    m_events.on_output(m_rank, i == 0 ? OutputStream::out : OutputStream::err,
                                       partial[i].substr(start, nl - start));
                partial[i].erase(0, start);
            }
            // A grandchild may keep the pipes open after the rank itself is gone: give it a moment, then
            // stop.
            if (!status) {
                status = try_reap(false);
                if (status) exited_at = std::chrono::steady_clock::now();
            } else if (std::chrono::steady_clock::now() - exited_at > std::chrono::milliseconds(500)) {
                break;
            }
        }
        for (int i = 0; i < 2; ++i)
            if (!partial[i].empty())
                m_events.on_output(m_rank, i == 0 ? OutputStream::out : OutputStream::err,
                                   std::move(partial[i]));
        if (!status) status = try_reap(true);
        RankExit exit;
        if (WIFEXITED(*status))
            exit.exit_code = WEXITSTATUS(*status);
        else if (WIFSIGNALED(*status))
            exit.term_signal = WTERMSIG(*status);
        m_events.on_exit(m_rank, exit);
    }

    std::optional<int> try_reap(bool block) {
        int status = 0;
        for (;;) {
            const pid_t rc = ::waitpid(m_pid, &status, block ? 0 : WNOHANG);
            if (rc < 0 && errno == EINTR) continue;
            if (rc == 0) return std::nullopt;
            std::lock_guard lock(m_mutex);
            m_reaped = true;
            return rc < 0 ? (1 << 8) : status; // ECHILD: someone else reaped it; report a failure
        }
    }

    int m_rank;
    pid_t m_pid;
    int m_fds[2];
    RankEvents& m_events;
    std::mutex m_mutex;
    bool m_reaped = false;
    std::thread m_thread;
};

} // namespace

ddl::Result<std::unique_ptr<RankHandle>> LocalTransport::start(const RankStart& start, RankEvents& events) {
    std::vector<std::string> argv = m_prefix;
    if (auto it = m_host_prefix.find(start.host); it != m_host_prefix.end()) argv = it->second;
    argv.insert(argv.end(), start.argv.begin(), start.argv.end());
    if (argv.empty()) return ddl::Error{"no program to start"};

    // Everything the child needs is built before fork: a multi-threaded parent must not allocate after it.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry = *e;
        if (!start.env.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
    }
    for (const auto& [k, v] : start.env)
        env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    envp.reserve(env_strings.size() + 1);
    for (auto& s : env_strings)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (auto& s : argv)
        cargv.push_back(s.data());
    cargv.push_back(nullptr);

    Pipe out, err, exec_status;
    if (!out.ok() || !err.ok() || !exec_status.ok()) return ddl::errno_error("pipe");
    const pid_t pid = ::fork();
    if (pid < 0) return ddl::errno_error("fork");
    if (pid == 0) {
        ::setpgid(0, 0);
        ::signal(SIGPIPE, SIG_DFL);
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        ::dup2(out.write, 1);
        ::dup2(err.write, 2);
        const int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, 0);
        ::execvpe(cargv[0], cargv.data(), envp.data());
        const int code = errno;
        (void)!::write(exec_status.write, &code, sizeof code);
        ::_exit(127);
    }
    ::setpgid(pid, pid); // also here: no race with an early kill(-pid)
    out.close_write();
    err.close_write();
    exec_status.close_write();
    int code = 0;
    ssize_t got = 0;
    do {
        got = ::read(exec_status.read, &code, sizeof code);
    } while (got < 0 && errno == EINTR);
    if (got == static_cast<ssize_t>(sizeof code)) {
        ::waitpid(pid, nullptr, 0);
        return ddl::Error{"cannot execute '" + argv[0] + "': " + std::strerror(code)};
    }
    auto handle = std::make_unique<LocalRank>(start.rank, pid, out.read, err.read, events);
    out.read = -1;
    err.read = -1;
    return std::unique_ptr<RankHandle>(std::move(handle));
}

} // namespace ddl::runtime
