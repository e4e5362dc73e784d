#include "state/KnownFolders.hpp"

#include "util/Files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sstream>
#include <unistd.h>

namespace ddl {

namespace {

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string absolute(const std::string& path) {
    std::error_code ec;
    auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    return ec ? path : p.string();
}

} // namespace

std::string default_state_folder() {
    std::error_code ec;
    if (std::filesystem::is_directory(".ddl", ec)) return ".ddl";
    const std::string home = env_or_empty("HOME");
    return home.empty() ? ".ddl" : home + "/.ddl";
}

std::string known_folders_file() {
    std::string base = env_or_empty("XDG_STATE_HOME");
    if (base.empty()) {
        const std::string home = env_or_empty("HOME");
        if (home.empty()) return {};
        base = home + "/.local/state";
    }
    return base + "/ddl/state-folders";
}

Status remember_state_folder(const std::string& root) {
    const std::string file = known_folders_file();
    if (file.empty()) return {};
    const std::string path = absolute(root);
    for (const auto& known : known_state_folders())
        if (known == path) return {};
    if (auto s = make_dirs(std::filesystem::path(file).parent_path().string()); !s) return s;
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Error{"cannot record the state folder in " + file + ": " + std::strerror(errno)};
    // One write: appends from several processes at once interleave by whole lines.
    const std::string line = path + "\n";
    const ssize_t n = ::write(fd, line.data(), line.size());
    const int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(line.size()))
        return Error{"cannot record the state folder in " + file + ": " + std::strerror(err)};
    return {};
}

std::vector<std::string> known_state_folders() {
    std::vector<std::string> out;
    const std::string file = known_folders_file();
    if (file.empty()) return out;
    auto text = read_file_limited(file, 1 << 20);
    if (!text) return out;
    std::set<std::string> seen;
    std::istringstream in(*text);
    std::string line;
    std::error_code ec;
    while (std::getline(in, line)) {
        if (line.empty() || line.front() != '/' || !seen.insert(line).second) continue;
        if (std::filesystem::is_directory(line, ec)) out.push_back(line);
    }
    return out;
}

} // namespace ddl
