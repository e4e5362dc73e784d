#include "targets/local/LocalSection.hpp"

#include "spec/ImageRef.hpp"
#include "util/Net.hpp"

namespace ddl {

nlohmann::json LocalSpec::to_json() const {
    return {{"nodes", nodes},       {"subnet", subnet},       {"bandwidth", format_rate(bandwidth_bps)},
            {"nodes_as", nodes_as}, {"bastion", bastion},     {"image", image},
            {"mirror", mirror},     {"apt_proxy", apt_proxy}, {"ip_family", ip_family}};
}

namespace {

class LocalKind : public TargetKind {
public:
    std::optional<Refusal> refuse_stop() const override {
        return Refusal{
            "autostop.action: stop is not available on target local: local nodes are namespaces or "
            "containers on this machine; ddl does not stop them and start them again with their disks",
            "use action: destroy (the cluster is redeployed with ddl deploy)"};
    }
    std::string name() const override { return "local"; }
    std::unique_ptr<TargetSection> defaults() const override { return std::make_unique<LocalSpec>(); }
    bool section_required() const override { return false; }
    std::string node_count_hint() const override { return "set the number of nodes with local.nodes"; }
    std::string starter_body() const override { return local_starter_body(); }

    void parse(SectionReader& r, const YAML::Node& n, Spec& spec) const override {
        const std::string p = "local";
        r.check_keys(n, p,
                     {"nodes", "subnet", "bandwidth", "nodes_as", "bastion", "image", "mirror", "apt_proxy",
                      "ip_family"});
        auto& l = spec.target_section<LocalSpec>();
        if (auto x = r.integer(n, "nodes", p, 1, 16)) l.nodes = static_cast<int>(*x);
        if (auto x = r.string(n, "subnet", p)) {
            auto c = parse_cidr(*x);
            if (!c || c->v6 || c->prefix < 16 || c->prefix > 27)
                r.diags().error(r.pos(n["subnet"]),
                                "local.subnet must be an IPv4 CIDR /16-/27 (got \"" +
                                    SectionReader::printable(*x) + "\")",
                                "e.g. 10.231.0.0/24");
            else if (!c->host_bits_zero())
                r.diags().error(r.pos(n["subnet"]), "local.subnet has host bits set (got \"" + *x + "\")");
            else {
                // Kept even when refused: a stored spec (an older ddl deployed it) still reads as deployed.
                l.subnet = c->text();
                if (auto block = unusable_v4_block(*c))
                    r.diags().error(r.pos(n["subnet"]),
                                    "local.subnet " + *x + " is in the " + *block +
                                        " block, whose addresses cannot be given to nodes",
                                    "use a private range, e.g. 10.231.0.0/24");
            }
        }
        r.rate(n, "bandwidth", p, l.bandwidth_bps, 1'000'000, 100'000'000'000ULL, true);
        if (auto x = r.choice(n, "nodes_as", p, {"namespaces", "containers"})) l.nodes_as = *x;
        if (auto x = r.boolean(n, "bastion", p)) l.bastion = *x;
        if (auto x = r.string(n, "image", p)) {
            if (!parse_image_ref(*x))
                r.diags().error(r.pos(n["image"]),
                                "local.image is not an image reference (got \"" +
                                    SectionReader::printable(*x) + "\")",
                                "e.g. localhost/my-node:bookworm (an image with systemd, sshd and python3)");
            else
                l.image = *x;
        }
        r.url(n, "mirror", p, true, "e.g. http://deb.debian.org/debian", l.mirror);
        r.url(n, "apt_proxy", p, true, "e.g. http://10.0.0.1:3142", l.apt_proxy);
        if (l.nodes_as == "containers" && l.bastion)
            r.diags().error(r.pos(n["bastion"]),
                            "local.bastion cannot be combined with local.nodes_as: containers",
                            "container nodes fetch packages through the bridge, which workers behind a "
                            "bastion cannot reach; use one of the two");
        if (auto x = r.choice(n, "ip_family", p, {"ipv4", "dual", "ipv6"})) l.ip_family = *x;
        if (l.ip_family != "ipv4" && l.bastion)
            r.diags().error(r.pos(n["ip_family"]),
                            "local.ip_family: " + l.ip_family + " cannot be combined with local.bastion",
                            "the bastion layout's private network is IPv4 only; use ip_family: ipv4 there");
        if (l.ip_family == "ipv6" && l.nodes_as == "containers")
            r.diags().error(r.pos(n["ip_family"]),
                            "local.ip_family: ipv6 cannot be combined with local.nodes_as: containers",
                            "container nodes fetch packages through an IPv4 apt proxy on the bridge; use "
                            "ip_family: dual for containers, or namespace nodes for IPv6-only");
        if (l.nodes_as != "containers") {
            for (const char* key : {"image", "mirror", "apt_proxy"}) {
                if (n[key])
                    r.diags().error(r.pos(n[key]),
                                    std::string("local.") + key +
                                        " applies only to local.nodes_as: containers",
                                    "set local.nodes_as: containers, or remove it");
            }
        }
    }

    // The idle clock is a systemd timer on the master (the idle_clock role); namespace nodes get the base
    // roles only and run no systemd, so nothing would ever find the cluster idle or end it.
    void check(SectionReader& r, const YAML::Node& doc, const Spec& spec) const override {
        // local.nodes is 1..16 as written; nodes.spares comes on top of it.
        if (spec.spares > 0 && spec.target_section<LocalSpec>().nodes > 16)
            r.diags().error(r.pos(doc["nodes"]["spares"]),
                            "local.nodes plus nodes.spares make " +
                                std::to_string(spec.target_section<LocalSpec>().nodes) +
                                " nodes; the local target makes at most 16",
                            "ask for fewer nodes or spares");
        if (spec.life.autostop.idle_minutes <= 0 || spec.target_section<LocalSpec>().nodes_as == "containers")
            return;
        r.diags().error(r.pos(doc["autostop"]),
                        "autostop cannot work on local namespace nodes: the master's idle clock is a systemd "
                        "timer, and namespace nodes run no systemd, so nothing would ever end the cluster",
                        "set local.nodes_as: containers (their master runs the clock), or use lifetime "
                        "(ddl gc --expired ends the cluster when it runs out)");
    }

    std::optional<Refusal> refuse_training_image(const Spec& spec) const override {
        if (spec.target_section<LocalSpec>().nodes_as != "containers") return std::nullopt;
        return Refusal{"runtime.image cannot be combined with local.nodes_as: containers",
                       "a container node cannot run containers itself here; use local.nodes_as: "
                       "namespaces (the default) for training containers"};
    }
    // Namespace nodes share this machine's file system and init: the playbook gives them the base roles only
    // (playbooks/site.yml, ddl_base_only), so a service installed there would be this machine's own.
    std::optional<Refusal> refuse_service(const Spec& spec, const std::string& service) const override {
        if (spec.target_section<LocalSpec>().nodes_as == "containers") return std::nullopt;
        // A JupyterLab the user starts in the master's namespace is still checked by the smoke test and
        // reached by `ddl tunnel` (the token is the cluster's): said, not refused.
        if (service == "jupyter")
            return Refusal{
                "services.jupyter: ddl installs no JupyterLab on local namespace nodes (they share "
                "this machine's file system and services); the smoke test and ddl tunnel reach one "
                "only if you start it in the master's namespace",
                "set local.nodes_as: containers to have ddl install it", true};
        return Refusal{"services." + service +
                           " cannot run on local namespace nodes: they share this "
                           "machine's file system and services, so ddl installs no " +
                           service + " on them",
                       "set local.nodes_as: containers, or switch services." + service + " off"};
    }
    // podman (with runc) is the engine that runs on the machine the local target uses; docker does not.
    std::string default_container_engine() const override { return "podman"; }
    std::optional<Refusal> refuse_container_engine(const std::string& engine) const override {
        if (engine != "docker") return std::nullopt;
        return Refusal{"runtime.container_engine: docker does not run on the local target",
                       "local nodes share this machine's podman (with runc); use podman"};
    }
};

} // namespace

const TargetKind& local_kind() {
    static const LocalKind kind;
    return kind;
}

} // namespace ddl
