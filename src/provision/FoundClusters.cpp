#include "provision/FoundClusters.hpp"

#include <algorithm>

namespace ddl {

std::optional<std::time_t> utc_seconds(const std::string& text) {
    std::tm tm{};
    if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
    return timegm(&tm);
}

FoundCluster& FoundClusters::add(const std::string& cluster, const std::string& id,
                                 const std::string& created) {
    auto& found = m_by_cluster[cluster];
    const auto when = utc_seconds(created);
    const long long age = when ? static_cast<long long>(m_now - *when) : 0;
    found.age_s = found.record.contains(m_key) ? std::min(found.age_s, age) : age;
    found.cluster = cluster;
    found.record[m_key].push_back(id);
    return found;
}

std::vector<FoundCluster> FoundClusters::take() {
    std::vector<FoundCluster> out;
    out.reserve(m_by_cluster.size());
    for (auto& entry : m_by_cluster)
        out.push_back(std::move(entry.second));
    m_by_cluster.clear();
    return out;
}

} // namespace ddl
