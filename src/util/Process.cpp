#include "util/Process.hpp"

#include "util/Redactor.hpp"
#include "util/Strings.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ddl {
namespace {

std::mutex g_observer_mutex;
std::function<void(const std::string&)> g_observer;

void set_nonblocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

std::vector<std::string> build_env(const Command& cmd) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
        std::string kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& k : cmd.env_unset)
        env.erase(k);
    for (const auto& [k, v] : cmd.env_set)
        env[k] = v;
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env)
        out.push_back(k + "=" + v);
    return out;
}

} // namespace

void set_process_observer(std::function<void(const std::string&)> observer) {
    std::lock_guard lock(g_observer_mutex);
    g_observer = std::move(observer);
}

std::string printable_argv(const Command& cmd) {
    std::vector<std::string> shown;
    shown.reserve(cmd.argv.size());
    for (const auto& a : cmd.argv)
        shown.push_back(redaction::redact(a, cmd.secrets));
    return shell_join(shown);
}

std::string describe_failure(const Command& cmd, const ProcessResult& result) {
    std::string name = cmd.argv.empty() ? "?" : cmd.argv[0];
    std::string why;
    if (result.timed_out)
        why = "timed out after " + std::to_string(cmd.timeout.count() / 1000) + " s";
    else if (result.exit_code < 0)
        why = "killed by signal " + std::to_string(result.term_signal);
    else
        why = "exit " + std::to_string(result.exit_code);
    auto lines = split_lines(result.err.empty() ? result.out : result.err);
    std::string last;
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        if (!trim(*it).empty()) {
            last = trim(*it);
            break;
        }
    }
    return name + " failed (" + why + ")" + (last.empty() ? "" : ": " + last);
}

std::string find_in_path(const std::string& name) {
    if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
    const char* path = std::getenv("PATH");
    for (const auto& dir : split(path ? path : "/usr/bin:/bin", ':')) {
        if (dir.empty()) continue;
        std::string candidate = dir + "/" + name;
        struct stat st {};
        if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return "";
}

namespace {

// In the forked child: its own process group, killed with ddl, the pipes as 0/1/2, then the program. Only
// async-signal-safe calls; a failure is reported as errno through `exec_fd`.
[[noreturn]] void exec_child(const Command& cmd, const std::string& program, char* const* argv,
                             char* const* envp, pid_t parent, std::array<int, 3> stdio, int exec_fd) {
    setpgid(0, 0);
    // A ddl killed outright (SIGKILL, OOM) must not leave e.g. ansible-playbook running on against a
    // cluster the next ddl command will work on. Daemons the child starts (sshd) fork away from
    // this and are unaffected. run() waits in the forking thread, which is what the kernel watches.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(stdio[0], 0);
    dup2(stdio[1], 1);
    dup2(stdio[2], 2);
    signal(SIGPIPE, SIG_DFL);
    if (!cmd.cwd.empty() && chdir(cmd.cwd.c_str()) != 0) {
        int e = errno;
        (void)!write(exec_fd, &e, sizeof e);
        _exit(127);
    }
    if (!program.empty()) execve(program.c_str(), argv, envp);
    int e = program.empty() ? ENOENT : errno;
    (void)!write(exec_fd, &e, sizeof e);
    _exit(127);
}

// Hands every complete line of `out` from `line_start` on to `sink`.
void feed_lines(const std::string& out, std::size_t& line_start,
                const std::function<void(const std::string&)>& sink) {
    for (auto nl = out.find('\n', line_start); nl != std::string::npos; nl = out.find('\n', line_start)) {
        sink(out.substr(line_start, nl - line_start));
        line_start = nl + 1;
    }
}

// Pointers to `strings` (which must outlive them) ending with nullptr, as execve takes argv and envp.
std::vector<char*> c_pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

void record_status(ProcessResult& result, int status) {
    if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.exit_code = -1;
        result.term_signal = WTERMSIG(status);
    }
}

} // namespace

Result<ProcessResult> SystemProcessRunner::run(const Command& cmd) {
    if (cmd.argv.empty()) return Error{"empty command"};
    // A value too secret for the log line is too secret for any output (an error message quoting the tool).
    for (const auto& s : cmd.secrets)
        redaction::register_secret(s);
    {
        std::lock_guard lock(g_observer_mutex);
        if (g_observer) g_observer(printable_argv(cmd));
    }
    int out_pipe[2], err_pipe[2], in_pipe[2], exec_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) || pipe2(in_pipe, O_CLOEXEC) ||
        pipe2(exec_pipe, O_CLOEXEC))
        return errno_error("pipe");
    auto env_strings = build_env(cmd);
    std::vector<std::string> args = cmd.argv;
    auto envp = c_pointers(env_strings);
    auto argv = c_pointers(args);
    // Resolve the program before fork so the child only calls async-signal-safe functions.
    std::string program =
        cmd.argv[0].find('/') == std::string::npos ? find_in_path(cmd.argv[0]) : cmd.argv[0];

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return errno_error("fork");
    if (pid == 0)
        exec_child(cmd, program, argv.data(), envp.data(), parent, {in_pipe[0], out_pipe[1], err_pipe[1]},
                   exec_pipe[1]);
    for (int fd : {in_pipe[0], out_pipe[1], err_pipe[1], exec_pipe[1]})
        close(fd);
    int child_errno = 0;
    ssize_t n = read(exec_pipe[0], &child_errno, sizeof child_errno);
    close(exec_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof child_errno)) {
        for (int fd : {in_pipe[1], out_pipe[0], err_pipe[0]})
            close(fd);
        waitpid(pid, nullptr, 0);
        return Error{"cannot run " + cmd.argv[0] + ": " + std::strerror(child_errno)};
    }

    ProcessResult result;
    for (int fd : {out_pipe[0], err_pipe[0], in_pipe[1]})
        set_nonblocking(fd);
    std::size_t written = 0;
    int in_fd = in_pipe[1];
    if (cmd.stdin_data.empty()) {
        close(in_fd);
        in_fd = -1;
    }
    auto deadline = std::chrono::steady_clock::now() + cmd.timeout;
    int open_fds = 2;
    std::size_t line_start = 0; // first stdout byte not yet passed to on_stdout_line
    char buf[65536];
    while (open_fds > 0) {
        pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {in_fd, POLLOUT, 0}};
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                          std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            kill(-pid, SIGKILL);
            break;
        }
        int rc = poll(fds, in_fd >= 0 ? 3 : 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (rc < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = read(fds[i].fd, buf, sizeof buf);
            if (r > 0) {
                (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(r));
                if (i == 0 && cmd.on_stdout_line) feed_lines(result.out, line_start, cmd.on_stdout_line);
            } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(fds[i].fd);
                (i == 0 ? out_pipe[0] : err_pipe[0]) = -1;
                --open_fds;
            }
        }
        if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(in_fd, cmd.stdin_data.data() + written, cmd.stdin_data.size() - written);
            if (w > 0) written += static_cast<std::size_t>(w);
            if (w < 0 && errno != EAGAIN) written = cmd.stdin_data.size();
            if (written >= cmd.stdin_data.size()) {
                close(in_fd);
                in_fd = -1;
            }
        }
    }
    if (cmd.on_stdout_line && line_start < result.out.size())
        cmd.on_stdout_line(result.out.substr(line_start));
    if (in_fd >= 0) close(in_fd);
    if (out_pipe[0] >= 0) close(out_pipe[0]);
    if (err_pipe[0] >= 0) close(err_pipe[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    record_status(result, status);
    return result;
}

} // namespace ddl
