#include "util/KillPoint.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <signal.h>
#include <unistd.h>

namespace ddl {

void kill_point(const std::string& label) {
    // Read on every pass (a few per command): cheap, and a forked test child sees its own setting.
    const char* at = std::getenv("DDL_TEST_KILL_AT");
    const char* trace = std::getenv("DDL_TEST_KILL_TRACE");
    if (!at && !trace) return;
    // Points are reached from parallel node threads: count and append under one lock.
    static std::mutex mutex;
    static std::map<std::string, int> seen;
    std::lock_guard lock(mutex);
    int n = ++seen[label];
    std::string numbered = label + "#" + std::to_string(n);
    if (trace && *trace) {
        int fd = open(trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) {
            std::string line = numbered + "\n";
            (void)!write(fd, line.data(), line.size());
            close(fd);
        }
    }
    // "label" stops at the first pass, "label#N" at the N-th.
    if (at && (label == at || numbered == at)) kill(getpid(), SIGKILL);
}

} // namespace ddl
