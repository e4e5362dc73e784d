#pragma once
// The spec's `services` keys: the shared folder (nfs), JupyterLab on the master and monitoring
// (docs/spec.md, "services").
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"
#include "spec/TargetKind.hpp"

#include <optional>
#include <string>
#include <yaml-cpp/yaml.h>

namespace ddl {

// Reads the `services` map `n` into spec.services; every problem is reported. `kind`: the spec's target
// (nullptr when unknown), read after its own section, which says which services its nodes can run.
void read_services(SectionReader& r, const YAML::Node& n, Spec& spec, const TargetKind* kind);

// What `path` would cover as a mount point ("the system folder /etc", "a .ssh folder"), for a message;
// nullopt where a mount there hides nothing the node needs.
std::optional<std::string> system_folder_under(const std::string& path);

} // namespace ddl
