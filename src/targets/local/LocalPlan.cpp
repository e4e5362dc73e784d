#include "targets/local/LocalPlan.hpp"

#include "util/Net.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdio>
#include <optional>

namespace ddl {

std::uint32_t stable_hash(const std::string& text) {
    std::uint32_t h = 2166136261u;
    // Bytes as unsigned (FNV-1a over the UTF-8 bytes), the same on every platform whatever char's sign.
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

std::string link_tag(const std::string& cluster, std::uint32_t salt) {
    const std::uint32_t h = stable_hash(salt == 0 ? cluster : cluster + "/" + std::to_string(salt));
    char tag[16];
    std::snprintf(tag, sizeof tag, "%06x", h & 0xffffff);
    return tag;
}

namespace {

// Address `host` of the ULA /64 fdd1:HHHH:HHHH::/64 made from the name's hash, as inet_ntop writes it
// (the form `ip addr show` prints, so a re-run finds the address it added).
std::string ula_host(std::uint32_t h, std::uint16_t host) {
    std::uint8_t a[16] = {0xfd, 0xd1};
    for (int i = 0; i < 4; ++i)
        a[2 + i] = static_cast<std::uint8_t>(h >> (24 - 8 * i));
    a[14] = static_cast<std::uint8_t>(host >> 8);
    a[15] = static_cast<std::uint8_t>(host & 0xff);
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, a, buf, sizeof buf);
    return buf;
}

} // namespace

std::vector<std::string> LocalPlan::addresses(const LocalNodePlan& n) {
    std::vector<std::string> out{n.address};
    for (const auto* a : {&n.private_address, &n.address6}) {
        if (!a->empty() && std::find(out.begin(), out.end(), *a) == out.end()) out.push_back(*a);
    }
    return out;
}

LocalPlan LocalPlan::from_spec(const Spec& spec, std::uint32_t tag_salt) {
    LocalPlan p;
    p.cluster = spec.name;
    p.tag_salt = tag_salt;
    std::uint32_t h = stable_hash(spec.name);
    if (spec.target_section<LocalSpec>().subnet.empty()) {
        // 10.200.0.0/24 - 10.255.255.0/24: away from common LAN and container ranges.
        p.subnet =
            "10." + std::to_string(200 + (h >> 16) % 56) + "." + std::to_string((h >> 8) & 255) + ".0/24";
    } else {
        p.subnet = spec.target_section<LocalSpec>().subnet;
    }
    auto cidr = *parse_cidr(p.subnet);
    p.prefix = cidr.prefix;
    const std::string tag = link_tag(spec.name, tag_salt);
    p.bridge = std::string("ddlbr-") + tag;
    p.bridge_address = cidr.v4_host(1);
    p.bandwidth_bps = spec.target_section<LocalSpec>().bandwidth_bps;
    p.bastion = spec.target_section<LocalSpec>().bastion;
    p.ip_family = spec.target_section<LocalSpec>().ip_family;
    if (p.has_ipv6()) {
        p.subnet6 = ula_host(h, 0) + "/64";
        p.bridge_address6 = ula_host(h, 1);
    }
    std::optional<Cidr> priv;
    if (p.bastion) {
        // 172.16.0.0/12: a different range from the bridges, so no route of the machine covers it.
        p.private_subnet =
            "172." + std::to_string(16 + (h >> 12) % 16) + "." + std::to_string((h >> 4) & 255) + ".0/24";
        p.private_bridge = std::string("ddlpb-") + tag;
        priv = parse_cidr(p.private_subnet);
    }
    for (int i = 0; i < spec.target_section<LocalSpec>().nodes; ++i) {
        LocalNodePlan n;
        n.name = i == 0 ? "master" : "worker" + std::to_string(i);
        auto host = static_cast<std::uint32_t>(10 + i + 1);
        n.netns = "ddl-" + spec.name + "-" + n.name;
        n.veth_host = std::string("ddl") + tag + "h" + std::to_string(i);
        n.veth_node = std::string("ddl") + tag + "n" + std::to_string(i);
        if (!p.bastion) {
            n.address = n.private_address = cidr.v4_host(host);
        } else if (i == 0) {
            n.address = cidr.v4_host(host);
            n.private_address = priv->v4_host(host);
            n.veth2_host = std::string("ddl") + tag + "p" + std::to_string(i);
            n.veth2_node = std::string("ddl") + tag + "q" + std::to_string(i);
        } else {
            n.address = n.private_address = priv->v4_host(host);
            n.behind_bastion = true;
        }
        if (p.has_ipv6()) {
            // Hex 0x11.. like the IPv4 hosts' .11..: master is ::11 beside 10.x.y.11.
            n.address6 = ula_host(h, static_cast<std::uint16_t>(0x11 + i));
            if (!p.has_ipv4()) n.address = n.private_address = n.address6;
        }
        if (spec.target_section<LocalSpec>().nodes_as == "containers") n.container = n.netns;
        p.nodes.push_back(n);
    }
    if (spec.target_section<LocalSpec>().nodes_as == "containers") {
        p.containers = true;
        p.image = spec.target_section<LocalSpec>().image.empty() ? k_default_node_image
                                                                 : spec.target_section<LocalSpec>().image;
        p.mirror = spec.target_section<LocalSpec>().mirror;
        p.own_apt_proxy = spec.target_section<LocalSpec>().apt_proxy.empty();
        p.apt_proxy = p.own_apt_proxy ? "http://" + p.bridge_address + ":" + std::to_string(k_apt_proxy_port)
                                      : spec.target_section<LocalSpec>().apt_proxy;
    }
    return p;
}

nlohmann::json LocalPlan::to_json() const {
    nlohmann::json nodes_json = nlohmann::json::array();
    for (const auto& n : nodes) {
        nlohmann::json j{{"name", n.name},           {"address", n.address},
                         {"netns", n.netns},         {"veth_host", n.veth_host},
                         {"veth_node", n.veth_node}, {"private_address", n.private_address}};
        if (!n.veth2_host.empty()) {
            j["veth2_host"] = n.veth2_host;
            j["veth2_node"] = n.veth2_node;
        }
        if (n.behind_bastion) j["behind_bastion"] = true;
        if (!n.address6.empty()) j["address6"] = n.address6;
        if (!n.container.empty()) j["container"] = n.container;
        nodes_json.push_back(j);
    }
    nlohmann::json j{{"cluster", cluster},
                     {"subnet", subnet},
                     {"prefix", prefix},
                     {"bridge", bridge},
                     {"bridge_address", bridge_address},
                     {"bandwidth", format_rate(bandwidth_bps)},
                     {"nodes", nodes_json}};
    if (containers) {
        j["containers"] = true;
        j["image"] = image;
        j["mirror"] = mirror;
        j["apt_proxy"] = apt_proxy;
        j["own_apt_proxy"] = own_apt_proxy;
    }
    if (tag_salt != 0) j["tag_salt"] = tag_salt;
    if (has_ipv6()) {
        j["ip_family"] = ip_family;
        j["subnet6"] = subnet6;
        j["bridge_address6"] = bridge_address6;
    }
    if (bastion) {
        j["bastion"] = true;
        j["private_subnet"] = private_subnet;
        j["private_bridge"] = private_bridge;
    }
    return j;
}

LocalPlan LocalPlan::from_json(const nlohmann::json& j) {
    LocalPlan p;
    p.cluster = j.at("cluster");
    p.subnet = j.at("subnet");
    p.prefix = j.at("prefix");
    p.tag_salt = j.value("tag_salt", std::uint32_t{0});
    p.bridge = j.at("bridge");
    p.bridge_address = j.at("bridge_address");
    p.bandwidth_bps = parse_rate(j.at("bandwidth").get<std::string>()).value_or(0);
    p.bastion = j.value("bastion", false);
    p.private_subnet = j.value("private_subnet", "");
    p.private_bridge = j.value("private_bridge", "");
    p.containers = j.value("containers", false);
    p.image = j.value("image", "");
    p.mirror = j.value("mirror", "");
    p.apt_proxy = j.value("apt_proxy", "");
    p.own_apt_proxy = j.value("own_apt_proxy", false);
    p.ip_family = j.value("ip_family", "ipv4");
    p.subnet6 = j.value("subnet6", "");
    p.bridge_address6 = j.value("bridge_address6", "");
    for (const auto& n : j.at("nodes")) {
        LocalNodePlan np{.name = n.at("name"),
                         .address = n.at("address"),
                         .private_address = n.value("private_address", n.at("address").get<std::string>()),
                         .address6 = n.value("address6", ""),
                         .netns = n.at("netns"),
                         .veth_host = n.at("veth_host"),
                         .veth_node = n.at("veth_node"),
                         .veth2_host = n.value("veth2_host", ""),
                         .veth2_node = n.value("veth2_node", ""),
                         .behind_bastion = n.value("behind_bastion", false),
                         .container = n.value("container", "")};
        p.nodes.push_back(np);
    }
    return p;
}

} // namespace ddl
