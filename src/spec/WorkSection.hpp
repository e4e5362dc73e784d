#pragma once
// The spec's keys for the researcher's own code (docs/spec.md, "workdir, setup, env"): the folder synced to
// the nodes, the setup programs run on every node, the variables every rank and setup step gets.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <yaml-cpp/yaml.h>

namespace ddl {

// Reads the top-level keys workdir, setup and env of `doc` into `out`; every problem is reported. A
// relative workdir is resolved against the folder of `spec_file` (when the reader checks files, it must be a
// folder there).
void read_work(SectionReader& r, const YAML::Node& doc, const std::string& spec_file, WorkSpec& out);

// Whether `name` is a variable name a spec's env may set: a shell name, not one of the launcher's own
// (DDL_*, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
bool is_settable_env_name(const std::string& name);

} // namespace ddl
