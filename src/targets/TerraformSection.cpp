#include "targets/TerraformSection.hpp"

#include "util/Strings.hpp"

namespace ddl {

void require_allowed_cidrs(SectionReader& r, const YAML::Node& doc, const Spec& spec) {
    auto access = doc["access"];
    bool had_cidrs = access.IsDefined() && access.IsMap() && access["allowed_cidrs"].IsDefined();
    if (spec.access.allowed_cidrs.empty() && !had_cidrs)
        r.diags().error(r.pos(doc), "missing required key \"access.allowed_cidrs\"",
                        "list the networks allowed to reach the master over SSH, e.g. [203.0.113.0/24]");
}

void TerraformKind::check(SectionReader& r, const YAML::Node& doc, const Spec& spec) const {
    require_allowed_cidrs(r, doc, spec);
    check_cloud(r, doc, spec);
}

void TerraformKind::parse(SectionReader& r, const YAML::Node& n, Spec& spec) const {
    parse_cloud(r, n, spec);
    read_terraform_tool(r, n, m_name, spec.target_section<TerraformSpec>().terraform);
}

void TerraformKind::check_cloud(SectionReader& /*r*/, const YAML::Node& /*doc*/, const Spec& /*spec*/) const {
}

void read_terraform_tool(SectionReader& r, const YAML::Node& n, const std::string& prefix,
                         std::string& tool) {
    auto v = r.string(n, "terraform", prefix);
    if (!v) return;
    if (*v != "terraform" && *v != "tofu" && !starts_with(*v, "/"))
        r.diags().error(r.pos(n["terraform"]),
                        prefix + ".terraform must be terraform, tofu or an absolute path (got \"" +
                            SectionReader::printable(*v) + "\")",
                        "leave it out to use terraform, else tofu, from PATH");
    else
        tool = *v;
}

} // namespace ddl
