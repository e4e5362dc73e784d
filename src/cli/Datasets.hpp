#pragma once
// Where the spec's datasets are on the nodes (docs/spec.md, "datasets") and the variables jobs find them
// by: the one place the staged paths are made, for `ddl data`, `ddl run` and the benchmarks.
#include "spec/Spec.hpp"

#include <map>
#include <string>

namespace ddl::cli {

// Where every node keeps the datasets staged to its own disk (to: local), one folder each.
inline constexpr const char* k_local_data_root = "/var/lib/ddl/data";

// The folder every node reads dataset `d` from: <services.nfs.mount>/ddl-data/<name> for to: shared,
// /var/lib/ddl/data/<name> (on each node's own disk) for to: local.
std::string dataset_path(const Spec& spec, const DatasetSpec& d);

// DDL_DATA_<NAME uppercased>.
std::string dataset_env_name(const DatasetSpec& d);

// DDL_DATA_<NAME> = dataset_path for every dataset of the spec: what every job's ranks get.
std::map<std::string, std::string> dataset_env(const Spec& spec);

// The dataset called `name`; nullptr when the spec has none by that name.
const DatasetSpec* find_dataset(const Spec& spec, const std::string& name);

} // namespace ddl::cli
