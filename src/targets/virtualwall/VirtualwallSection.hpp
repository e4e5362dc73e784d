#pragma once
// The virtualwall target's section (`virtualwall:`): the imec Virtual Wall testbed, its project, hardware,
// disk image and links, and how ddl reaches the nodes.
#include "spec/TargetKind.hpp"

#include <cstdint>
#include <string>

namespace ddl {

struct VirtualwallSpec : TargetSection {
    std::string testbed = "wall2";
    std::string project;
    std::string hardware_type = "gpunode";
    std::string disk_image;
    std::uint64_t link_capacity_bps = 10'000'000'000ULL;
    // How ddl gets the nodes: slices (SLICES Basic Infrastructure through the `slices` CLI; the default of a
    // spec without GENI keys), geni (the AM API v3 and the slice authority, itself) or jfed-cli (jFed's
    // experimenter CLI 1 at jfed_cli). With geni, `ddl deploy --manifest FILE` takes a jFed GUI manifest.
    std::string client = "slices";
    // client: slices. The BI site, the experiment holding the nodes (empty: ddl-<cluster>), the default
    // flavor of node groups without one, the disk image, the resources' lifetime (<n>m|h|d|w; renewed with
    // `ddl renew`) and the CLI.
    std::string site = "be-gent1-bi-baremetal1";
    std::string experiment;
    std::string flavor = "pcgen05-gpu5090";
    std::string image = "Ubuntu 22.04.5";
    std::string duration = "1d";
    std::string slices_cli = "slices";
    std::string jfed_cli;  // path to the experimenter CLI jar/wrapper (client: jfed-cli)
    std::string login_pem; // the iLab.t login (certificate + key): the TLS client certificate, jFed's `-p`
    // GENI endpoints; empty: the defaults for testbed (am_url) and the certificate's authority (sa/ma).
    std::string am_url;
    std::string sa_url;
    std::string ma_url;
    std::string ca_file; // CA bundle to verify the AM/SA/MA servers with; empty: the system's
    // IPv4 egress: the nodes have a private IPv4 address on the control network and reach the IPv4
    // internet (Docker Hub, NVIDIA's registry, some apt mirrors) only after the testbed's NAT script ran.
    bool enable_nat = true;
    std::string nat_script_url = "https://www.wall2.ilabt.iminds.be/enable-nat.sh";
    int expiry_hours = 24;
    std::string slice; // GENI slice name; empty: the cluster name (which must then fit the slice rules)
    // Which manifest address ddl uses for SSH: hostname (the login's DNS name, which resolves to the node's
    // public IPv6 address: Virtual Wall "Network", "Access through SSH"), ipv6 (`host@ipv6`), ipv4.
    std::string connect_via = "hostname";

    // The slice ddl creates/deletes: `slice`, or the cluster name.
    std::string slice_name(const std::string& cluster) const { return slice.empty() ? cluster : slice; }
    // The SLICES experiment ddl creates or joins: `experiment`, or ddl-<cluster>.
    std::string experiment_name(const std::string& cluster) const {
        return experiment.empty() ? "ddl-" + cluster : experiment;
    }

    std::unique_ptr<TargetSection> clone() const override { return std::make_unique<VirtualwallSpec>(*this); }
    nlohmann::json to_json() const override;
    std::uint64_t link_rate_bps() const override { return link_capacity_bps; }
    nlohmann::json ansible_vars() const override {
        return {{"ddl_enable_nat", enable_nat && client != "slices"}, {"ddl_nat_script_url", nat_script_url}};
    }
};

const TargetKind& virtualwall_kind();
// The `virtualwall:` part (with nodes) of `ddl init --target virtualwall`.
std::string virtualwall_starter_body();

} // namespace ddl
