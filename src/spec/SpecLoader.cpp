#include "spec/SpecLoader.hpp"

#include "core/Url.hpp"
#include "spec/ImageRef.hpp"
#include "spec/YamlReader.hpp"
#include "util/Files.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace ddl {

bool is_dns_label(const std::string& name, std::size_t max_len) {
    static const std::regex re("^[a-z]([-a-z0-9]*[a-z0-9])?$");
    return !name.empty() && name.size() <= max_len && std::regex_match(name, re);
}

namespace {

const std::vector<std::string> k_top_keys{"apiVersion", "name",        "target",   "nodes",   "access",
                                          "openstack",  "virtualwall", "gpulab",   "ssh",     "slurm",
                                          "local",      "gpu",         "services", "runtime", "hostfile"};
const std::set<Target> k_node_group_targets{Target::openstack, Target::virtualwall, Target::gpulab};

// Walks the document section by section; each function reads one map of the spec.
class Loader {
public:
    Loader(YamlReader& r, Spec& s, bool check_files) : m_r(r), m_s(s), m_check_files(check_files) {}

    void root(const YAML::Node& doc) {
        m_r.check_keys(doc, "", k_top_keys);
        if (auto v = m_r.child(doc, "apiVersion", "", true, "add \"apiVersion: ddl/v1\" as the first line");
            v.IsDefined()) {
            if (!v.IsScalar() || v.Scalar() != "ddl/v1")
                m_r.diags().error(m_r.pos(v),
                                  "apiVersion must be ddl/v1 (got " + YamlReader::describe(v) + ")",
                                  "this version of ddl reads ddl/v1 specs");
        }
        if (auto name = m_r.string(doc, "name", "", true,
                                   "add \"name: my-cluster\" (lowercase letters, digits, -)")) {
            if (!is_dns_label(*name))
                m_r.diags().error(
                    m_r.pos(doc["name"]), "name must be DNS-safe (got \"" + printable(*name) + "\")",
                    "use 1-40 lowercase letters, digits and '-', starting with a letter, e.g. \"" +
                        suggest_name(*name) + "\"");
            else
                m_s.name = *name;
        }
        auto target = m_r.choice(doc, "target", "", target_names(), true);
        if (target)
            m_s.target = static_cast<Target>(
                std::find(target_names().begin(), target_names().end(), *target) - target_names().begin());

        target_sections(doc, target.has_value());
        if (auto n = doc["nodes"]; n.IsDefined()) {
            if (target && !k_node_group_targets.count(m_s.target))
                m_r.diags().error(m_r.pos(doc["nodes"]), "nodes does not apply to target " + *target,
                                  node_count_hint(m_s.target));
            else
                nodes(n);
        } else if (target && k_node_group_targets.count(m_s.target)) {
            m_r.diags().error(m_r.pos(doc), "missing required key \"nodes\"",
                              "target " + *target +
                                  " needs nodes.master and nodes.workers (count, flavor, gpus)");
        }
        if (target && m_s.target == Target::gpulab && doc["nodes"].IsDefined() && m_s.total_gpus() < 1)
            m_r.diags().error(m_r.pos(doc["nodes"]), "target gpulab needs at least one GPU (nodes ask for 0)",
                              "set nodes.master.gpus (and nodes.workers.gpus): one GPULab job per GPU, or "
                              "one job with all of them (gpulab.layout: one-job)");
        if (auto a = doc["access"]; a.IsDefined()) access(a);
        if (target && m_s.target == Target::openstack && m_s.access.allowed_cidrs.empty() && !had_cidrs)
            m_r.diags().error(
                m_r.pos(doc), "missing required key \"access.allowed_cidrs\"",
                "list the networks allowed to reach the master over SSH, e.g. [203.0.113.0/24]");
        if (auto g = doc["gpu"]; g.IsDefined()) gpu(g);
        if (auto sv = doc["services"]; sv.IsDefined()) services(sv);
        if (auto rt = doc["runtime"]; rt.IsDefined()) runtime(rt);
        if (auto hf = doc["hostfile"]; hf.IsDefined() && m_r.expect_map(hf, "hostfile")) {
            m_r.check_keys(hf, "hostfile", {"format"});
            if (auto f = m_r.choice(hf, "format", "hostfile", {"openmpi", "horovod", "mpich"}))
                m_s.hostfile_format = *f == "openmpi"   ? HostfileFormat::openmpi
                                      : *f == "horovod" ? HostfileFormat::horovod
                                                        : HostfileFormat::mpich;
        }
        if (target && m_s.target == Target::slurm) slurm_slots(doc);
    }

private:
    static std::string printable(const std::string& s) {
        std::string out;
        for (char c : s)
            out += (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? '?' : c;
        return out.size() > 40 ? out.substr(0, 37) + "..." : out;
    }

    static std::string suggest_name(const std::string& s) {
        std::string out;
        for (char c : to_lower(s)) {
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
                out += c;
            else if (!out.empty() && out.back() != '-')
                out += '-';
        }
        while (!out.empty() && (out.back() == '-'))
            out.pop_back();
        // One erase of the leading run: erasing char by char is quadratic on a long name of digits.
        out.erase(0, std::min(out.find_first_of("abcdefghijklmnopqrstuvwxyz"), out.size()));
        if (out.size() > 40) out.resize(40);
        while (!out.empty() && out.back() == '-')
            out.pop_back();
        return out.empty() ? "my-cluster" : out;
    }

    static std::string node_count_hint(Target t) {
        switch (t) {
        case Target::local:
            return "set the number of nodes with local.nodes";
        case Target::ssh:
            return "list the machines under ssh.hosts";
        case Target::slurm:
            return "set the number of nodes with slurm.nodes";
        default:
            return "";
        }
    }

    void target_sections(const YAML::Node& doc, bool target_known) {
        for (const auto& section : target_names()) {
            auto node = doc[section];
            bool is_target = target_known && to_string(m_s.target) == section;
            if (!node.IsDefined()) {
                if (is_target && m_s.target != Target::local)
                    m_r.diags().error(
                        m_r.pos(doc), "missing required key \"" + section + "\" for target " + section,
                        "add a \"" + section + ":\" section; see docs/spec.md or run `ddl init --target " +
                            section + "`");
                continue;
            }
            if (target_known && !is_target) {
                m_r.diags().error(m_r.pos(node),
                                  "section \"" + section + "\" is given but target is " +
                                      to_string(m_s.target),
                                  "remove the section, or set \"target: " + section + "\"");
                continue;
            }
            if (!target_known) continue;
            if (!m_r.expect_map(node, section)) continue;
            switch (m_s.target) {
            case Target::openstack:
                openstack(node);
                break;
            case Target::virtualwall:
                virtualwall(node);
                break;
            case Target::gpulab:
                gpulab(node);
                break;
            case Target::ssh:
                ssh(node);
                break;
            case Target::slurm:
                slurm(node);
                break;
            case Target::local:
                local(node);
                break;
            }
        }
    }

    void group(const YAML::Node& n, const std::string& path, NodeGroup& g, bool is_master) {
        if (!m_r.expect_map(n, path)) return;
        std::vector<std::string> keys{"flavor", "gpus", "disk_gb"};
        if (!is_master) keys.insert(keys.begin(), "count");
        m_r.check_keys(n, path, keys);
        if (!is_master) {
            if (auto c = m_r.integer(n, "count", path, 0, 256, true)) g.count = static_cast<int>(*c);
        } else if (n["count"].IsDefined()) {
            // check_keys reported it; nothing more to do.
        }
        bool flavor_required = m_s.target == Target::openstack;
        if (auto f = m_r.string(n, "flavor", path, flavor_required,
                                "name the cloud's flavor, e.g. \"flavor: g1.xlarge.4gpu\""))
            g.flavor = *f;
        if (auto gp = m_r.integer(n, "gpus", path, 0, 16)) g.gpus = static_cast<int>(*gp);
        if (auto d = m_r.integer(n, "disk_gb", path, 10, 65536)) g.disk_gb = static_cast<int>(*d);
    }

    void nodes(const YAML::Node& n) {
        if (!m_r.expect_map(n, "nodes")) return;
        m_r.check_keys(n, "nodes", {"master", "workers"});
        if (auto m = m_r.child(n, "master", "nodes", true); m.IsDefined())
            group(m, "nodes.master", m_s.master, true);
        if (auto w = n["workers"]; w.IsDefined()) group(w, "nodes.workers", m_s.workers, false);
    }

    bool had_cidrs = false;

    void access(const YAML::Node& n) {
        if (!m_r.expect_map(n, "access")) return;
        m_r.check_keys(n, "access", {"user", "allowed_cidrs", "allow_any_source", "private_key"});
        if (auto u = m_r.string(n, "user", "access")) {
            static const std::regex re("^[a-z_][a-z0-9_-]{0,31}$");
            if (!std::regex_match(*u, re))
                m_r.diags().error(m_r.pos(n["user"]),
                                  "access.user must be a login name (got \"" + printable(*u) + "\")",
                                  "lowercase letters, digits, '_' and '-', at most 32 characters");
            else
                m_s.access.user = *u;
        }
        if (auto b = m_r.boolean(n, "allow_any_source", "access")) m_s.access.allow_any_source = *b;
        had_cidrs = n["allowed_cidrs"].IsDefined();
        if (auto list = m_r.string_list(n, "allowed_cidrs", "access")) {
            if (list->empty())
                m_r.diags().error(
                    m_r.pos(n["allowed_cidrs"]), "access.allowed_cidrs must not be empty",
                    "list the networks allowed to reach the cluster over SSH, e.g. [203.0.113.0/24]");
            std::set<std::string> seen;
            for (std::size_t i = 0; i < list->size(); ++i) {
                const auto& text = (*list)[i];
                auto node = n["allowed_cidrs"][i];
                std::string path = "access.allowed_cidrs[" + std::to_string(i) + "]";
                auto c = parse_cidr(text);
                if (!c) {
                    m_r.diags().error(
                        m_r.pos(node), path + " is not a CIDR (got \"" + printable(text) + "\")",
                        "write an address and a prefix length, e.g. 203.0.113.0/24 or 2001:db8::/32");
                    continue;
                }
                if (!c->host_bits_zero()) {
                    Cidr fixed = *c;
                    for (int bit = fixed.prefix; bit < (fixed.v6 ? 128 : 32); ++bit)
                        fixed.addr[bit / 8] =
                            static_cast<std::uint8_t>(fixed.addr[bit / 8] & ~(0x80 >> (bit % 8)));
                    m_r.diags().error(m_r.pos(node), path + " has host bits set (got \"" + text + "\")",
                                      "did you mean \"" + fixed.text() + "\"?");
                    continue;
                }
                if (!seen.insert(c->text()).second) {
                    m_r.diags().error(m_r.pos(node), path + " repeats " + c->text(),
                                      "list each network once");
                    continue;
                }
                if (c->is_any() && !m_s.access.allow_any_source)
                    m_r.diags().error(
                        m_r.pos(node), path + " opens SSH to the whole internet (" + c->text() + ")",
                        "list your own networks, or set \"access.allow_any_source: true\" if you mean it");
                m_s.access.allowed_cidrs.push_back(c->text());
            }
        }
        key_file(n, "private_key", "access", m_s.access.private_key);
    }

    void openstack(const YAML::Node& n) {
        const std::string p = "openstack";
        m_r.check_keys(n, p,
                       {"cloud", "image", "external_network", "network", "network_cidr", "boot_volume_gb",
                        "anti_affinity", "dns_nameservers", "state_backend", "terraform"});
        auto& o = m_s.openstack;
        if (auto v =
                m_r.string(n, "cloud", p, true, "the cloud's name in clouds.yaml, e.g. \"cloud: mycloud\""))
            o.cloud = *v;
        if (auto v = m_r.string(n, "image", p)) o.image = *v;
        if (auto v = m_r.string(n, "external_network", p, true,
                                "the network floating IPs come from, e.g. \"public\""))
            o.external_network = *v;
        if (auto v = m_r.string(n, "network", p)) o.network = *v;
        if (auto v = m_r.string(n, "network_cidr", p)) {
            auto c = parse_cidr(*v);
            if (!c || c->v6 || c->prefix < 16 || c->prefix > 29)
                m_r.diags().error(m_r.pos(n["network_cidr"]),
                                  "openstack.network_cidr must be an IPv4 CIDR /16-/29 (got \"" +
                                      printable(*v) + "\")",
                                  "e.g. 192.168.42.0/24");
            else
                o.network_cidr = c->text();
        }
        if (auto v = m_r.integer(n, "boot_volume_gb", p, 10, 65536)) o.boot_volume_gb = static_cast<int>(*v);
        if (auto v = m_r.boolean(n, "anti_affinity", p)) o.anti_affinity = *v;
        if (auto v = m_r.string_list(n, "dns_nameservers", p)) {
            for (std::size_t i = 0; i < v->size(); ++i) {
                if (!is_ipv4((*v)[i]) && !is_ipv6((*v)[i]))
                    m_r.diags().error(m_r.pos(n["dns_nameservers"][i]), "openstack.dns_nameservers[" +
                                                                            std::to_string(i) +
                                                                            "] must be an IP address");
            }
            o.dns_nameservers = *v;
        }
        if (auto b = n["state_backend"]; b.IsDefined() && m_r.expect_map(b, p + ".state_backend")) {
            std::string bp = p + ".state_backend";
            m_r.check_keys(b, bp, {"type", "address", "bucket", "key", "region", "endpoint"});
            if (auto t = m_r.choice(b, "type", bp, {"local", "http", "s3"}, true)) o.state_backend.type = *t;
            bool http = o.state_backend.type == "http", s3 = o.state_backend.type == "s3";
            url(b, "address", bp, true,
                "e.g. https://gitlab.example.org/api/v4/projects/42/terraform/state/NAME",
                o.state_backend.address, http, "the state URL, e.g. GitLab's .../terraform/state/NAME");
            if (auto v = m_r.string(b, "bucket", bp, s3)) o.state_backend.bucket = *v;
            if (auto v = m_r.string(b, "key", bp, s3)) o.state_backend.key = *v;
            if (auto v = m_r.string(b, "region", bp)) o.state_backend.region = *v;
            url(b, "endpoint", bp, true, "e.g. https://s3.example.org", o.state_backend.endpoint);
        }
        if (auto v = m_r.string(n, "terraform", p)) {
            if (*v != "terraform" && *v != "tofu" && !starts_with(*v, "/"))
                m_r.diags().error(m_r.pos(n["terraform"]),
                                  "openstack.terraform must be terraform, tofu or an absolute path (got \"" +
                                      printable(*v) + "\")",
                                  "leave it out to use terraform, else tofu, from PATH");
            else
                o.terraform = *v;
        }
    }

    void virtualwall(const YAML::Node& n) {
        const std::string p = "virtualwall";
        m_r.check_keys(n, p,
                       {"testbed", "project", "hardware_type", "disk_image", "link_capacity", "jfed_cli",
                        "expiry_hours", "slice", "connect_via"});
        auto& v = m_s.virtualwall;
        if (auto x = m_r.choice(n, "testbed", p, {"wall1", "wall2"})) v.testbed = *x;
        if (auto x = m_r.string(n, "project", p, true, "your Fed4FIRE project name")) v.project = *x;
        if (auto x = m_r.string(n, "hardware_type", p)) v.hardware_type = *x;
        if (auto x = m_r.string(n, "disk_image", p)) {
            if (!starts_with(*x, "urn:publicid:IDN+"))
                m_r.diags().error(
                    m_r.pos(n["disk_image"]),
                    "virtualwall.disk_image must be an image URN (got \"" + printable(*x) + "\")",
                    "e.g. urn:publicid:IDN+wall2.ilabt.iminds.be+image+emulab-ops:UBUNTU22-64-STD");
            else
                v.disk_image = *x;
        }
        rate(n, "link_capacity", p, v.link_capacity_bps, 1'000'000, 100'000'000'000ULL, false);
        if (auto x = m_r.string(n, "jfed_cli", p)) v.jfed_cli = *x;
        if (auto x = m_r.integer(n, "expiry_hours", p, 1, 336)) v.expiry_hours = static_cast<int>(*x);
        if (auto x = m_r.choice(n, "connect_via", p, {"ipv6", "hostname", "ipv4"})) v.connect_via = *x;
        // GENI slice names: a letter, then letters, digits or '-', at most 19 characters.
        static const std::regex slice_re("^[a-zA-Z][-a-zA-Z0-9]{0,18}$");
        if (auto x = m_r.string(n, "slice", p)) {
            if (!std::regex_match(*x, slice_re))
                m_r.diags().error(m_r.pos(n["slice"]),
                                  "virtualwall.slice must be a slice name (got \"" + printable(*x) + "\")",
                                  "a letter, then letters, digits or '-', at most 19 characters");
            else
                v.slice = *x;
        } else if (!m_s.name.empty() && !std::regex_match(m_s.name, slice_re)) {
            std::string shorter = m_s.name.substr(0, 19);
            while (shorter.back() == '-')
                shorter.pop_back();
            m_r.diags().error(m_r.pos(n),
                              "the cluster name \"" + m_s.name + "\" is " + std::to_string(m_s.name.size()) +
                                  " characters, too long for a GENI slice name (at most 19)",
                              "set virtualwall.slice to a shorter name, e.g. \"" + shorter + "\"");
        }
    }

    void gpulab(const YAML::Node& n) {
        const std::string p = "gpulab";
        m_r.check_keys(n, p,
                       {"project", "cluster_id", "docker_image", "layout", "gpu_model", "min_cuda_version",
                        "cpus_per_gpu", "memory_gb_per_gpu", "api_url", "cert", "wait_minutes", "ssh_port",
                        "max_duration"});
        auto& g = m_s.gpulab;
        if (auto x = m_r.string(n, "project", p, true, "the GPULab project the jobs run in")) g.project = *x;
        // GPULab takes both as integers; a typo here would only fail at submit time.
        auto digits = [](const std::string& x) {
            return !x.empty() && x.size() <= 9 && x.find_first_not_of("0123456789") == std::string::npos;
        };
        if (auto x = m_r.string(n, "cluster_id", p)) {
            if (!digits(*x))
                m_r.diags().error(m_r.pos(n["cluster_id"]),
                                  "gpulab.cluster_id must be a cluster number (got \"" + printable(*x) +
                                      "\")",
                                  "`gpulab-cli clusters --short` lists them, e.g. \"4\"");
            else
                g.cluster_id = *x;
        }
        if (auto x = m_r.string(n, "docker_image", p, true,
                                "the image the jobs run, e.g. nvcr.io/nvidia/pytorch:24.05-py3"))
            g.docker_image = *x;
        if (auto x = m_r.choice(n, "layout", p, {"one-job", "jobs-per-gpu"})) g.layout = *x;
        if (auto x = m_r.string(n, "gpu_model", p)) g.gpu_model = *x;
        if (auto x = m_r.string(n, "min_cuda_version", p)) {
            if (!digits(*x))
                m_r.diags().error(m_r.pos(n["min_cuda_version"]),
                                  "gpulab.min_cuda_version must be a CUDA major version (got \"" +
                                      printable(*x) + "\")",
                                  "e.g. \"12\"");
            else
                g.min_cuda_version = *x;
        }
        if (auto x = m_r.integer(n, "cpus_per_gpu", p, 1, 64)) g.cpus_per_gpu = static_cast<int>(*x);
        if (auto x = m_r.integer(n, "memory_gb_per_gpu", p, 1, 1024))
            g.memory_gb_per_gpu = static_cast<int>(*x);
        url(n, "api_url", p, false, "the client certificate must never travel over plain HTTP", g.api_url);
        if (auto x = m_r.string(n, "cert", p)) g.cert = *x;
        if (auto x = m_r.integer(n, "wait_minutes", p, 1, 1440)) g.wait_minutes = static_cast<int>(*x);
        if (auto x = m_r.integer(n, "ssh_port", p, 1, 65535)) g.ssh_port = static_cast<int>(*x);
        if (auto x = m_r.string(n, "max_duration", p)) {
            static const std::regex re("^[1-9][0-9]{0,4} ?(minutes?|hours?|days?|weeks?|[mhdw])$");
            if (!std::regex_match(*x, re))
                m_r.diags().error(m_r.pos(n["max_duration"]),
                                  "gpulab.max_duration must be a duration (got \"" + printable(*x) + "\")",
                                  "a number and a unit, e.g. \"12 hours\", \"2 days\", \"1 week\"");
            else
                g.max_duration = *x;
        }
    }

    void ssh(const YAML::Node& n) {
        const std::string p = "ssh";
        m_r.check_keys(n, p, {"hosts"});
        auto hosts = m_r.child(n, "hosts", p, true, "list the machines, e.g. hosts: [{address: 192.0.2.10}]");
        if (!hosts.IsDefined()) return;
        if (!hosts.IsSequence() || hosts.size() == 0) {
            m_r.diags().error(
                m_r.pos(hosts),
                "ssh.hosts must be a non-empty list of hosts (got " +
                    (hosts.IsSequence() ? std::string("an empty list") : YamlReader::describe(hosts)) + ")",
                "e.g. hosts: [{name: master, address: 192.0.2.10}]");
            return;
        }
        if (hosts.size() > 1024) {
            m_r.diags().error(m_r.pos(hosts),
                              "ssh.hosts lists " + std::to_string(hosts.size()) + " hosts; at most 1024");
            return;
        }
        std::map<std::string, std::size_t> names, addresses;
        for (std::size_t i = 0; i < hosts.size(); ++i) {
            std::string hp = "ssh.hosts[" + std::to_string(i) + "]";
            auto h = hosts[i];
            if (!m_r.expect_map(h, hp)) continue;
            m_r.check_keys(h, hp,
                           {"name", "address", "private_address", "port", "user", "key", "jump", "gpus"});
            SshHost host;
            host.name = "host" + std::to_string(i + 1);
            if (auto x = m_r.string(h, "name", hp)) {
                if (!is_dns_label(*x, 63))
                    m_r.diags().error(m_r.pos(h["name"]),
                                      hp + ".name must be DNS-safe (got \"" + printable(*x) + "\")");
                else
                    host.name = *x;
            }
            if (auto x = m_r.string(h, "address", hp, true, "an IP address or host name")) {
                host.address = *x;
                if (!is_host_address(*x))
                    m_r.diags().error(m_r.pos(h["address"]),
                                      hp + ".address must be an IP address or host name (got \"" +
                                          printable(*x) + "\")",
                                      "e.g. 192.0.2.10, 2001:db8::10 or gpu1.example.org");
                else if (auto [it, fresh] = addresses.emplace(*x, i); !fresh)
                    m_r.diags().error(m_r.pos(h["address"]),
                                      hp + ".address repeats ssh.hosts[" + std::to_string(it->second) + "]",
                                      "list each machine once");
            }
            if (auto [it, fresh] = names.emplace(host.name, i); !fresh)
                m_r.diags().error(m_r.pos(h["name"].IsDefined() ? h["name"] : h),
                                  "duplicate host name \"" + host.name + "\" (also ssh.hosts[" +
                                      std::to_string(it->second) + "])",
                                  "give every host its own name");
            if (auto x = m_r.string(h, "private_address", hp)) {
                if (!is_host_address(*x))
                    m_r.diags().error(
                        m_r.pos(h["private_address"]),
                        hp + ".private_address must be an IP address or host name (got \"" + printable(*x) +
                            "\")",
                        "the address the other hosts reach this one at; leave it out when that is address");
                else
                    host.private_address = *x;
            }
            if (auto x = m_r.integer(h, "port", hp, 1, 65535)) host.port = static_cast<int>(*x);
            if (auto x = m_r.string(h, "user", hp)) host.user = *x;
            key_file(h, "key", hp, host.key);
            if (auto x = m_r.string(h, "jump", hp)) host.jump = *x;
            if (auto x = m_r.integer(h, "gpus", hp, 0, 16)) host.gpus = static_cast<int>(*x);
            m_s.ssh.hosts.push_back(host);
        }
        for (std::size_t i = 0; i < m_s.ssh.hosts.size(); ++i) {
            const auto& j = m_s.ssh.hosts[i].jump;
            if (j.empty()) continue;
            if (j.find('@') != std::string::npos || j.find(':') != std::string::npos) {
                static const std::regex k_jump(
                    R"(^([A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$)");
                if (!std::regex_match(j, k_jump))
                    m_r.diags().error(m_r.pos(hosts[i]["jump"]),
                                      "ssh.hosts[" + std::to_string(i) +
                                          "].jump is neither a host name nor user@host:port (got \"" +
                                          printable(j) + "\")",
                                      "e.g. jump: ops@bastion.example.org:22 (IPv6: ops@[2001:db8::1]:22)");
                continue;
            }
            if (!names.count(j))
                m_r.diags().error(m_r.pos(hosts[i]["jump"]),
                                  "ssh.hosts[" + std::to_string(i) + "].jump names no host (\"" +
                                      printable(j) + "\")",
                                  "use another host's name, or user@host:port");
            else if (j == m_s.ssh.hosts[i].name)
                m_r.diags().error(m_r.pos(hosts[i]["jump"]),
                                  "ssh.hosts[" + std::to_string(i) + "] jumps through itself");
            else if (auto via = std::find_if(m_s.ssh.hosts.begin(), m_s.ssh.hosts.end(),
                                             [&](const SshHost& o) { return o.name == j; });
                     via != m_s.ssh.hosts.end() && !via->jump.empty())
                m_r.diags().error(m_r.pos(hosts[i]["jump"]),
                                  "ssh.hosts[" + std::to_string(i) + "].jump goes through " + j +
                                      ", which has a jump host itself; chained jumps are not supported",
                                  "jump through a host that is reachable directly");
        }
    }

    void slurm(const YAML::Node& n) {
        const std::string p = "slurm";
        m_r.check_keys(n, p,
                       {"partition", "nodes", "gpus_per_node", "tasks_per_node", "time", "account",
                        "runtime_dir", "start_timeout_minutes"});
        auto& s = m_s.slurm;
        // Names become #SBATCH lines of a shell script: only Slurm's own name characters get through.
        static const std::regex name_re("^[A-Za-z0-9_.-]+$");
        static const std::regex partitions_re("^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$");
        if (auto x = m_r.string(n, "partition", p, true, "the partition to submit to, e.g. \"gpu\"")) {
            if (!std::regex_match(*x, partitions_re))
                m_r.diags().error(
                    m_r.pos(n["partition"]),
                    "slurm.partition must be a Slurm partition name (got \"" + printable(*x) + "\")",
                    "letters, digits, '_', '.', '-'; several as \"gpu,gpu-long\"; `sinfo -s` lists "
                    "them");
            else
                s.partition = *x;
        }
        if (auto x = m_r.integer(n, "nodes", p, 1, 1024)) s.nodes = static_cast<int>(*x);
        if (auto x = m_r.integer(n, "gpus_per_node", p, 0, 16)) s.gpus_per_node = static_cast<int>(*x);
        if (auto x = m_r.integer(n, "tasks_per_node", p, 0, 256)) s.tasks_per_node = static_cast<int>(*x);
        if (auto x = m_r.string(n, "time", p)) {
            static const std::regex re("^([0-9]+-)?([0-9]{1,2}:)?[0-9]{1,2}:[0-9]{2}$|^[0-9]+$");
            if (!std::regex_match(*x, re))
                m_r.diags().error(m_r.pos(n["time"]),
                                  "slurm.time must be a Slurm time limit (got \"" + printable(*x) + "\")",
                                  "e.g. \"02:00:00\", \"1-00:00:00\" or minutes \"90\"");
            else
                s.time = *x;
        }
        if (auto x = m_r.string(n, "account", p)) {
            if (!x->empty() && !std::regex_match(*x, name_re))
                m_r.diags().error(
                    m_r.pos(n["account"]),
                    "slurm.account must be a Slurm account name (got \"" + printable(*x) + "\")",
                    "letters, digits, '_', '.', '-'; `sacctmgr show assoc user=$USER` lists yours");
            else
                s.account = *x;
        }
        if (n["runtime_dir"].IsDefined()) abs_path(n, "runtime_dir", p, s.runtime_dir);
        if (auto x = m_r.integer(n, "start_timeout_minutes", p, 1, 10080))
            s.start_timeout_minutes = static_cast<int>(*x);
    }

    // On slurm the tasks per node are the slots; a second, different number would be silently ignored.
    void slurm_slots(const YAML::Node& doc) {
        const auto& s = m_s.slurm;
        if (s.tasks_per_node > 0 && m_s.runtime.slots_per_node > 0 &&
            s.tasks_per_node != m_s.runtime.slots_per_node)
            m_r.diags().error(m_r.pos(doc["runtime"]["slots_per_node"]),
                              "runtime.slots_per_node (" + std::to_string(m_s.runtime.slots_per_node) +
                                  ") disagrees with slurm.tasks_per_node (" +
                                  std::to_string(s.tasks_per_node) + ")",
                              "on slurm the tasks per node are the slots: set only slurm.tasks_per_node");
    }

    void local(const YAML::Node& n) {
        const std::string p = "local";
        m_r.check_keys(
            n, p, {"nodes", "subnet", "bandwidth", "nodes_as", "bastion", "image", "mirror", "apt_proxy"});
        auto& l = m_s.local;
        if (auto x = m_r.integer(n, "nodes", p, 1, 16)) l.nodes = static_cast<int>(*x);
        if (auto x = m_r.string(n, "subnet", p)) {
            auto c = parse_cidr(*x);
            if (!c || c->v6 || c->prefix < 16 || c->prefix > 27)
                m_r.diags().error(m_r.pos(n["subnet"]),
                                  "local.subnet must be an IPv4 CIDR /16-/27 (got \"" + printable(*x) + "\")",
                                  "e.g. 10.231.0.0/24");
            else if (!c->host_bits_zero())
                m_r.diags().error(m_r.pos(n["subnet"]),
                                  "local.subnet has host bits set (got \"" + *x + "\")");
            else
                l.subnet = c->text();
        }
        rate(n, "bandwidth", p, l.bandwidth_bps, 1'000'000, 100'000'000'000ULL, true);
        if (auto x = m_r.choice(n, "nodes_as", p, {"namespaces", "containers"})) l.nodes_as = *x;
        if (auto x = m_r.boolean(n, "bastion", p)) l.bastion = *x;
        if (auto x = m_r.string(n, "image", p)) {
            if (!parse_image_ref(*x))
                m_r.diags().error(
                    m_r.pos(n["image"]),
                    "local.image is not an image reference (got \"" + printable(*x) + "\")",
                    "e.g. localhost/my-node:bookworm (an image with systemd, sshd and python3)");
            else
                l.image = *x;
        }
        url(n, "mirror", p, true, "e.g. http://deb.debian.org/debian", l.mirror);
        url(n, "apt_proxy", p, true, "e.g. http://10.0.0.1:3142", l.apt_proxy);
        if (l.nodes_as == "containers" && l.bastion)
            m_r.diags().error(m_r.pos(n["bastion"]),
                              "local.bastion cannot be combined with local.nodes_as: containers",
                              "container nodes fetch packages through the bridge, which workers behind a "
                              "bastion cannot reach; use one of the two");
        if (l.nodes_as != "containers") {
            for (const char* key : {"image", "mirror", "apt_proxy"}) {
                if (n[key])
                    m_r.diags().error(m_r.pos(n[key]),
                                      std::string("local.") + key +
                                          " applies only to local.nodes_as: containers",
                                      "set local.nodes_as: containers, or remove it");
            }
        }
    }

    void rate(const YAML::Node& n, const std::string& key, const std::string& p, std::uint64_t& out,
              std::uint64_t min, std::uint64_t max, bool allow_unlimited) {
        auto x = m_r.string(n, key, p);
        if (!x) return;
        auto r = parse_rate(*x);
        std::string full = p + "." + key;
        if (!r || (*r == 0 && !allow_unlimited)) {
            m_r.diags().error(m_r.pos(n[key]),
                              full + " must be a rate like 1gbit or 100mbit (got \"" + printable(*x) + "\")",
                              allow_unlimited ? "units: kbit, mbit, gbit; or \"unlimited\""
                                              : "units: kbit, mbit, gbit");
            return;
        }
        if (*r != 0 && (*r < min || *r > max)) {
            m_r.diags().error(m_r.pos(n[key]), full + " must be " + format_rate(min) + "-" +
                                                   format_rate(max) + " (got " + *x + ")");
            return;
        }
        out = *r;
    }

    void gpu(const YAML::Node& n) {
        if (!m_r.expect_map(n, "gpu")) return;
        m_r.check_keys(n, "gpu", {"driver", "driver_branch", "container_toolkit", "allow_reboot"});
        if (auto x = m_r.boolean(n, "driver", "gpu")) m_s.gpu.driver = *x;
        if (auto x = m_r.string(n, "driver_branch", "gpu")) {
            if (x->empty() || x->find_first_not_of("0123456789") != std::string::npos || x->size() > 4)
                m_r.diags().error(m_r.pos(n["driver_branch"]),
                                  "gpu.driver_branch must be a driver branch number (got \"" + printable(*x) +
                                      "\")",
                                  "e.g. \"535\" or \"550\"");
            else
                m_s.gpu.driver_branch = *x;
        }
        if (auto x = m_r.boolean(n, "container_toolkit", "gpu")) m_s.gpu.container_toolkit = *x;
        if (auto x = m_r.boolean(n, "allow_reboot", "gpu")) m_s.gpu.allow_reboot = *x;
    }

    // A URL as libcurl parses it (core/Url): scheme, host, no user info.
    void url(const YAML::Node& n, const std::string& key, const std::string& p, bool http_ok,
             const std::string& hint, std::string& out, bool required = false,
             const std::string& missing_hint = "") {
        auto x = m_r.string(n, key, p, required, missing_hint);
        if (!x) return;
        if (auto s = check_service_url(*x, http_ok, false); !s)
            m_r.diags().error(m_r.pos(n[key]),
                              p + "." + key + " " + s.error().message + " (got \"" + printable(*x) + "\")",
                              hint);
        else
            out = *x;
    }

    // A private key ddl logs in with must be there when the spec is checked, not only at deploy time.
    void key_file(const YAML::Node& n, const std::string& key, const std::string& p, std::string& out) {
        auto x = m_r.string(n, key, p);
        if (!x) return;
        out = *x;
        if (!m_check_files) return;
        struct stat st {};
        std::string where = p + "." + key + " " + printable(*x);
        if (x->empty())
            m_r.diags().error(m_r.pos(n[key]), p + "." + key + " is empty",
                              "leave it out, or name the key file");
        else if (ends_with(*x, ".pub"))
            m_r.diags().error(m_r.pos(n[key]), where + " is a public key",
                              "name the private key beside it: " + printable(x->substr(0, x->size() - 4)));
        else if (::stat(x->c_str(), &st) != 0)
            m_r.diags().error(m_r.pos(n[key]), where + " does not exist",
                              "write the path of the private key (relative to where ddl runs; '~' is not "
                              "expanded), e.g. /home/you/.ssh/id_ed25519");
        else if (!S_ISREG(st.st_mode) || ::access(x->c_str(), R_OK) != 0)
            m_r.diags().error(m_r.pos(n[key]), where + " is not a file ddl can read",
                              "name a readable private key file");
    }

    void abs_path(const YAML::Node& n, const std::string& key, const std::string& p, std::string& out) {
        auto x = m_r.string(n, key, p);
        if (!x) return;
        if (x->empty() || x->front() != '/' || x->find("..") != std::string::npos ||
            x->find_first_of(" \t\n") != std::string::npos)
            m_r.diags().error(m_r.pos(n[key]), p + "." + key +
                                                   " must be an absolute path without '..' (got \"" +
                                                   printable(*x) + "\")");
        else
            out = *x;
    }

    void services(const YAML::Node& n) {
        if (!m_r.expect_map(n, "services")) return;
        m_r.check_keys(n, "services", {"nfs", "jupyter", "monitoring"});
        auto& s = m_s.services;
        if (auto x = n["nfs"]; x.IsDefined() && m_r.expect_map(x, "services.nfs")) {
            m_r.check_keys(x, "services.nfs", {"enabled", "export", "mount", "transport"});
            if (auto b = m_r.boolean(x, "enabled", "services.nfs")) s.nfs = *b;
            if (auto t = m_r.choice(x, "transport", "services.nfs", {"auto", "nfs", "sshfs"}))
                s.nfs_transport = *t;
            abs_path(x, "export", "services.nfs", s.nfs_export);
            abs_path(x, "mount", "services.nfs", s.nfs_mount);
        }
        if (auto x = n["jupyter"]; x.IsDefined() && m_r.expect_map(x, "services.jupyter")) {
            m_r.check_keys(x, "services.jupyter", {"enabled", "port", "install"});
            if (auto b = m_r.boolean(x, "enabled", "services.jupyter")) s.jupyter = *b;
            if (auto i = m_r.choice(x, "install", "services.jupyter", {"auto", "pip", "apt"}))
                s.jupyter_install = *i;
            if (auto v = m_r.integer(x, "port", "services.jupyter", 1024, 65535))
                s.jupyter_port = static_cast<int>(*v);
        }
        if (auto x = n["monitoring"]; x.IsDefined() && m_r.expect_map(x, "services.monitoring")) {
            m_r.check_keys(x, "services.monitoring", {"enabled", "grafana"});
            if (auto b = m_r.boolean(x, "enabled", "services.monitoring")) s.monitoring = *b;
            if (auto b = m_r.boolean(x, "grafana", "services.monitoring")) s.grafana = *b;
        }
    }

    void runtime(const YAML::Node& n) {
        if (!m_r.expect_map(n, "runtime")) return;
        m_r.check_keys(n, "runtime",
                       {"backend", "interface", "slots_per_node", "master_port", "image", "container_engine",
                        "shm_size", "mounts"});
        auto& r = m_s.runtime;
        if (auto x = m_r.choice(n, "backend", "runtime", {"auto", "nccl", "tcp"}))
            r.backend = *x == "nccl" ? Backend::nccl : *x == "tcp" ? Backend::tcp : Backend::auto_select;
        if (auto x = m_r.string(n, "interface", "runtime")) {
            static const std::regex re("^[A-Za-z0-9_.:-]{1,15}$");
            if (*x == "auto")
                r.interface.clear();
            else if (!std::regex_match(*x, re))
                m_r.diags().error(m_r.pos(n["interface"]),
                                  "runtime.interface must be a network interface name (got \"" +
                                      printable(*x) + "\")",
                                  "e.g. eth0, ens3 or ib0; or \"auto\"");
            else
                r.interface = *x;
        }
        if (auto s = n["slots_per_node"]; s.IsDefined()) {
            if (!(s.IsScalar() && s.Scalar() == "auto")) {
                if (auto v = m_r.integer(n, "slots_per_node", "runtime", 1, 64))
                    r.slots_per_node = static_cast<int>(*v);
            }
        }
        if (auto v = m_r.integer(n, "master_port", "runtime", 1024, 65535))
            r.master_port = static_cast<int>(*v);
        training_container(n);
    }

    // The training container's keys (#11): an image, the engine that runs it, /dev/shm and extra mounts.
    void training_container(const YAML::Node& n) {
        auto& r = m_s.runtime;
        if (auto x = m_r.string(n, "image", "runtime")) {
            if (!parse_image_ref(*x))
                m_r.diags().error(m_r.pos(n["image"]),
                                  "runtime.image is not an image reference (got \"" + printable(*x) + "\")",
                                  "e.g. nvcr.io/nvidia/pytorch:24.05-py3 or localhost/ddl-train:1 (lowercase "
                                  "repository, optional :tag and @sha256:digest)");
            else if (m_s.target == Target::slurm || m_s.target == Target::gpulab)
                m_r.diags().error(
                    m_r.pos(n["image"]), "runtime.image does not apply to target " + to_string(m_s.target),
                    m_s.target == Target::gpulab
                        ? "GPULab jobs are containers already: set gpulab.docker_image"
                        : "ddl reaches Slurm nodes only through srun; run a container from your "
                          "job script (e.g. with enroot or apptainer)");
            else if (m_s.target == Target::local && m_s.local.nodes_as == "containers")
                m_r.diags().error(m_r.pos(n["image"]),
                                  "runtime.image cannot be combined with local.nodes_as: containers",
                                  "a container node cannot run containers itself here; use local.nodes_as: "
                                  "namespaces (the default) for training containers");
            else
                r.image = *x;
        }
        // podman is the engine that runs on the local target's machine (see LOCAL-CLUSTER-NOTES).
        if (m_s.target == Target::local) r.container_engine = "podman";
        if (auto x = m_r.choice(n, "container_engine", "runtime", {"docker", "podman"})) {
            if (m_s.target == Target::local && *x == "docker")
                m_r.diags().error(m_r.pos(n["container_engine"]),
                                  "runtime.container_engine: docker does not run on the local target",
                                  "local nodes share this machine's podman (with runc); use podman");
            else
                r.container_engine = *x;
        }
        if (auto x = m_r.string(n, "shm_size", "runtime")) {
            static const std::regex re("^[1-9][0-9]{0,9}[bkmgBKMG]?$");
            if (!std::regex_match(*x, re))
                m_r.diags().error(m_r.pos(n["shm_size"]),
                                  "runtime.shm_size must be a size like 8g or 512m (got \"" + printable(*x) +
                                      "\")",
                                  "units b, k, m, g; leave it out to share the node's /dev/shm (--ipc=host)");
            else
                r.shm_size = *x;
        }
        if (auto list = m_r.string_list(n, "mounts", "runtime")) {
            std::set<std::string> targets;
            for (std::size_t i = 0; i < list->size(); ++i) {
                const auto& text = (*list)[i];
                std::string why = bad_mount(text);
                std::string target = split(text, ':').size() >= 2 ? split(text, ':')[1] : "";
                if (why.empty() && !targets.insert(target).second)
                    why = "mounts " + target + " a second time";
                if (why.empty() &&
                    (target == "/opt/ddl" || (m_s.services.nfs && target == m_s.services.nfs_mount)))
                    why = "mounts over " + target + ", which ddl mounts itself";
                if (!why.empty())
                    m_r.diags().error(m_r.pos(n["mounts"][i]),
                                      "runtime.mounts[" + std::to_string(i) + "] " + why + " (got \"" +
                                          printable(text) + "\")",
                                      "write HOST_PATH:CONTAINER_PATH or HOST_PATH:CONTAINER_PATH:ro, both "
                                      "absolute, e.g. /data/imagenet:/data:ro");
                else
                    r.mounts.push_back(text);
            }
        }
        if (r.image.empty()) {
            for (const char* key : {"shm_size", "mounts"}) {
                if (n[key] && !n["image"])
                    m_r.diags().error(m_r.pos(n[key]),
                                      std::string("runtime.") + key + " applies only to a training container",
                                      "set runtime.image to the image the nodes should run, or remove it");
            }
        }
    }

    // Why a "host:container[:ro|rw]" bind mount is unusable; empty when it is fine.
    static std::string bad_mount(const std::string& text) {
        auto parts = split(text, ':');
        if (parts.size() < 2 || parts.size() > 3) return "is not HOST:CONTAINER[:ro]";
        if (parts.size() == 3 && parts[2] != "ro" && parts[2] != "rw")
            return "has options other than ro or rw";
        for (std::size_t i = 0; i < 2; ++i) {
            const auto& path = parts[i];
            if (path.empty() || path.front() != '/' || path.find("..") != std::string::npos ||
                path.find_first_of(" \t\n,\"'\\$") != std::string::npos)
                return std::string("has a ") + (i == 0 ? "host" : "container") +
                       " path that is not absolute (or has '..', spaces, commas or quotes)";
        }
        if (parts[1] == "/") return "mounts over the container's root";
        return {};
    }

    YamlReader& m_r;
    Spec& m_s;
    bool m_check_files = true;
};

// Line and column (1-based) of byte `offset` in `text`.
SourcePos position_of(const std::string& text, std::size_t offset, const std::string& file) {
    int line = 1, col = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return {file, line, col};
}

} // namespace

SpecLoadResult SpecLoader::load_string(const std::string& text, const std::string& display_name,
                                       bool check_files) {
    SpecLoadResult out;
    auto& d = out.diagnostics;
    if (text.size() > k_max_bytes) {
        d.error({display_name, 0, 0},
                "file is " + std::to_string(text.size() / 1024) + " KiB; a cluster spec is at most " +
                    std::to_string(k_max_bytes / 1024) + " KiB",
                "is this the right file? a spec is a few dozen lines");
        return out;
    }
    if (trim(text).empty()) {
        d.error({display_name, 1, 1}, "file is empty", "run `ddl init` to write a starter cluster.yaml");
        return out;
    }
    if (auto bad = find_invalid_utf8(text)) {
        d.error(position_of(text, *bad, display_name), "file is not valid UTF-8",
                "save the file as UTF-8 text");
        return out;
    }
    if (text.find('\0') != std::string::npos) {
        d.error(position_of(text, text.find('\0'), display_name), "file contains a NUL byte",
                "is this a text file?");
        return out;
    }
    YAML::Node doc;
    try {
        doc = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        YamlReader r(display_name, d);
        d.error(r.pos(e.mark), "YAML syntax error: " + e.msg,
                "check the indentation and quoting around this spot");
        return out;
    } catch (const YAML::Exception& e) {
        d.error({display_name, 1, 1}, std::string("cannot read YAML: ") + e.what());
        return out;
    }
    YamlReader r(display_name, d);
    if (!doc.IsMap()) {
        d.error(r.pos(doc), "a cluster spec must be a map of keys (got " + YamlReader::describe(doc) + ")",
                "start with \"apiVersion: ddl/v1\", \"name: ...\", \"target: ...\"; see `ddl init`");
        return out;
    }
    Spec spec;
    Loader loader(r, spec, check_files);
    try {
        loader.root(doc);
    } catch (const YAML::Exception& e) {
        d.error(r.pos(e.mark), std::string("cannot read YAML: ") + e.what());
    }
    if (!d.has_errors()) {
        spec.source_file = display_name;
        out.spec = std::move(spec);
    }
    return out;
}

SpecLoadResult SpecLoader::load_file(const std::string& path, bool check_files) {
    if (path == "-") {
        // The spec on stdin (`ddl validate -`), with the same size limit.
        std::string text(k_max_bytes + 1, '\0');
        std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
        text.resize(static_cast<std::size_t>(std::cin.gcount()));
        return load_string(text, "<stdin>", check_files);
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        // Reading a FIFO or a terminal would wait for a writer that may never come.
        SpecLoadResult out;
        out.diagnostics.error({path, 0, 0},
                              S_ISDIR(st.st_mode) ? "is a folder, not a spec file" : "is not a regular file",
                              "give the path of a cluster.yaml (or - to read the spec from stdin)");
        return out;
    }
    auto text = read_file_limited(path, k_max_bytes);
    if (!text) {
        SpecLoadResult out;
        out.diagnostics.error({path, 0, 0}, text.error().message,
                              text.error().message.find("larger") != std::string::npos
                                  ? "is this the right file? a spec is a few dozen lines"
                                  : "check the path; `ddl init` writes a starter cluster.yaml");
        return out;
    }
    return load_string(*text, path, check_files);
}

} // namespace ddl
