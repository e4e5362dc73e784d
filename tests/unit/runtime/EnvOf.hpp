#pragma once
// A GetEnv that reads from a map instead of the process environment, for option-parsing tests. No
// node.env is read unless the map names one (DDL_NODE_ENV), whatever the machine has in /etc/ddl.
#include "runtime/CommOptions.hpp"

#include <map>
#include <string>
#include <string_view>

namespace ddl::runtime::test {

inline GetEnv env_of(const std::map<std::string, std::string>& vars) {
    return [vars](const char* name) -> const char* {
        auto it = vars.find(name);
        if (it == vars.end() && std::string_view(name) == "DDL_NODE_ENV") return "";
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

} // namespace ddl::runtime::test
