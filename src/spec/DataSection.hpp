#pragma once
// The spec's `datasets` key (docs/spec.md, "datasets"): the data jobs read, where it comes from (a folder
// on this machine, a path in the cluster's shared folder, an archive's URL) and where it is staged.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <yaml-cpp/yaml.h>

namespace ddl {

// Reads the top-level key datasets of `doc` into `spec.datasets`; every problem is reported. Needs
// spec.services read first (to: shared and shared: sources need the shared folder). A relative folder is
// resolved against the folder of `spec_file` (when the reader checks files, it must be a folder there).
void read_datasets(SectionReader& r, const YAML::Node& doc, const std::string& spec_file, Spec& spec);

// Whether `name` may name a dataset: [a-z][a-z0-9_]*, at most 40 characters, not dir or dir_default
// (DDL_DATA_DIR is ddl's own).
bool is_dataset_name(const std::string& name);

} // namespace ddl
