#pragma once
#include "state/StateStore.hpp"
#include "util/Result.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ddl::cli {

// Resolves what the user named (a cluster name, a spec file, or nothing when exactly one cluster
// exists in the state folder) to a cluster name.
Result<std::string> resolve_cluster(const StateStore& store, const std::string& ref);

// Whether `ref` names a spec file (*.yaml, *.yml, or a path) rather than a cluster.
bool names_spec_file(const std::string& ref);

// Every cluster this machine knows with the state folder that holds it: the clusters of each state folder
// this user deployed from (state/KnownFolders.hpp), and the local target's machine-wide registry (which
// also names clusters whose folder is gone). (name, folder) pairs, each once.
std::vector<std::pair<std::string, std::string>> recorded_clusters();

// Why cluster `name` (named by `ref`) is not in the state folder, with the next step: `ddl deploy FILE`
// for a spec not deployed from here, the state folder that deployed it where this machine records one
// (the local target's registry), or the nearest name there ("did you mean").
Error cluster_not_found(const StateStore& store, const std::string& ref, const std::string& name);

} // namespace ddl::cli
