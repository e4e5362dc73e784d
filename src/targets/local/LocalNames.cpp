#include "targets/local/LocalNames.hpp"

#include "targets/local/LocalPlan.hpp"
#include "util/Files.hpp"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <net/if.h>

namespace ddl {

namespace {

bool hex6(const std::string& s) {
    if (s.size() != 6) return false;
    for (char c : s)
        if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c)))
            return false;
    return true;
}

} // namespace

std::string tag_of_link(const std::string& link) {
    for (const char* prefix : {"ddlbr-", "ddlpb-"})
        if (link.rfind(prefix, 0) == 0 && hex6(link.substr(6))) return link.substr(6);
    // ddl + tag + h|n|p|q + node index
    if (link.size() > 10 && link.rfind("ddl", 0) == 0 && hex6(link.substr(3, 6)) &&
        std::string("hnpq").find(link[9]) != std::string::npos)
        return link.substr(3, 6);
    return "";
}

std::vector<std::string> plan_links(const nlohmann::json& plan) {
    std::vector<std::string> out;
    if (!plan.is_object()) return out;
    auto add = [&](const nlohmann::json& j, const char* key) {
        if (j.contains(key) && j[key].is_string() && !j[key].get<std::string>().empty())
            out.push_back(j[key].get<std::string>());
    };
    add(plan, "bridge");
    add(plan, "private_bridge");
    if (plan.contains("nodes") && plan["nodes"].is_array())
        for (const auto& n : plan["nodes"]) {
            if (!n.is_object()) continue;
            add(n, "veth_host");
            add(n, "veth2_host");
        }
    return out;
}

std::optional<std::uint32_t> free_tag_salt(const std::string& cluster, const std::set<std::string>& taken) {
    for (std::uint32_t salt = 0; salt < 65536; ++salt)
        if (taken.count(link_tag(cluster, salt)) == 0) return salt;
    return std::nullopt;
}

std::vector<std::string> host_links() {
    std::vector<std::string> out;
    struct if_nameindex* list = if_nameindex();
    if (list == nullptr) return out;
    for (const struct if_nameindex* i = list; i->if_index != 0 && i->if_name != nullptr; ++i)
        out.emplace_back(i->if_name);
    if_freenameindex(list);
    return out;
}

std::string local_registry_id(const std::string& cluster, const std::string& cluster_dir) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", stable_hash(cluster_dir));
    return cluster + "." + hex;
}

std::optional<std::string> moved_state_folder(const std::string& cluster, const std::string& recorded,
                                              const std::string& cluster_dir, const std::string& users_dir) {
    if (recorded.empty()) return std::nullopt;
    // The same folder by another spelling (a symlink, a relative --state-dir) was not moved.
    auto canonical = [](const std::string& p) {
        std::error_code ec;
        auto c = std::filesystem::weakly_canonical(p, ec);
        return ec ? p : c.string();
    };
    if (canonical(recorded) == canonical(cluster_dir)) return std::nullopt;
    if (path_exists(recorded + "/state.json")) return std::nullopt;
    if (!path_exists(users_dir + "/" + local_registry_id(cluster, recorded))) return std::nullopt;
    return recorded;
}

std::vector<RegistryRecord> registry_records(const std::string& users_dir) {
    std::vector<RegistryRecord> out;
    std::error_code ec;
    if (!std::filesystem::is_directory(users_dir, ec)) return out;
    for (const auto& e : std::filesystem::directory_iterator(users_dir, ec)) {
        auto text = read_file_limited(e.path().string(), std::size_t{1024} * 1024);
        if (!text) continue;
        auto j = nlohmann::json::parse(*text, nullptr, false);
        if (j.is_object()) out.push_back({e.path().filename().string(), std::move(j)});
    }
    return out;
}

std::optional<std::uint32_t> allocate_tag_salt(const std::string& cluster, const std::string& own_id,
                                               const std::vector<RegistryRecord>& records,
                                               const std::vector<std::string>& links) {
    std::set<std::string> taken;
    for (const auto& r : records) {
        if (r.id == own_id || !r.record.contains("plan")) continue;
        for (const auto& link : plan_links(r.record["plan"]))
            if (auto t = tag_of_link(link); !t.empty()) taken.insert(t);
    }
    for (const auto& link : links)
        if (auto t = tag_of_link(link); !t.empty()) taken.insert(t);
    return free_tag_salt(cluster, taken);
}

} // namespace ddl
