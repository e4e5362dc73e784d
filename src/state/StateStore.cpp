#include "state/StateStore.hpp"

#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>

namespace ddl {

ClusterLock::~ClusterLock() {
    if (m_fd >= 0) close(m_fd);
}

ClusterLock& ClusterLock::operator=(ClusterLock&& o) noexcept {
    if (this != &o) {
        if (m_fd >= 0) close(m_fd);
        m_fd = o.m_fd;
        o.m_fd = -1;
    }
    return *this;
}

namespace {

// write_file_atomic's temp files are named .<name>.tmpXXXXXX. With the lock held nobody else is writing
// one, so any left over belong to a holder that was killed between writing and renaming.
void remove_stale_temp_files(const std::string& dir) {
    std::error_code ec;
    std::vector<std::filesystem::path> stale;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        std::string name = it->path().filename().string();
        auto pos = name.rfind(".tmp");
        if (name.size() > 1 && name[0] == '.' && pos != std::string::npos && pos + 4 + 6 == name.size() &&
            it->is_regular_file(ec))
            stale.push_back(it->path());
    }
    for (const auto& p : stale)
        std::filesystem::remove(p, ec);
}

} // namespace

Result<ClusterLock> ClusterLock::acquire(const std::string& dir, const std::string& what) {
    std::string path = dir + "/lock";
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return errno_error("cannot open " + path);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        // The holder writes its pid just after taking the lock: give it a moment so that the message
        // can name it.
        std::string holder;
        for (int i = 0; i < 20 && holder.empty(); ++i) {
            if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            holder = trim(read_file(path).value_or(""));
        }
        close(fd);
        return Error{"another ddl command is working on this cluster" +
                     (holder.empty() ? "" : " (" + holder + ")") +
                     "; wait for it to finish, or stop it first"};
    }
    std::string info = "pid " + std::to_string(getpid()) + ": " + what + "\n";
    if (ftruncate(fd, 0) == 0) (void)!write(fd, info.data(), info.size());
    remove_stale_temp_files(dir);
    return ClusterLock(fd);
}

StateStore::StateStore(const std::string& root)
    : m_root(std::filesystem::absolute(root).lexically_normal().string()) {
    while (m_root.size() > 1 && m_root.back() == '/')
        m_root.pop_back();
}

Status StateStore::ensure_cluster_dir(const std::string& cluster) const {
    if (auto s = make_dirs(m_root, 0700); !s) return s;
    return make_dirs(cluster_dir(cluster), 0700);
}

bool StateStore::exists(const std::string& cluster) const {
    return path_exists(cluster_dir(cluster) + "/state.json");
}

Result<ClusterState> StateStore::load(const std::string& cluster) const {
    std::string path = cluster_dir(cluster) + "/state.json";
    auto text = read_file(path);
    if (!text) return text.error();
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    auto s = j.is_discarded() ? Result<ClusterState>(Error{"not valid JSON"}) : ClusterState::from_json(j);
    if (s) return s;
    // A way out, as Terraform's terraform.tfstate.backup gives one: the copy of the last good state.
    const std::string backup = path + ".backup";
    return Error{path + " cannot be read (" + s.error().message + ")\nhint: " +
                 (path_exists(backup)
                      ? "the state before the last save is in " + backup + "; put it back with `cp " +
                            backup + " " + path + "` and run the command again"
                      : std::string("no backup of it exists")) +
                 "; `ddl gc` finds and removes a cluster from the target's side without its state"};
}

Status StateStore::save(const ClusterState& state) const {
    if (auto s = ensure_cluster_dir(state.cluster); !s) return s;
    // The state being replaced, if it reads, is kept as state.json.backup (0600, like the state).
    const std::string path = cluster_dir(state.cluster) + "/state.json";
    if (auto old = read_file(path); old && !nlohmann::json::parse(*old, nullptr, false).is_discarded()) {
        if (auto s = write_file_atomic(path + ".backup", *old, 0600); !s) return s;
    }
    return write_file_atomic(cluster_dir(state.cluster) + "/state.json", state.to_json().dump(2) + "\n",
                             0600);
}

Status StateStore::remove(const std::string& cluster) const {
    // state.json goes last: a destroy killed half way through leaves a folder that `ddl destroy` still
    // recognises as a cluster, rather than anonymous leftovers.
    std::string dir = cluster_dir(cluster);
    std::error_code ec;
    std::vector<std::string> rest;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        auto name = e.path().filename().string();
        if (name != "state.json" && name != "lock") rest.push_back(e.path().string());
    }
    for (const auto& p : rest) {
        if (auto s = remove_tree(p); !s) return s;
    }
    kill_point("destroy:state-last");
    if (unlink((dir + "/state.json").c_str()) != 0 && errno != ENOENT)
        return errno_error("cannot remove " + dir + "/state.json");
    kill_point("destroy:state-removed");
    return remove_tree(dir);
}

bool StateStore::leftover(const std::string& cluster) const {
    return !exists(cluster) && path_exists(cluster_dir(cluster));
}

std::vector<std::string> StateStore::clusters() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(m_root, ec)) {
        if (e.is_directory() && path_exists(e.path().string() + "/state.json"))
            out.push_back(e.path().filename());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> StateStore::leftovers() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(m_root, ec)) {
        if (e.is_directory() && !path_exists(e.path().string() + "/state.json"))
            out.push_back(e.path().filename());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::string> StateStore::lock_holder(const std::string& cluster) const {
    std::string path = cluster_dir(cluster) + "/lock";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    // /proc/locks: "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF" (device as hex major:minor, inode).
    char id[64];
    std::snprintf(id, sizeof id, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                  static_cast<unsigned long long>(st.st_ino));
    auto locks = read_file_limited("/proc/locks", std::size_t{4} * 1024 * 1024);
    if (!locks) return std::nullopt;
    for (const auto& line : split(*locks, '\n')) {
        std::istringstream words(line);
        std::vector<std::string> f;
        for (std::string w; words >> w;)
            f.push_back(w);
        // Waiters read "N: -> FLOCK ...": their second field is "->", so they are skipped here.
        if (f.size() < 6 || f[1] != "FLOCK") continue;
        if (f[5] != id) continue;
        std::string holder = trim(read_file_limited(path, 4096).value_or(""));
        return holder.empty() ? "pid " + f[4] : holder;
    }
    return std::nullopt;
}

} // namespace ddl
