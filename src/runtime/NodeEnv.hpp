#pragma once
// NodeEnv: the node's identity file that ddl writes on every node at configure (/etc/ddl/node.env,
// provision/NodeFiles.cpp): `KEY=VALUE` lines, `#` comments, blank lines. The runtime takes the master's
// address and port from it (DDL_MASTER_ADDR, DDL_MASTER_PORT) when no launcher variable gives them.
#include "util/Result.hpp"

#include <map>
#include <optional>
#include <string>

namespace ddl::runtime {

inline constexpr const char* k_node_env_path = "/etc/ddl/node.env";

struct NodeEnvValue {
    std::string value;
    int line = 0; // from 1
};

struct NodeEnv {
    std::string path;
    std::map<std::string, NodeEnvValue> values;

    // The value of `key`, or nullptr when the file does not set it (or sets it empty).
    [[nodiscard]] const NodeEnvValue* find(const std::string& key) const;
};

// Parses the text of a node.env file. A line that is not blank, not a comment and not KEY=VALUE (KEY a
// shell name) is an Error "PATH:LINE: …". A value in matching single or double quotes loses them.
[[nodiscard]] ddl::Result<NodeEnv> parse_node_env(const std::string& text, const std::string& path);

// Reads and parses `path`: nullopt when there is no such file, an Error when it exists and cannot be read
// or parsed.
[[nodiscard]] ddl::Result<std::optional<NodeEnv>> read_node_env(const std::string& path);

} // namespace ddl::runtime
