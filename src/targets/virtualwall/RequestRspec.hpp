#pragma once
// The GENI v3 request RSpec for the imec Virtual Wall: one raw-pc node per cluster node (bare metal, with
// the spec's disk image and hardware type) and one LAN joining them whose capacity is set per direction in
// kbit/s. jFed (GUI or experimenter CLI) reads it to create the slice. Pure: same spec, same bytes.
#include "targets/virtualwall/VirtualwallSection.hpp"

#include <string>
#include <vector>

namespace ddl {

struct RspecNode {
    std::string client_id; // master, worker1, ...; also ddl's node name
    std::string hardware_type;
    std::string lan_address; // the node's address on the experiment LAN
};

// "wall1.ilabt.iminds.be" / "wall2.ilabt.iminds.be".
std::string virtualwall_authority(const std::string& testbed);
// "urn:publicid:IDN+wall2.ilabt.iminds.be+authority+cm".
std::string virtualwall_cm_urn(const std::string& testbed);

// The nodes the RSpec requests, in order (master first).
std::vector<RspecNode> rspec_nodes(const Spec& spec);
// Netmask of the experiment LAN (a /22: room for the 257 nodes a spec allows).
const char* rspec_lan_netmask();

// The request RSpec document (UTF-8 XML).
std::string render_request_rspec(const Spec& spec);

} // namespace ddl
