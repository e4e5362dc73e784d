#pragma once
// Typed access to a parsed YAML document that turns every mismatch into a positioned diagnostic.
// This is the one place where yaml-cpp's 0-based marks become ddl's 1-based positions.
#include "core/Diagnostics.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace ddl {

class YamlReader {
public:
    YamlReader(std::string file, Diagnostics& diags) : m_file(std::move(file)), m_diags(diags) {}

    SourcePos pos(const YAML::Node& node) const;
    SourcePos pos(const YAML::Mark& mark) const;
    Diagnostics& diags() { return m_diags; }
    const std::string& file() const { return m_file; }

    // True when `node` is a map; otherwise reports "<path> must be a map".
    bool expect_map(const YAML::Node& node, const std::string& path, const std::string& hint = {});
    // Reports keys not in `allowed` (with "did you mean") and keys given twice.
    void check_keys(const YAML::Node& map, const std::string& path, const std::vector<std::string>& allowed);
    // The value under `key`, or an undefined node; when `required`, a missing key is reported at the map.
    YAML::Node child(const YAML::Node& map, const std::string& key, const std::string& path, bool required,
                     const std::string& hint = {});

    std::optional<std::string> string(const YAML::Node& map, const std::string& key, const std::string& path,
                                      bool required = false, const std::string& hint = {});
    std::optional<std::int64_t> integer(const YAML::Node& map, const std::string& key,
                                        const std::string& path, std::int64_t min, std::int64_t max,
                                        bool required = false);
    std::optional<bool> boolean(const YAML::Node& map, const std::string& key, const std::string& path);
    std::optional<std::string> choice(const YAML::Node& map, const std::string& key, const std::string& path,
                                      const std::vector<std::string>& allowed, bool required = false);
    std::optional<std::vector<std::string>> string_list(const YAML::Node& map, const std::string& key,
                                                        const std::string& path);

    static std::string join_path(const std::string& parent, const std::string& key);
    static std::string describe(const YAML::Node& node);

private:
    bool scalar(const YAML::Node& node, const std::string& path, const std::string& expected);

    std::string m_file;
    Diagnostics& m_diags;
};

} // namespace ddl
