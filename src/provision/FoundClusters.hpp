#pragma once
// Clusters found from a cloud's list of machines (`ddl gc --spec`): each machine names its cluster, and the
// machines of one cluster make one FoundCluster. The youngest machine's age is the cluster's age; the
// record lists the machines' ids under one key.
#include "provision/TargetCapabilities.hpp"

#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

// "2026-11-20T10:00:00Z" (ISO 8601, UTC; fractions and zone letters after the seconds ignored) -> seconds
// since the epoch; nullopt when it does not read as one.
std::optional<std::time_t> utc_seconds(const std::string& text);

class FoundClusters {
public:
    // `key`: where the record lists the machines' ids ("instances", "servers"); `now`: the time ages are
    // counted to.
    FoundClusters(std::string key, std::time_t now) : m_key(std::move(key)), m_now(now) {}
    // Machine `id` of `cluster`, created at `created` (utc_seconds' form; unreadable: age 0). The caller adds
    // what else the record and detail need.
    FoundCluster& add(const std::string& cluster, const std::string& id, const std::string& created);
    // How many machines `found` has.
    std::size_t machines(const FoundCluster& found) const { return found.record[m_key].size(); }
    // The clusters by name.
    std::vector<FoundCluster> take();

private:
    std::string m_key;
    std::time_t m_now;
    std::map<std::string, FoundCluster> m_by_cluster;
};

} // namespace ddl
