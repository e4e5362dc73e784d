#include "targets/virtualwall/VirtualwallSection.hpp"

#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <regex>

namespace ddl {

nlohmann::json VirtualwallSpec::to_json() const {
    return {{"testbed", testbed},
            {"project", project},
            {"hardware_type", hardware_type},
            {"disk_image", disk_image},
            {"link_capacity", format_rate(link_capacity_bps)},
            {"client", client},
            {"jfed_cli", jfed_cli},
            {"am_url", am_url},
            {"sa_url", sa_url},
            {"ma_url", ma_url},
            {"ca_file", ca_file},
            {"login_pem", login_pem},
            {"enable_nat", enable_nat},
            {"nat_script_url", nat_script_url},
            {"expiry_hours", expiry_hours},
            {"slice", slice},
            {"connect_via", connect_via}};
}

namespace {

class VirtualwallKind : public TargetKind {
public:
    std::optional<Refusal> refuse_stop() const override {
        return Refusal{"autostop.action: stop is not available on target virtualwall: a Virtual Wall slice's "
                       "nodes are released when it is deleted and cannot be held powered off",
                       "use action: destroy (the slice is deleted and its nodes go back to the testbed)"};
    }
    std::string name() const override { return "virtualwall"; }
    std::unique_ptr<TargetSection> defaults() const override { return std::make_unique<VirtualwallSpec>(); }
    std::string starter_body() const override { return virtualwall_starter_body(); }
    bool uses_node_groups() const override { return true; }

    void parse(SectionReader& r, const YAML::Node& n, Spec& spec) const override {
        const std::string p = "virtualwall";
        r.check_keys(n, p,
                     {"testbed", "project", "hardware_type", "disk_image", "link_capacity", "jfed_cli",
                      "expiry_hours", "slice", "connect_via", "login_pem", "enable_nat", "nat_script_url",
                      "client", "am_url", "sa_url", "ma_url", "ca_file"});
        auto& v = spec.target_section<VirtualwallSpec>();
        if (auto x = r.choice(n, "testbed", p, {"wall1", "wall2"})) v.testbed = *x;
        if (auto x = r.string(n, "project", p, true, "your Fed4FIRE project name")) v.project = *x;
        if (auto x = r.string(n, "hardware_type", p)) v.hardware_type = *x;
        if (auto x = r.string(n, "disk_image", p)) {
            if (!starts_with(*x, "urn:publicid:IDN+"))
                r.diags().error(
                    r.pos(n["disk_image"]),
                    "virtualwall.disk_image must be an image URN (got \"" + SectionReader::printable(*x) +
                        "\")",
                    "e.g. urn:publicid:IDN+wall2.ilabt.iminds.be+image+emulab-ops:UBUNTU22-64-STD");
            else
                v.disk_image = *x;
        }
        r.rate(n, "link_capacity", p, v.link_capacity_bps, 1'000'000, 100'000'000'000ULL, false);
        if (auto x = r.choice(n, "client", p, {"geni", "jfed-cli"})) v.client = *x;
        if (auto x = r.string(n, "jfed_cli", p)) v.jfed_cli = *x;
        if (auto x = r.string(n, "login_pem", p)) v.login_pem = *x;
        for (const char* key : {"am_url", "sa_url", "ma_url"})
            r.url(n, key, p, false, "e.g. https://www.wall2.ilabt.iminds.be:12369/protogeni/xmlrpc/am/3.0",
                  key[0] == 'a' ? v.am_url : (key[0] == 's' ? v.sa_url : v.ma_url));
        if (auto x = r.string(n, "ca_file", p)) v.ca_file = *x;
        if (v.client == "jfed-cli" && v.jfed_cli.empty())
            r.diags().error(r.pos(n["client"]), "virtualwall.client: jfed-cli needs virtualwall.jfed_cli",
                            "set jfed_cli to the experimenter CLI 1 (jar or wrapper), or use client: geni");
        if (v.client == "geni" && !v.jfed_cli.empty())
            r.diags().error(r.pos(n["jfed_cli"]), "virtualwall.jfed_cli is used only with client: jfed-cli",
                            "add `client: jfed-cli`, or remove jfed_cli (ddl speaks the GENI AM API itself)");
        if (!v.jfed_cli.empty() && v.login_pem.empty())
            r.diags().error(r.pos(n["jfed_cli"]), "virtualwall.jfed_cli needs virtualwall.login_pem",
                            "set login_pem to your iLab.t login file (certificate and decrypted key, as jFed "
                            "downloads it), which the jFed CLI signs in with");
        if (auto x = r.boolean(n, "enable_nat", p)) v.enable_nat = *x;
        r.url(n, "nat_script_url", p, true, "e.g. https://www.wall2.ilabt.iminds.be/enable-nat.sh",
              v.nat_script_url);
        if (auto x = r.integer(n, "expiry_hours", p, 1, 336)) v.expiry_hours = static_cast<int>(*x);
        if (auto x = r.choice(n, "connect_via", p, {"ipv6", "hostname", "ipv4"})) v.connect_via = *x;
        // GENI slice names: a letter, then letters, digits or '-', at most 19 characters.
        static const std::regex slice_re("^[a-zA-Z][-a-zA-Z0-9]{0,18}$");
        if (auto x = r.string(n, "slice", p)) {
            if (!std::regex_match(*x, slice_re))
                r.diags().error(r.pos(n["slice"]),
                                "virtualwall.slice must be a slice name (got \"" +
                                    SectionReader::printable(*x) + "\")",
                                "a letter, then letters, digits or '-', at most 19 characters");
            else
                v.slice = *x;
        } else if (!spec.name.empty() && !std::regex_match(spec.name, slice_re)) {
            std::string shorter = spec.name.substr(0, 19);
            while (shorter.back() == '-')
                shorter.pop_back();
            r.diags().error(r.pos(n),
                            "the cluster name \"" + spec.name + "\" is " + std::to_string(spec.name.size()) +
                                " characters, too long for a GENI slice name (at most 19)",
                            "set virtualwall.slice to a shorter name, e.g. \"" + shorter + "\"");
        }
    }
};

} // namespace

const TargetKind& virtualwall_kind() {
    static const VirtualwallKind kind;
    return kind;
}

} // namespace ddl
