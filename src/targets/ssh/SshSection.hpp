#pragma once
// The ssh target's section (`ssh:`): machines that exist already, reached over SSH (optionally through a
// jump host).
#include "spec/TargetKind.hpp"

#include <string>
#include <vector>

namespace ddl {

struct SshHost {
    std::string name;
    std::string address;
    int port = 22;
    std::string user;            // empty: access.user
    std::string key;             // empty: cluster key
    std::string jump;            // another host's name or user@host:port
    std::string private_address; // how the other hosts reach it; empty: address
    int gpus = -1;               // -1: probe
};

struct SshTargetSpec : TargetSection {
    std::vector<SshHost> hosts;

    std::unique_ptr<TargetSection> clone() const override { return std::make_unique<SshTargetSpec>(*this); }
    nlohmann::json to_json() const override;
    std::optional<int> node_count(const Spec&) const override { return static_cast<int>(hosts.size()); }
    std::optional<int> expected_gpus(const Spec&, const std::string& node,
                                     const std::string&) const override {
        for (const auto& h : hosts)
            if (h.name == node) return h.gpus > 0 ? h.gpus : 0;
        return 0;
    }
};

const TargetKind& ssh_kind();
// The `ssh:` part (with access) of `ddl init --target ssh`.
std::string ssh_starter_body();

} // namespace ddl
