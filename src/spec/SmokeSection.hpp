#pragma once
// The spec's `smoke` section: the user's own checks for `ddl smoke-test` (docs/spec.md, "smoke").
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <yaml-cpp/yaml.h>

namespace ddl {

// Reads smoke.checks: a list of {name, run, on, timeout, expect_exit}; every problem is reported.
void read_smoke(SectionReader& r, const YAML::Node& n, SmokeSpec& out);

} // namespace ddl
