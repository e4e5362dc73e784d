#pragma once
// The spec side every Terraform target's section shares (the openstack and aws kinds): who may reach the
// master's SSH port, which the cloud exposes to the internet, and the `terraform` key naming the tool.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <string>

namespace ddl {

// access.allowed_cidrs must be given: the master's SSH port faces the internet, and who may reach it is
// never left to a default (an explicit empty list is judged by the access section's own rules).
void require_allowed_cidrs(SectionReader& r, const YAML::Node& doc, const Spec& spec);

// `<prefix>.terraform`: terraform, tofu or an absolute path, stored in `tool`; left out, the driver takes
// terraform, else tofu, from PATH.
void read_terraform_tool(SectionReader& r, const YAML::Node& n, const std::string& prefix, std::string& tool);

} // namespace ddl
