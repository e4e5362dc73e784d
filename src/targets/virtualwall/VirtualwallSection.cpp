#include "targets/virtualwall/VirtualwallSection.hpp"

#include "targets/virtualwall/SlicesCli.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <iterator>
#include <regex>

namespace ddl {

nlohmann::json VirtualwallSpec::to_json() const {
    if (client == "slices")
        return {{"client", client}, {"project", project}, {"site", site},         {"experiment", experiment},
                {"flavor", flavor}, {"image", image},     {"duration", duration}, {"slices_cli", slices_cli}};
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

// The keys only the GENI/jFed path reads: a spec with any of them and no `client` is a legacy GENI spec.
const char* const k_geni_keys[] = {"testbed",      "hardware_type", "disk_image",     "login_pem", "jfed_cli",
                                   "am_url",       "sa_url",        "ma_url",         "ca_file",   "slice",
                                   "expiry_hours", "connect_via",   "nat_script_url", "enable_nat"};
const char* const k_slices_keys[] = {"site", "experiment", "flavor", "image", "duration", "slices_cli"};

// client: slices (SLICES Basic Infrastructure through the `slices` CLI).
void parse_slices(SectionReader& r, const YAML::Node& n, VirtualwallSpec& v) {
    const std::string p = "virtualwall";
    for (const char* key : k_geni_keys)
        if (n[key])
            r.diags().error(r.pos(n[key]),
                            std::string("virtualwall.") + key +
                                " is for client: geni or jfed-cli, not slices",
                            "remove it (SLICES Basic Infrastructure takes site, flavor, image and duration), "
                            "or set client: geni for the GENI AM API");
    if (n["link_capacity"])
        r.diags().error(r.pos(n["link_capacity"]),
                        "virtualwall.link_capacity cannot be honoured on SLICES Basic Infrastructure: it "
                        "gives nodes on the site's network without link shaping",
                        "remove link_capacity (measure the network with `ddl bench allreduce`), or use "
                        "client: geni, whose RSpec LAN has a capacity");
    if (auto x = r.string(n, "site", p)) v.site = *x;
    if (auto x = r.string(n, "flavor", p)) v.flavor = *x;
    if (auto x = r.string(n, "image", p)) v.image = *x;
    if (auto x = r.string(n, "slices_cli", p)) v.slices_cli = *x;
    static const std::regex name_re("^[a-zA-Z][-a-zA-Z0-9_]{0,62}$");
    if (auto x = r.string(n, "experiment", p)) {
        if (!std::regex_match(*x, name_re))
            r.diags().error(r.pos(n["experiment"]),
                            "virtualwall.experiment must be an experiment name (got \"" +
                                SectionReader::printable(*x) + "\")",
                            "a letter, then letters, digits, '-' or '_', at most 63 characters");
        else
            v.experiment = *x;
    }
    if (auto x = r.string(n, "duration", p)) {
        auto secs = slices_duration_seconds(*x);
        if (!secs)
            r.diags().error(r.pos(n["duration"]),
                            "virtualwall.duration must be a number and a unit, m h d or w (got \"" +
                                SectionReader::printable(*x) + "\")",
                            "e.g. 8h, 3d or 2w");
        else if (*secs > k_slices_max_duration_s)
            r.diags().error(r.pos(n["duration"]),
                            "virtualwall.duration " + *x +
                                " is longer than SLICES Basic Infrastructure gives a resource (89d at most)",
                            "ask for 89d or less now and extend later with `ddl renew --hours N`");
        else
            v.duration = *x;
    }
}

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
        r.check_keys(n, p, {"testbed",    "project",        "hardware_type", "disk_image",  "link_capacity",
                            "jfed_cli",   "expiry_hours",   "slice",         "connect_via", "login_pem",
                            "enable_nat", "nat_script_url", "client",        "am_url",      "sa_url",
                            "ma_url",     "ca_file",        "site",          "experiment",  "flavor",
                            "image",      "duration",       "slices_cli"});
        auto& v = spec.target_section<VirtualwallSpec>();
        // A spec that names no client is a SLICES one unless it carries the GENI path's keys.
        v.client = std::any_of(std::begin(k_geni_keys), std::end(k_geni_keys),
                               [&](const char* key) { return static_cast<bool>(n[key]); })
                       ? "geni"
                       : "slices";
        if (auto x = r.choice(n, "client", p, {"slices", "geni", "jfed-cli"})) v.client = *x;
        if (v.client == "slices") {
            if (auto x = r.string(n, "project", p)) v.project = *x;
            parse_slices(r, n, v);
            return;
        }
        for (const char* key : k_slices_keys)
            if (n[key])
                r.diags().error(r.pos(n[key]),
                                std::string("virtualwall.") + key + " is for client: slices, not " + v.client,
                                "remove it, or set client: slices (SLICES Basic Infrastructure)");
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
