#pragma once
// Reading a GENI v3 manifest RSpec (what jFed saves once a slice is ready): per node its client id, its
// SSH logins (services/login) and host addresses, and its interfaces' IPs. A pure function of the text,
// with no knowledge of ddl's nodes, so it can be fuzzed on its own; matching it to a cluster is
// nodes_from_manifest's job.
#include "util/Result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ddl {

struct ManifestLogin {
    std::string authentication; // "ssh-keys"
    std::string hostname;       // may be a DNS name, an IPv4 or an IPv6 address; may be empty
    int port = 22;
    std::string username;
};

struct ManifestIp {
    std::string address;
    std::string netmask;
    std::string type; // ipv4 | ipv6
};

struct ManifestInterface {
    std::string client_id;
    std::string mac_address;
    std::vector<ManifestIp> ips;
};

struct ManifestNode {
    std::string client_id;
    std::string component_id;
    std::string component_manager_id;
    std::string sliver_id;
    std::vector<ManifestLogin> logins;
    std::string host_name; // <host name=...> : the node's control-network name
    std::string host_ipv4;
    std::string host_ipv6;
    std::vector<ManifestInterface> interfaces;
};

struct Manifest {
    std::vector<ManifestNode> nodes;
};

// Parses a manifest. An Error names what is wrong and where (node client id, attribute): not XML, not an
// RSpec, a request instead of a manifest, a node without client_id, a port that is not 1-65535, an
// address that is not an address.
Result<Manifest> parse_manifest(std::string_view xml);

} // namespace ddl
