#pragma once
// The spec's `lifetime` and `cost` keys: how long a cluster may live before `ddl gc --expired` destroys
// it, and what its node-hours and GPU-hours cost (docs/spec.md, "lifetime and cost").
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <yaml-cpp/yaml.h>

namespace ddl {

// Reads the top-level keys lifetime and cost of `doc` into `out`; every problem is reported.
void read_life(SectionReader& r, const YAML::Node& doc, LifeSpec& out);

} // namespace ddl
