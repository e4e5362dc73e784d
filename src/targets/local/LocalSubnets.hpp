#pragma once
// Whether a local cluster's networks would clash with what this machine already routes: another local
// cluster's subnet (its record in the machine-wide registry) or an address of one of this machine's own
// interfaces. Two networks on one machine that overlap make its routes ambiguous: nodes of one would
// answer for the other, or this machine would lose its own network.
#include "targets/local/LocalPlan.hpp"
#include "util/Net.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddl {

struct HostNetwork {
    std::string interface; // e.g. eth0
    std::string address;   // e.g. 10.0.2.15/24
    Cidr network;          // e.g. 10.0.2.0/24
};

struct RegisteredSubnets {
    std::string cluster;
    std::string state_dir;            // the state folder that deployed it
    std::vector<std::string> subnets; // its cluster network, and its private one in the bastion layout
    std::vector<std::string> bridges; // the interfaces that carry them on this machine
};

// The first clash of the plan's networks with `others` (clusters of other state folders) or with `host`
// (this machine's interfaces, the plan's own bridges excepted), as an error message with a hint; none if
// every network is free.
std::optional<std::string> subnet_clash(const LocalPlan& plan, const std::vector<HostNetwork>& host,
                                        const std::vector<RegisteredSubnets>& others);

// Every address on this machine's interfaces (getifaddrs), loopback included.
std::vector<HostNetwork> host_networks();

// The networks of every cluster recorded in `registry_users` except the one deployed from `own_dir`.
std::vector<RegisteredSubnets> registered_subnets(const std::string& registry_users,
                                                  const std::string& own_dir);

} // namespace ddl
