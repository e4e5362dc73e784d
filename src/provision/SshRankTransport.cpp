#include "provision/SshRankTransport.hpp"

#include "util/Strings.hpp"

#include <atomic>
#include <deque>
#include <libssh/libssh.h>
#include <mutex>
#include <signal.h>
#include <thread>

namespace ddl {
namespace {

// Runs "$@" in its own session/process group; lines on stdin name signals for the group; EOF on stdin
// (the SSH channel closed) kills the group. Exit status: the program's, or 128+signal.
// The rank's folder becomes DDL_WORKDIR, as ddl-run does for a detached job (src/runtime/README.md).
const char* k_wrapper =
    R"(DDL_WORKDIR=$PWD; export DDL_WORKDIR
PATH=/opt/ddl/bin:$PATH; LD_LIBRARY_PATH=/opt/ddl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PYTHONPATH=/opt/ddl/python${PYTHONPATH:+:$PYTHONPATH}
export PATH LD_LIBRARY_PATH PYTHONPATH
exec 3<&0
setsid "$@" </dev/null 3<&- &
pid=$!
# Background lists read /dev/null unless redirected: the watcher must read the channel (fd 3).
(while read -r sig; do kill -s "$sig" -- "-$pid" 2>/dev/null; done; kill -s KILL -- "-$pid" 2>/dev/null) <&3 &
watcher=$!
wait "$pid"; rc=$?
kill "$watcher" 2>/dev/null
exit $rc)";

const char* signal_name(int sig) {
    switch (sig) {
    case SIGTERM:
        return "TERM";
    case SIGKILL:
        return "KILL";
    case SIGINT:
        return "INT";
    case SIGHUP:
        return "HUP";
    case SIGUSR1:
        return "USR1";
    case SIGUSR2:
        return "USR2";
    default:
        return "TERM";
    }
}

class SshRankHandle : public runtime::RankHandle {
public:
    SshRankHandle(SshEndpoint ep, runtime::RankStart start, std::string command, runtime::RankEvents& events)
        : m_ep(std::move(ep)), m_start(std::move(start)), m_command(std::move(command)), m_events(events) {
        m_thread = std::thread([this] { run(); });
    }
    ~SshRankHandle() override {
        kill(SIGKILL);
        m_stop = true;
        if (m_thread.joinable()) m_thread.join();
    }
    void kill(int sig) override {
        std::lock_guard lock(m_mutex);
        m_signals.push_back(sig);
    }

private:
    void finish(runtime::RankExit exit) {
        flush_partial();
        m_events.on_exit(m_start.rank, std::move(exit));
    }

    void emit(runtime::OutputStream stream, const char* data, std::size_t n) {
        auto& buf = stream == runtime::OutputStream::out ? m_out : m_err;
        buf.append(data, n);
        std::size_t pos;
        while ((pos = buf.find('\n')) != std::string::npos) {
            m_events.on_output(m_start.rank, stream, buf.substr(0, pos));
            buf.erase(0, pos + 1);
        }
    }

    void flush_partial() {
        if (!m_out.empty()) m_events.on_output(m_start.rank, runtime::OutputStream::out, std::move(m_out));
        if (!m_err.empty()) m_events.on_output(m_start.rank, runtime::OutputStream::err, std::move(m_err));
        m_out.clear();
        m_err.clear();
    }

    void run() {
        auto session = SshSession::connect(m_ep, std::chrono::seconds(30));
        if (!session) return finish({-1, 0, true, session.error().message});
        ssh_channel ch = ssh_channel_new(session->raw());
        if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
            ssh_channel_request_exec(ch, m_command.c_str()) != SSH_OK) {
            std::string why = ssh_get_error(session->raw());
            if (ch) ssh_channel_free(ch);
            return finish({-1, 0, true, "cannot start the rank over SSH: " + why});
        }
        m_events.on_started(m_start.rank);
        char buf[16384];
        bool killed_hard = false;
        while (true) {
            std::vector<int> sigs;
            {
                std::lock_guard lock(m_mutex);
                sigs.assign(m_signals.begin(), m_signals.end());
                m_signals.clear();
            }
            for (int sig : sigs) {
                std::string line = std::string(signal_name(sig)) + "\n";
                ssh_channel_write(ch, line.data(), static_cast<uint32_t>(line.size()));
                if (sig == SIGKILL) {
                    // Closing stdin makes the wrapper kill the group even if the line was lost.
                    ssh_channel_send_eof(ch);
                    killed_hard = true;
                }
            }
            bool got = false;
            for (int is_err = 0; is_err < 2; ++is_err) {
                int n = ssh_channel_read_timeout(ch, buf, sizeof buf, is_err, is_err ? 0 : 100);
                if (n == SSH_ERROR) {
                    std::string why = ssh_get_error(session->raw());
                    ssh_channel_free(ch);
                    return finish({-1, 0, true, "lost the SSH connection to " + m_ep.host + ": " + why});
                }
                if (n > 0) {
                    emit(is_err ? runtime::OutputStream::err : runtime::OutputStream::out, buf,
                         static_cast<std::size_t>(n));
                    got = true;
                }
            }
            if (!got && ssh_channel_is_eof(ch)) break;
            if (m_stop && killed_hard) {
                // Abandoned by the launcher (it gave the rank up as lost): the host may be unreachable,
                // so nothing below may wait for it.
                ssh_set_blocking(session->raw(), 0);
                ssh_channel_free(ch);
                return finish({-1, SIGKILL, true, "gave up on " + m_ep.host + " after SIGKILL"});
            }
        }
        for (int is_err = 0; is_err < 2; ++is_err) {
            int n;
            while ((n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, is_err)) > 0)
                emit(is_err ? runtime::OutputStream::err : runtime::OutputStream::out, buf,
                     static_cast<std::size_t>(n));
        }
        int status = ssh_channel_get_exit_status(ch);
        ssh_channel_close(ch);
        ssh_channel_free(ch);
        runtime::RankExit exit;
        if (status > 128 && status < 160) {
            exit.exit_code = -1;
            exit.term_signal = status - 128;
        } else if (status < 0) {
            exit.host_lost = true;
            exit.detail = "the SSH channel to " + m_ep.host + " closed without an exit status";
        } else {
            exit.exit_code = status;
        }
        finish(exit);
    }

    SshEndpoint m_ep;
    runtime::RankStart m_start;
    std::string m_command;
    runtime::RankEvents& m_events;
    std::mutex m_mutex;
    std::deque<int> m_signals;
    std::atomic<bool> m_stop{false};
    std::string m_out, m_err;
    std::thread m_thread;
};

} // namespace

std::string SshRankTransport::remote_command(const runtime::RankStart& start) {
    std::vector<std::string> argv{"sh", "-c", k_wrapper, "ddl-rank", "env"};
    for (const auto& [k, v] : start.env)
        argv.push_back(k + "=" + v);
    argv.insert(argv.end(), start.argv.begin(), start.argv.end());
    if (start.workdir.empty()) return shell_join(argv);
    // A missing folder stops the rank before it starts (exit 127, as a missing program), with the fix.
    const std::string dir = shell_quote(start.workdir);
    return "cd " + dir + " 2>/dev/null || { echo \"ddl: no folder \"" + dir +
           "\" on $(hostname): run ddl sync\" >&2; exit 127; }; " + shell_join(argv);
}

std::string SshRankTransport::container_command(const runtime::RankStart& start,
                                                const std::vector<std::string>& engine,
                                                const std::string& container) {
    // -i: the wrapper inside reads signal lines and EOF from the channel, through the engine.
    std::vector<std::string> argv = engine;
    argv.insert(argv.end(), {"exec", "-i"});
    for (const auto& [k, v] : start.env)
        argv.insert(argv.end(), {"-e", k + "=" + v});
    argv.insert(argv.end(), {container, "sh", "-c", k_wrapper, "ddl-rank"});
    argv.insert(argv.end(), start.argv.begin(), start.argv.end());
    return shell_join(argv);
}

Result<std::unique_ptr<runtime::RankHandle>> SshRankTransport::start(const runtime::RankStart& start,
                                                                     runtime::RankEvents& events) {
    auto ep = m_resolver(start.host);
    if (!ep)
        return Error{"host " + start.host + " is not a node of this cluster; ddl knows no way to reach it"};
    std::string command =
        m_container ? container_command(start, m_container->engine, m_container->container(start.host))
                    : remote_command(start);
    return std::unique_ptr<runtime::RankHandle>(std::make_unique<SshRankHandle>(*ep, start, command, events));
}

} // namespace ddl
