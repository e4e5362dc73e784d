#pragma once
#include "state/StateStore.hpp"
#include "util/Result.hpp"

#include <string>

namespace ddl::cli {

// Resolves what the user named (a cluster name, a spec file, or nothing when exactly one cluster
// exists in the state folder) to a cluster name.
Result<std::string> resolve_cluster(const StateStore& store, const std::string& ref);

} // namespace ddl::cli
