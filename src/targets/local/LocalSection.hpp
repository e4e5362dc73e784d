#pragma once
// The local target's section (`local:`): N nodes on this machine as network namespaces or containers.
#include "spec/TargetKind.hpp"

#include <cstdint>
#include <string>

namespace ddl {

struct LocalSpec : TargetSection {
    int nodes = 2;
    std::string subnet;                  // empty: derived from the cluster name
    std::uint64_t bandwidth_bps = 0;     // 0: unshaped
    std::string nodes_as = "namespaces"; // namespaces | containers
    // Cloud-like layout: only the master on the machine's bridge; workers on a private bridge that only
    // the master reaches, so everything goes through it as a bastion (ProxyJump).
    bool bastion = false;
    // Container nodes: their image (empty: ddl builds a Debian 12 one with debootstrap), the Debian
    // mirror for that build, and an apt proxy for the nodes (empty: ddl runs apt-cacher-ng on the bridge).
    std::string image;
    std::string mirror = "http://deb.debian.org/debian";
    std::string apt_proxy;
    // Address family of the cluster network: ipv4 (default), dual (a ULA IPv6 /64 beside the IPv4 subnet;
    // ddl still reaches nodes over IPv4) or ipv6 (IPv6-only nodes: ddl, Ansible and the ranks use IPv6).
    std::string ip_family = "ipv4";

    std::unique_ptr<TargetSection> clone() const override { return std::make_unique<LocalSpec>(*this); }
    nlohmann::json to_json() const override;
    std::optional<int> node_count(const Spec&) const override { return nodes; }
    bool add_spare_nodes(int n) override {
        nodes += n;
        return true;
    }
    std::optional<int> expected_gpus(const Spec&, const std::string&, const std::string&) const override {
        return 0;
    }
    std::string nodes_are() const override { return nodes_as; }
    std::uint64_t link_rate_bps() const override { return bandwidth_bps; }
    // crun cannot run containers on this machine (no CAP_SYS_RESOURCE, hybrid cgroups): podman uses runc.
    std::vector<std::string> engine_options(const std::string& engine) const override {
        if (engine == "podman") return {"--runtime", "runc"};
        return {};
    }
};

const TargetKind& local_kind();
// The `local:` part of `ddl init --target local`.
std::string local_starter_body();

} // namespace ddl
