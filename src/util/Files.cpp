#include "util/Files.hpp"

#include "util/KillPoint.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ddl {

Result<std::string> read_file_limited(const std::string& path, std::size_t limit) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error("cannot read " + path);
    std::string out;
    char buf[65536];
    while (true) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            auto e = errno_error("cannot read " + path);
            close(fd);
            return e;
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > limit) {
            close(fd);
            return Error{path + " is larger than " + std::to_string(limit / (std::size_t{1024} * 1024)) +
                         " MiB"};
        }
    }
    close(fd);
    return out;
}

namespace {
const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "not a regular file";
}

std::string size_limit_text(std::size_t limit) {
    return limit >= (std::size_t{1} << 20) ? std::to_string(limit >> 20) + " MiB"
                                           : std::to_string(limit) + " bytes";
}
} // namespace

Result<std::string> read_regular_file(const std::string& path, std::size_t limit) {
    int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno_error("cannot read " + path);
    struct FdCloser {
        int fd;
        ~FdCloser() { close(fd); }
    } closer{fd};
    struct stat st {};
    if (fstat(fd, &st) != 0) return errno_error("cannot read " + path);
    if (!S_ISREG(st.st_mode))
        return Error{path + " is " + kind_of(st.st_mode) + ", not a regular file; name a regular file"};
    if (static_cast<std::uint64_t>(st.st_size) > limit)
        return Error{path + " is larger than " + size_limit_text(limit) + " (" + std::to_string(st.st_size) +
                     " bytes)"};
    std::string out;
    char buf[65536];
    while (true) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return Error{path + " cannot be read without waiting (a kernel or special file); name a "
                                    "regular file"};
            return errno_error("cannot read " + path);
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        // Files of /proc and /sys say they are empty: the limit holds for what they give, too.
        if (out.size() > limit) return Error{path + " is larger than " + size_limit_text(limit)};
    }
    return out;
}

Result<std::string> read_file(const std::string& path) {
    return read_file_limited(path, std::size_t(1) << 32);
}

Status write_file_atomic(const std::string& path, const std::string& content, mode_t mode) {
    std::filesystem::path target(path);
    std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
    std::string tmpl = dir + "/." + target.filename().string() + ".tmpXXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0) return errno_error("cannot create a temporary file in " + dir);
    std::string tmp(name.data());
    auto fail = [&](const std::string& what) {
        auto e = errno_error(what);
        close(fd);
        unlink(tmp.c_str());
        return Status(e);
    };
    if (fchmod(fd, mode) != 0) return fail("cannot set the mode of " + tmp);
    std::size_t done = 0;
    while (done < content.size()) {
        ssize_t n = write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("cannot write " + path);
        }
        done += static_cast<std::size_t>(n);
    }
    if (fsync(fd) != 0) return fail("cannot sync " + path);
    if (close(fd) != 0) {
        auto e = errno_error("cannot close " + path);
        unlink(tmp.c_str());
        return e;
    }
    kill_point("atomic-write:" + target.filename().string() + ":before-rename");
    if (rename(tmp.c_str(), path.c_str()) != 0) {
        auto e = errno_error("cannot replace " + path);
        unlink(tmp.c_str());
        return e;
    }
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return {};
}

Status make_dirs(const std::string& path, mode_t mode) {
    std::error_code ec;
    std::filesystem::path p(path);
    std::filesystem::path cur;
    for (const auto& part : p) {
        cur /= part;
        if (cur.empty() || std::filesystem::exists(cur, ec)) continue;
        if (mkdir(cur.c_str(), mode) != 0 && errno != EEXIST)
            return errno_error("cannot create " + cur.string());
    }
    return {};
}

Status remove_tree(const std::string& path) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (ec) return Error{"cannot remove " + path + ": " + ec.message()};
    return {};
}

bool path_exists(const std::string& path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0;
}

Result<std::vector<std::string>> list_tree_files(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::string> names;
    const fs::path root(dir);
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->path().filename() == "__pycache__") {
            it.disable_recursion_pending();
            continue;
        }
        auto st = it->symlink_status(ec);
        // lexically_relative, not relative(): that one resolves links and would name a link's target.
        if (!ec && (fs::is_regular_file(st) || fs::is_symlink(st)))
            names.push_back(it->path().lexically_relative(root).generic_string());
    }
    if (ec) return Error{"cannot read " + dir + ": " + ec.message()};
    std::sort(names.begin(), names.end());
    return names;
}

TempDir::TempDir(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    if (!mkdtemp(name.data())) throw std::runtime_error("cannot create a temporary folder: " + tmpl);
    m_path = name.data();
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

} // namespace ddl
