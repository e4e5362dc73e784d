#pragma once
// The local target's layout, derived only from the spec: names and addresses are stable for a given
// cluster name, and two clusters with different names get different subnets, bridges and namespaces.
#include "spec/Spec.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl {

struct LocalNodePlan {
    std::string name;      // master, worker1, ...
    std::string address;   // on the cluster bridge
    std::string netns;     // network namespace name
    std::string veth_host; // end in the root namespace, enslaved to the bridge
    std::string veth_node; // end inside the namespace (renamed eth0 there)
};

struct LocalPlan {
    std::string cluster;
    std::string subnet;
    int prefix = 24;
    std::string bridge;
    std::string bridge_address;
    std::uint64_t bandwidth_bps = 0;
    std::vector<LocalNodePlan> nodes;

    static LocalPlan from_spec(const Spec& spec);
    nlohmann::json to_json() const;
    static LocalPlan from_json(const nlohmann::json& j);
};

// Stable 32-bit FNV-1a hash: the seed of every derived name and subnet.
std::uint32_t stable_hash(const std::string& text);

} // namespace ddl
