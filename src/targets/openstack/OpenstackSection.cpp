#include "targets/openstack/OpenstackSection.hpp"

#include "core/Url.hpp"
#include "targets/TerraformSection.hpp"
#include "util/Net.hpp"

namespace ddl {

nlohmann::json OpenstackSpec::to_json() const {
    return {{"cloud", cloud},
            {"image", image},
            {"external_network", external_network},
            {"network", network},
            {"network_cidr", network_cidr},
            {"boot_volume_gb", boot_volume_gb},
            {"anti_affinity", anti_affinity},
            {"dns_nameservers", dns_nameservers},
            {"state_backend",
             {{"type", state_backend.type},
              {"address", state_backend.address},
              {"bucket", state_backend.bucket},
              {"key", state_backend.key},
              {"region", state_backend.region},
              {"endpoint", state_backend.endpoint}}},
            {"terraform", terraform}};
}

namespace {

class OpenstackKind : public TerraformKind {
public:
    OpenstackKind() : TerraformKind("openstack") {}
    std::unique_ptr<TargetSection> defaults() const override { return std::make_unique<OpenstackSpec>(); }
    std::string starter_body() const override { return openstack_starter_body(); }

    void parse_cloud(SectionReader& r, const YAML::Node& n, Spec& spec) const override {
        const std::string p = "openstack";
        r.check_keys(n, p,
                     {"cloud", "image", "external_network", "network", "network_cidr", "boot_volume_gb",
                      "anti_affinity", "dns_nameservers", "state_backend", "terraform"});
        auto& o = spec.target_section<OpenstackSpec>();
        if (auto v =
                r.string(n, "cloud", p, true, "the cloud's name in clouds.yaml, e.g. \"cloud: mycloud\""))
            o.cloud = *v;
        if (auto v = r.string(n, "image", p)) o.image = *v;
        if (auto v = r.string(n, "external_network", p, true,
                              "the network floating IPs come from, e.g. \"public\""))
            o.external_network = *v;
        if (auto v = r.string(n, "network", p)) o.network = *v;
        if (auto v = r.string(n, "network_cidr", p)) {
            auto c = parse_cidr(*v);
            if (!c || c->v6 || c->prefix < 16 || c->prefix > 29)
                r.diags().error(r.pos(n["network_cidr"]),
                                "openstack.network_cidr must be an IPv4 CIDR /16-/29 (got \"" +
                                    SectionReader::printable(*v) + "\")",
                                "e.g. 192.168.42.0/24");
            else
                o.network_cidr = c->text();
        }
        if (auto v = r.integer(n, "boot_volume_gb", p, 10, 65536)) o.boot_volume_gb = static_cast<int>(*v);
        if (auto v = r.boolean(n, "anti_affinity", p)) o.anti_affinity = *v;
        if (auto v = r.string_list(n, "dns_nameservers", p)) {
            for (std::size_t i = 0; i < v->size(); ++i) {
                if (!is_ipv4((*v)[i]) && !is_ipv6((*v)[i]))
                    r.diags().error(r.pos(n["dns_nameservers"][i]), "openstack.dns_nameservers[" +
                                                                        std::to_string(i) +
                                                                        "] must be an IP address");
            }
            o.dns_nameservers = *v;
        }
        if (auto b = n["state_backend"]; b.IsDefined() && r.expect_map(b, p + ".state_backend")) {
            std::string bp = p + ".state_backend";
            r.check_keys(b, bp, {"type", "address", "bucket", "key", "region", "endpoint"});
            if (auto t = r.choice(b, "type", bp, {"local", "http", "s3"}, true)) o.state_backend.type = *t;
            const bool s3 = o.state_backend.type == "s3";
            // http without an address: Terraform reads TF_HTTP_ADDRESS and the lock addresses from the
            // environment ("Backend Type: http", configuration variables), as GitLab CI jobs set them.
            r.url(b, "address", bp, true,
                  "e.g. https://gitlab.example.org/api/v4/projects/42/terraform/state/NAME",
                  o.state_backend.address);
            if (auto v = r.string(b, "bucket", bp, s3)) o.state_backend.bucket = *v;
            if (auto v = r.string(b, "key", bp, s3)) o.state_backend.key = *v;
            if (auto v = r.string(b, "region", bp)) o.state_backend.region = *v;
            r.url(b, "endpoint", bp, true, "e.g. https://s3.example.org", o.state_backend.endpoint);
        }
    }
};

} // namespace

const TargetKind& openstack_kind() {
    static const OpenstackKind kind;
    return kind;
}

} // namespace ddl
