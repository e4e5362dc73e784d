#include "spec/YamlReader.hpp"

#include "util/Strings.hpp"

#include <set>

namespace ddl {

SourcePos YamlReader::pos(const YAML::Mark& mark) const {
    if (mark.is_null()) return {m_file, 1, 1};
    return {m_file, mark.line + 1, mark.column + 1};
}

SourcePos YamlReader::pos(const YAML::Node& node) const {
    return pos(node.Mark());
}

std::string YamlReader::join_path(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
}

std::string YamlReader::describe(const YAML::Node& node) {
    switch (node.Type()) {
    case YAML::NodeType::Null:
        return "nothing";
    case YAML::NodeType::Sequence:
        return "a list";
    case YAML::NodeType::Map:
        return "a map";
    case YAML::NodeType::Scalar: {
        std::string s = node.Scalar();
        if (s.size() > 40) s = s.substr(0, 37) + "...";
        return "\"" + s + "\"";
    }
    default:
        return "nothing";
    }
}

bool YamlReader::expect_map(const YAML::Node& node, const std::string& path, const std::string& hint) {
    if (node.IsMap()) return true;
    m_diags.error(pos(node), path + " must be a map of keys (got " + describe(node) + ")", hint);
    return false;
}

void YamlReader::check_keys(const YAML::Node& map, const std::string& path,
                            const std::vector<std::string>& allowed) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
        // A copy: the iterator hands out a temporary pair, so a reference would dangle.
        const YAML::Node key_node = it->first;
        if (!key_node.IsScalar()) {
            m_diags.error(pos(key_node),
                          "keys in " + (path.empty() ? std::string("the spec") : path) + " must be names");
            continue;
        }
        const std::string& key = key_node.Scalar();
        if (!seen.insert(key).second) {
            m_diags.error(pos(key_node), "key \"" + join_path(path, key) + "\" is given twice",
                          "remove one of them; YAML keeps only one and ddl will not guess which");
            continue;
        }
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        std::string where = path.empty() ? "at the top level" : "in " + path;
        if (auto near = closest_match(key, allowed))
            m_diags.error(pos(key_node), "unknown key \"" + key + "\" " + where,
                          "did you mean \"" + *near + "\"?");
        else
            m_diags.error(pos(key_node), "unknown key \"" + key + "\" " + where,
                          "allowed keys: " + join(allowed, ", "));
    }
}

YAML::Node YamlReader::child(const YAML::Node& map, const std::string& key, const std::string& path,
                             bool required, const std::string& hint) {
    if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    YAML::Node v = map[key];
    if (!v.IsDefined() && required) {
        std::string where = path.empty() ? "" : " in " + path;
        m_diags.error(pos(map), "missing required key \"" + key + "\"" + where, hint);
    }
    return v;
}

bool YamlReader::scalar(const YAML::Node& node, const std::string& path, const std::string& expected) {
    if (node.IsScalar()) return true;
    m_diags.error(pos(node), path + " must be " + expected + " (got " + describe(node) + ")");
    return false;
}

std::optional<std::string> YamlReader::string(const YAML::Node& map, const std::string& key,
                                              const std::string& path, bool required,
                                              const std::string& hint) {
    auto v = child(map, key, path, required, hint);
    if (!v.IsDefined()) return std::nullopt;
    std::string full = join_path(path, key);
    if (!scalar(v, full, "a string")) return std::nullopt;
    return v.Scalar();
}

std::optional<std::int64_t> YamlReader::integer(const YAML::Node& map, const std::string& key,
                                                const std::string& path, std::int64_t min, std::int64_t max,
                                                bool required) {
    auto v = child(map, key, path, required);
    if (!v.IsDefined()) return std::nullopt;
    std::string full = join_path(path, key);
    std::string range = std::to_string(min) + "-" + std::to_string(max);
    if (!scalar(v, full, "an integer " + range)) return std::nullopt;
    auto n = parse_int(v.Scalar());
    if (!n) {
        bool digits = !v.Scalar().empty() && v.Scalar().find_first_not_of("-0123456789") == std::string::npos;
        m_diags.error(pos(v), full + " must be " + (digits ? "" : "an integer ") + range + " (got " +
                                  describe(v) + ")");
        return std::nullopt;
    }
    if (*n < min || *n > max) {
        m_diags.error(pos(v), full + " must be " + range + " (got " + std::to_string(*n) + ")");
        return std::nullopt;
    }
    return n;
}

std::optional<bool> YamlReader::boolean(const YAML::Node& map, const std::string& key,
                                        const std::string& path) {
    auto v = child(map, key, path, false);
    if (!v.IsDefined()) return std::nullopt;
    std::string full = join_path(path, key);
    if (!scalar(v, full, "true or false")) return std::nullopt;
    const std::string& s = v.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
    m_diags.error(pos(v), full + " must be true or false (got " + describe(v) + ")");
    return std::nullopt;
}

std::optional<std::string> YamlReader::choice(const YAML::Node& map, const std::string& key,
                                              const std::string& path,
                                              const std::vector<std::string>& allowed, bool required) {
    auto v = child(map, key, path, required, required ? "one of: " + join(allowed, ", ") : "");
    if (!v.IsDefined()) return std::nullopt;
    std::string full = join_path(path, key);
    if (!scalar(v, full, "one of " + join(allowed, ", "))) return std::nullopt;
    const std::string& s = v.Scalar();
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
    auto near = closest_match(s, allowed);
    m_diags.error(pos(v), full + " must be one of " + join(allowed, ", ") + " (got " + describe(v) + ")",
                  near ? "did you mean \"" + *near + "\"?" : "");
    return std::nullopt;
}

std::optional<std::vector<std::string>> YamlReader::string_list(const YAML::Node& map, const std::string& key,
                                                                const std::string& path) {
    auto v = child(map, key, path, false);
    if (!v.IsDefined()) return std::nullopt;
    std::string full = join_path(path, key);
    if (!v.IsSequence()) {
        m_diags.error(pos(v), full + " must be a list of strings (got " + describe(v) + ")",
                      "write it as [a, b] or one \"- item\" per line");
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (!scalar(v[i], full + "[" + std::to_string(i) + "]", "a string")) return std::nullopt;
        out.push_back(v[i].Scalar());
    }
    return out;
}

} // namespace ddl
