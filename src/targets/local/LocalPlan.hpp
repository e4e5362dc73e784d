#pragma once
// The local target's layout, derived from the spec: names and addresses are stable for a given cluster
// name. The bridges' and veths' names carry a 24-bit tag of the name's hash, which two names can share
// (rt-c6481 and rt-c15740 do): provision picks the tag under the machine-wide lock (LocalNames.hpp) and
// records it, as tag_salt, in the plan every later command reads.
#include "targets/local/LocalSection.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl {

struct LocalNodePlan {
    std::string name;    // master, worker1, ...
    std::string address; // where ddl reaches it: the cluster bridge, or the private one behind a bastion
    std::string private_address; // where the other nodes reach it (== address without a bastion)
    std::string address6;        // ip_family dual: its IPv6 address (ipv6: == address; ipv4: empty)
    std::string netns;           // network namespace name
    std::string veth_host;       // end in the root namespace, enslaved to a bridge
    std::string veth_node;       // end inside the namespace (renamed eth0 there)
    // Bastion layout, master only: its second link, on the private bridge (eth1 inside).
    std::string veth2_host;
    std::string veth2_node;
    bool behind_bastion = false; // only on the private bridge (eth0 there)
    std::string container;       // container nodes: the podman container's name (== netns)
};

struct LocalPlan {
    std::string cluster;
    // 0: the tag is the name's hash; n: the hash of "<name>/<n>", the first free one at provision.
    std::uint32_t tag_salt = 0;
    std::string subnet;
    int prefix = 24;
    std::string bridge;
    std::string bridge_address;
    std::uint64_t bandwidth_bps = 0;
    bool bastion = false;
    std::string
        private_subnet; // bastion layout: the workers' network; the root namespace has no address on it
    std::string private_bridge;
    std::vector<LocalNodePlan> nodes;
    // local.nodes_as: containers (each node a podman container running systemd in its namespace)
    bool containers = false;
    std::string image;     // the nodes' image
    std::string mirror;    // Debian mirror for building the default image
    std::string apt_proxy; // what the nodes' apt uses; ddl runs one on the bridge when the spec names none
    bool own_apt_proxy = false;
    // local.ip_family: ipv4 | dual | ipv6. Beside IPv4, a ULA /64 (RFC 4193 fd00::/8) derived from the name.
    std::string ip_family = "ipv4";
    std::string subnet6;         // e.g. fd3a:12:3456::/64
    std::string bridge_address6; // ...::1
    bool has_ipv4() const { return ip_family != "ipv6"; }
    bool has_ipv6() const { return ip_family != "ipv4"; }
    // Every address of a node (the mesh key's from= list, the pinned host names, sshd's ListenAddress).
    static std::vector<std::string> addresses(const LocalNodePlan& n);

    // `tag_salt` as provision allocated it (recorded in the state); only the link names depend on it.
    static LocalPlan from_spec(const Spec& spec, std::uint32_t tag_salt = 0);
    nlohmann::json to_json() const;
    static LocalPlan from_json(const nlohmann::json& j);
};

// Stable 32-bit FNV-1a hash: the seed of every derived name and subnet.
std::uint32_t stable_hash(const std::string& text);

// The six hex digits a cluster's bridges and veths carry (ddlbr-TAG, ddlTAGh0): from the name's hash, or
// with a salt from the hash of "<name>/<salt>".
std::string link_tag(const std::string& cluster, std::uint32_t salt);

// The image ddl builds for container nodes when the spec names none; the suffix changes with its recipe.
inline constexpr const char* k_default_node_image = "localhost/ddl-node:bookworm-1";
inline constexpr int k_apt_proxy_port = 3142;

} // namespace ddl
