#pragma once
// The spec side of every target (its section's keys, defaults and rules) and the spec loading that needs
// all of them. Linked without the targets' drivers, so a program that only reads specs (the spec fuzzer)
// compiles only this part.
#include "spec/SpecLoader.hpp"
#include "spec/TargetKind.hpp"

#include <string>
#include <vector>

namespace ddl {

// Every target's kind in the order of src/targets/TargetList.hpp.
const TargetKinds& target_kinds();
std::vector<std::string> target_names();
// The kind named `name`, or nullptr.
const TargetKind* find_target_kind(const std::string& name);

// SpecLoader with every target.
SpecLoadResult load_spec_file(const std::string& path, SpecOrigin origin = SpecOrigin::file);
SpecLoadResult load_spec_string(const std::string& text, const std::string& display_name,
                                SpecOrigin origin = SpecOrigin::file);

} // namespace ddl
