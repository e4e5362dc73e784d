#pragma once
#include "util/Result.hpp"

#include <string>

namespace ddl::cli {

// A commented starter cluster.yaml for `target` that passes `ddl validate` as written.
Result<std::string> starter_spec(const std::string& target, const std::string& name);

} // namespace ddl::cli
