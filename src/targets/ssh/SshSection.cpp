#include "targets/ssh/SshSection.hpp"

#include "spec/SpecLoader.hpp"
#include "util/Net.hpp"

#include <algorithm>
#include <map>
#include <regex>

namespace ddl {

nlohmann::json SshTargetSpec::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& h : hosts)
        list.push_back({{"name", h.name},
                        {"address", h.address},
                        {"port", h.port},
                        {"user", h.user},
                        {"key", h.key},
                        {"jump", h.jump},
                        {"private_address", h.private_address},
                        {"gpus", h.gpus}});
    return {{"hosts", list}};
}

namespace {

class SshKind : public TargetKind {
public:
    std::optional<Refusal> refuse_stop() const override {
        return Refusal{"autostop.action: stop is not available on target ssh: the ssh target's hosts are not "
                       "ddl's to power off and on again",
                       "use action: destroy (it removes what ddl put on the hosts), or no autostop"};
    }
    std::string name() const override { return "ssh"; }
    std::unique_ptr<TargetSection> defaults() const override { return std::make_unique<SshTargetSpec>(); }
    std::string starter_body() const override { return ssh_starter_body(); }
    std::string node_count_hint() const override { return "list the machines under ssh.hosts"; }
    std::optional<Refusal> refuse_spares() const override {
        return Refusal{"nodes.spares does not apply to target ssh: ssh.hosts are the machines, and ddl "
                       "makes none",
                       "list the spare machine under ssh.hosts and `ddl cordon` it until it is needed"};
    }

    void parse(SectionReader& r, const YAML::Node& n, Spec& spec) const override {
        const std::string p = "ssh";
        auto& sec = spec.target_section<SshTargetSpec>();
        r.check_keys(n, p, {"hosts"});
        auto hosts = r.child(n, "hosts", p, true, "list the machines, e.g. hosts: [{address: 192.0.2.10}]");
        if (!hosts.IsDefined()) return;
        if (!hosts.IsSequence() || hosts.size() == 0) {
            r.diags().error(
                r.pos(hosts),
                "ssh.hosts must be a non-empty list of hosts (got " +
                    (hosts.IsSequence() ? std::string("an empty list") : YamlReader::describe(hosts)) + ")",
                "e.g. hosts: [{name: master, address: 192.0.2.10}]");
            return;
        }
        if (hosts.size() > 1024) {
            r.diags().error(r.pos(hosts),
                            "ssh.hosts lists " + std::to_string(hosts.size()) + " hosts; at most 1024");
            return;
        }
        std::map<std::string, std::size_t> names, addresses;
        for (std::size_t i = 0; i < hosts.size(); ++i) {
            std::string hp = "ssh.hosts[" + std::to_string(i) + "]";
            auto h = hosts[i];
            if (!r.expect_map(h, hp)) continue;
            r.check_keys(h, hp,
                         {"name", "address", "private_address", "port", "user", "key", "jump", "gpus"});
            SshHost host;
            host.name = "host" + std::to_string(i + 1);
            if (auto x = r.string(h, "name", hp)) {
                if (!is_dns_label(*x, 63))
                    r.diags().error(r.pos(h["name"]), hp + ".name must be DNS-safe (got \"" +
                                                          SectionReader::printable(*x) + "\")");
                else
                    host.name = *x;
            }
            if (auto x = r.string(h, "address", hp, true, "an IP address or host name")) {
                host.address = *x;
                if (!is_host_address(*x))
                    r.diags().error(r.pos(h["address"]),
                                    hp + ".address must be an IP address or host name (got \"" +
                                        SectionReader::printable(*x) + "\")",
                                    "e.g. 192.0.2.10, 2001:db8::10 or gpu1.example.org");
                else if (auto [it, fresh] = addresses.emplace(*x, i); !fresh)
                    r.diags().error(r.pos(h["address"]),
                                    hp + ".address repeats ssh.hosts[" + std::to_string(it->second) + "]",
                                    "list each machine once");
            }
            if (auto [it, fresh] = names.emplace(host.name, i); !fresh)
                r.diags().error(r.pos(h["name"].IsDefined() ? h["name"] : h),
                                "duplicate host name \"" + host.name + "\" (also ssh.hosts[" +
                                    std::to_string(it->second) + "])",
                                "give every host its own name");
            if (auto x = r.string(h, "private_address", hp)) {
                if (!is_host_address(*x))
                    r.diags().error(
                        r.pos(h["private_address"]),
                        hp + ".private_address must be an IP address or host name (got \"" +
                            SectionReader::printable(*x) + "\")",
                        "the address the other hosts reach this one at; leave it out when that is address");
                else
                    host.private_address = *x;
            }
            if (auto x = r.integer(h, "port", hp, 1, 65535)) host.port = static_cast<int>(*x);
            if (auto x = r.string(h, "user", hp)) host.user = *x;
            r.key_file(h, "key", hp, host.key);
            if (auto x = r.string(h, "jump", hp)) host.jump = *x;
            if (auto x = r.integer(h, "gpus", hp, 0, 16)) host.gpus = static_cast<int>(*x);
            sec.hosts.push_back(host);
        }
        for (std::size_t i = 0; i < sec.hosts.size(); ++i) {
            const auto& j = sec.hosts[i].jump;
            if (j.empty()) continue;
            if (j.find('@') != std::string::npos || j.find(':') != std::string::npos) {
                static const std::regex k_jump(
                    R"(^([A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$)");
                if (!std::regex_match(j, k_jump))
                    r.diags().error(r.pos(hosts[i]["jump"]),
                                    "ssh.hosts[" + std::to_string(i) +
                                        "].jump is neither a host name nor user@host:port (got \"" +
                                        SectionReader::printable(j) + "\")",
                                    "e.g. jump: ops@bastion.example.org:22 (IPv6: ops@[2001:db8::1]:22)");
                continue;
            }
            if (!names.count(j))
                r.diags().error(r.pos(hosts[i]["jump"]),
                                "ssh.hosts[" + std::to_string(i) + "].jump names no host (\"" +
                                    SectionReader::printable(j) + "\")",
                                "use another host's name, or user@host:port");
            else if (j == sec.hosts[i].name)
                r.diags().error(r.pos(hosts[i]["jump"]),
                                "ssh.hosts[" + std::to_string(i) + "] jumps through itself");
            else if (auto via = std::find_if(sec.hosts.begin(), sec.hosts.end(),
                                             [&](const SshHost& o) { return o.name == j; });
                     via != sec.hosts.end() && !via->jump.empty())
                r.diags().error(r.pos(hosts[i]["jump"]),
                                "ssh.hosts[" + std::to_string(i) + "].jump goes through " + j +
                                    ", which has a jump host itself; chained jumps are not supported",
                                "jump through a host that is reachable directly");
        }
    }
};

} // namespace

const TargetKind& ssh_kind() {
    static const SshKind kind;
    return kind;
}

} // namespace ddl
