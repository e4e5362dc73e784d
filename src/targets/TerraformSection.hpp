#pragma once
// The spec side every Terraform target's section shares (the openstack and aws kinds): who may reach the
// master's SSH port, which the cloud exposes to the internet, and the `terraform` key naming the tool.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"
#include "spec/TargetKind.hpp"

#include <string>
#include <utility>

namespace ddl {

// What the section of every Terraform target holds besides its cloud's own keys.
struct TerraformSpec : TargetSection {
    std::string terraform; // "terraform", "tofu" or an absolute path; empty: terraform, else tofu, from PATH
};

// The kind of every Terraform target: named node groups, each with a flavor (the cloud's machine type), and
// access.allowed_cidrs required; check_cloud adds the cloud's own checks of the whole document.
class TerraformKind : public TargetKind {
public:
    explicit TerraformKind(std::string name) : m_name(std::move(name)) {}
    std::string name() const override { return m_name; }
    bool uses_node_groups() const override { return true; }
    bool flavor_required() const override { return true; }
    // The machines stop and start again keeping their disks (`ddl stop`: common.tf's `stopped`); a cloud
    // that cannot for some clusters says so in check_cloud (AWS: one-time Spot Instances).
    std::optional<Refusal> refuse_stop() const override { return std::nullopt; }
    // The module gives the master a credential scoped to the cluster's servers (common.tf's
    // `node_credential`): an IAM instance profile on AWS, an application credential on OpenStack.
    std::optional<Refusal> refuse_node_credential() const override { return std::nullopt; }
    void check(SectionReader& r, const YAML::Node& doc, const Spec& spec) const final;
    // parse_cloud, then the `terraform` key.
    void parse(SectionReader& r, const YAML::Node& n, Spec& spec) const final;

protected:
    virtual void check_cloud(SectionReader& r, const YAML::Node& doc, const Spec& spec) const;
    // The section's keys (check_keys lists "terraform" among them) but `terraform`.
    virtual void parse_cloud(SectionReader& r, const YAML::Node& n, Spec& spec) const = 0;

private:
    std::string m_name;
};

// access.allowed_cidrs must be given: the master's SSH port faces the internet, and who may reach it is
// never left to a default (an explicit empty list is judged by the access section's own rules).
void require_allowed_cidrs(SectionReader& r, const YAML::Node& doc, const Spec& spec);

// `<prefix>.terraform`: terraform, tofu or an absolute path, stored in `tool`; left out, the driver takes
// terraform, else tofu, from PATH.
void read_terraform_tool(SectionReader& r, const YAML::Node& n, const std::string& prefix, std::string& tool);

} // namespace ddl
