#include "targets/local/LocalSubnets.hpp"

#include "util/Files.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <filesystem>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>

namespace ddl {

namespace {

const char* k_pick =
    "pick another local.subnet (e.g. 10.231.0.0/24) that no interface of this machine and no "
    "other local cluster uses";

std::vector<Cidr> plan_networks(const LocalPlan& plan) {
    std::vector<Cidr> out;
    for (const auto* s : {&plan.subnet, &plan.private_subnet, &plan.subnet6})
        if (auto c = parse_cidr(*s)) out.push_back(*c);
    return out;
}

int prefix_of(const sockaddr* mask) {
    int bits = 0;
    const auto* bytes = mask->sa_family == AF_INET
                            ? reinterpret_cast<const std::uint8_t*>(
                                  &reinterpret_cast<const sockaddr_in*>(mask)->sin_addr) // NOLINT
                            : reinterpret_cast<const std::uint8_t*>(
                                  &reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr); // NOLINT
    const int len = mask->sa_family == AF_INET ? 4 : 16;
    for (int i = 0; i < len; ++i)
        bits += __builtin_popcount(bytes[i]);
    return bits;
}

} // namespace

std::optional<std::string> subnet_clash(const LocalPlan& plan, const std::vector<HostNetwork>& host,
                                        const std::vector<RegisteredSubnets>& others) {
    const auto mine = plan_networks(plan);
    for (const auto& o : others) {
        for (const auto& s : o.subnets) {
            auto theirs = parse_cidr(s);
            if (!theirs) continue;
            for (const auto& m : mine)
                if (cidr_overlap(m, *theirs))
                    return "local.subnet " + m.text() + " overlaps " + theirs->text() +
                           " of the local cluster " + o.cluster + " (deployed from " + o.state_dir +
                           ")\nhint: " + k_pick;
        }
    }
    for (const auto& h : host) {
        if (h.interface == plan.bridge ||
            (!plan.private_bridge.empty() && h.interface == plan.private_bridge))
            continue;
        const bool other_cluster = std::any_of(others.begin(), others.end(), [&](const RegisteredSubnets& o) {
            return std::find(o.bridges.begin(), o.bridges.end(), h.interface) != o.bridges.end();
        });
        if (other_cluster) continue; // named above by its subnet
        for (const auto& m : mine)
            if (cidr_overlap(m, h.network))
                return "local.subnet " + m.text() + " overlaps this machine's network " + h.network.text() +
                       " (" + h.address + " on " + h.interface + ")\nhint: " + k_pick +
                       (h.interface.rfind("ddl", 0) == 0
                            ? "; " + h.interface +
                                  " is a bridge of a local cluster whose record is gone: "
                                  "`ddl gc --older-than 0s` removes it"
                            : "");
    }
    return std::nullopt;
}

std::vector<HostNetwork> host_networks() {
    std::vector<HostNetwork> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_netmask == nullptr) continue;
        const int family = i->ifa_addr->sa_family;
        if (family != AF_INET && family != AF_INET6) continue;
        char buf[INET6_ADDRSTRLEN] = {};
        const void* a =
            family == AF_INET
                ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr)
                : static_cast<const void*>(
                      &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr); // NOLINT
        inet_ntop(family, a, buf, sizeof buf);
        const std::string text = std::string(buf) + "/" + std::to_string(prefix_of(i->ifa_netmask));
        auto c = parse_cidr(text);
        if (!c) continue;
        // A link-local IPv6 address (fe80::/10) is on every interface and routes nowhere.
        if (c->v6 && c->addr[0] == 0xfe && (c->addr[1] & 0xc0) == 0x80) continue;
        out.push_back({i->ifa_name, text, cidr_network(*c)});
    }
    freeifaddrs(list);
    return out;
}

std::vector<RegisteredSubnets> registered_subnets(const std::string& registry_users,
                                                  const std::string& own_cluster) {
    std::vector<RegisteredSubnets> out;
    std::error_code ec;
    if (!std::filesystem::is_directory(registry_users, ec)) return out;
    for (const auto& e : std::filesystem::directory_iterator(registry_users, ec)) {
        auto text = read_file_limited(e.path().string(), std::size_t{1024} * 1024);
        if (!text) continue;
        auto j = nlohmann::json::parse(*text, nullptr, false);
        if (!j.is_object() || !j.contains("plan") || !j["plan"].is_object()) continue;
        const std::string dir = j.value("cluster_dir", "");
        // This name's own record (another folder's record of it is refused before, by owner_elsewhere).
        if (dir.empty() || j.value("cluster", "") == own_cluster) continue;
        const auto& p = j["plan"];
        RegisteredSubnets r{
            j.value("cluster", ""), std::filesystem::path(dir).parent_path().string(), {}, {}};
        for (const char* key : {"subnet", "private_subnet", "subnet6"})
            if (p.contains(key) && p[key].is_string() && !p[key].get<std::string>().empty())
                r.subnets.push_back(p[key].get<std::string>());
        for (const char* key : {"bridge", "private_bridge"})
            if (p.contains(key) && p[key].is_string() && !p[key].get<std::string>().empty())
                r.bridges.push_back(p[key].get<std::string>());
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace ddl
