#include "util/FileLock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace ddl {

FileLock::FileLock(const std::string& path) : m_fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (m_fd >= 0 && flock(m_fd, LOCK_EX) != 0) {
        close(m_fd);
        m_fd = -1;
    }
}

FileLock::~FileLock() {
    if (m_fd >= 0) close(m_fd);
}

} // namespace ddl
