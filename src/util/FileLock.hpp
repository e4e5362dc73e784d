#pragma once
#include <string>

namespace ddl {

// An exclusive flock on `path` (created 0600 when missing), held for the object's life; the kernel drops
// it when the holder dies, so a crashed holder never leaves it stuck.
class FileLock {
public:
    explicit FileLock(const std::string& path);
    ~FileLock();
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    [[nodiscard]] bool held() const { return m_fd >= 0; }

private:
    int m_fd;
};

} // namespace ddl
