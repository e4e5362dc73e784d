#pragma once
// A GetEnv that reads from a map instead of the process environment, for option-parsing tests.
#include "runtime/CommOptions.hpp"

#include <map>
#include <string>

namespace ddl::runtime::test {

inline GetEnv env_of(const std::map<std::string, std::string>& vars) {
    return [vars](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

} // namespace ddl::runtime::test
