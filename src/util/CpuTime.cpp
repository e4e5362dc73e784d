#include "util/CpuTime.hpp"

#include <cerrno>
#include <chrono>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>

namespace ddl {
namespace {

double seconds(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

} // namespace

double cpu_seconds_used() {
    rusage self{}, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) +
           seconds(children.ru_stime);
}

OrphanReaper::OrphanReaper() {
    int was = 0;
    if (prctl(PR_GET_CHILD_SUBREAPER, &was) == 0) m_was_reaper = was != 0;
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
}

OrphanReaper::~OrphanReaper() {
    if (!m_was_reaper) (void)prctl(PR_SET_CHILD_SUBREAPER, 0);
}

int OrphanReaper::reap_exited(int wait_ms) {
    int reaped = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
        int status = 0;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            ++reaped;
            continue;
        }
        if (pid < 0 && errno == EINTR) continue;
        // pid == 0: orphans still running; pid < 0 (ECHILD): none left.
        if (pid < 0 || std::chrono::steady_clock::now() >= deadline) return reaped;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

} // namespace ddl
