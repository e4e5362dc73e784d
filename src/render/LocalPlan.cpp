#include "render/LocalPlan.hpp"

#include "util/Net.hpp"

#include <cstdio>

namespace ddl {

std::uint32_t stable_hash(const std::string& text) {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : text) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

LocalPlan LocalPlan::from_spec(const Spec& spec) {
    LocalPlan p;
    p.cluster = spec.name;
    std::uint32_t h = stable_hash(spec.name);
    if (spec.local.subnet.empty()) {
        // 10.200.0.0/24 - 10.255.255.0/24: away from common LAN and container ranges.
        p.subnet =
            "10." + std::to_string(200 + (h >> 16) % 56) + "." + std::to_string((h >> 8) & 255) + ".0/24";
    } else {
        p.subnet = spec.local.subnet;
    }
    auto cidr = *parse_cidr(p.subnet);
    p.prefix = cidr.prefix;
    char tag[16];
    std::snprintf(tag, sizeof tag, "%06x", h & 0xffffff);
    p.bridge = std::string("ddlbr-") + tag;
    p.bridge_address = cidr.v4_host(1);
    p.bandwidth_bps = spec.local.bandwidth_bps;
    for (int i = 0; i < spec.local.nodes; ++i) {
        LocalNodePlan n;
        n.name = i == 0 ? "master" : "worker" + std::to_string(i);
        n.address = cidr.v4_host(static_cast<std::uint32_t>(10 + i + 1));
        n.netns = "ddl-" + spec.name + "-" + n.name;
        n.veth_host = std::string("ddl") + tag + "h" + std::to_string(i);
        n.veth_node = std::string("ddl") + tag + "n" + std::to_string(i);
        p.nodes.push_back(n);
    }
    return p;
}

nlohmann::json LocalPlan::to_json() const {
    nlohmann::json nodes_json = nlohmann::json::array();
    for (const auto& n : nodes)
        nodes_json.push_back({{"name", n.name},
                              {"address", n.address},
                              {"netns", n.netns},
                              {"veth_host", n.veth_host},
                              {"veth_node", n.veth_node}});
    return {{"cluster", cluster},
            {"subnet", subnet},
            {"prefix", prefix},
            {"bridge", bridge},
            {"bridge_address", bridge_address},
            {"bandwidth", format_rate(bandwidth_bps)},
            {"nodes", nodes_json}};
}

LocalPlan LocalPlan::from_json(const nlohmann::json& j) {
    LocalPlan p;
    p.cluster = j.at("cluster");
    p.subnet = j.at("subnet");
    p.prefix = j.at("prefix");
    p.bridge = j.at("bridge");
    p.bridge_address = j.at("bridge_address");
    p.bandwidth_bps = parse_rate(j.at("bandwidth").get<std::string>()).value_or(0);
    for (const auto& n : j.at("nodes"))
        p.nodes.push_back(
            {n.at("name"), n.at("address"), n.at("netns"), n.at("veth_host"), n.at("veth_node")});
    return p;
}

} // namespace ddl
