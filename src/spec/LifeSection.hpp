#pragma once
// The spec's `lifetime`, `autostop` and `cost` keys: how long a cluster may live, and how long it may stay
// idle, before `ddl gc --expired` ends it, and what its node-hours and GPU-hours cost (docs/spec.md,
// "lifetime, autostop, cost").
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"
#include "spec/TargetKind.hpp"

#include <yaml-cpp/yaml.h>

namespace ddl {

// Reads the top-level keys lifetime, autostop and cost of `doc` into `out`; every problem is reported.
// `kind`: the spec's target (nullptr when unknown), which says whether autostop.action: stop can work.
void read_life(SectionReader& r, const YAML::Node& doc, LifeSpec& out, const TargetKind* kind);

} // namespace ddl
