#pragma once
// The per-cluster state folder (.ddl/<cluster>/, mode 0700): state.json (atomic, 0600), a lock so one
// command at a time mutates a cluster, keys, rendered inputs and logs.
#include "state/ClusterState.hpp"
#include "util/Result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddl {

// An exclusive flock on <dir>/lock. The kernel drops it when the holder dies, so a stale lock left by
// a killed ddl is taken over safely; the holder's pid and command are written into the file for the message.
class ClusterLock {
public:
    ClusterLock() = default;
    ~ClusterLock();
    ClusterLock(ClusterLock&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
    ClusterLock& operator=(ClusterLock&& o) noexcept;
    ClusterLock(const ClusterLock&) = delete;
    ClusterLock& operator=(const ClusterLock&) = delete;

    static Result<ClusterLock> acquire(const std::string& dir, const std::string& what);

private:
    explicit ClusterLock(int fd) : m_fd(fd) {}
    int m_fd = -1;
};

class StateStore {
public:
    // The root is made absolute: paths inside it end up in configs read by other programs (sshd).
    explicit StateStore(const std::string& root);

    const std::string& root() const { return m_root; }
    std::string cluster_dir(const std::string& cluster) const { return m_root + "/" + cluster; }
    Status ensure_cluster_dir(const std::string& cluster) const;

    bool exists(const std::string& cluster) const;
    // A cluster folder without state.json: what a deploy killed before its first save or a destroy
    // killed after removing state.json leaves. Nothing was created for it (resources are recorded in
    // state.json before they are made and removed before it), so it is safe to delete.
    bool leftover(const std::string& cluster) const;
    Result<ClusterState> load(const std::string& cluster) const;
    Status save(const ClusterState& state) const;
    // Removes the cluster's folder after a complete destroy.
    Status remove(const std::string& cluster) const;
    std::vector<std::string> clusters() const;
    // Folders in the state folder that hold no state.json (see leftover()).
    std::vector<std::string> leftovers() const;
    // Who holds the cluster's lock ("pid N: ddl deploy x.yaml"), or nothing when it is free. Read from
    // /proc/locks without touching the lock, so a command starting meanwhile is not disturbed.
    std::optional<std::string> lock_holder(const std::string& cluster) const;

private:
    std::string m_root;
};

} // namespace ddl
