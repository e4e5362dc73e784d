#include "spec/SpecDrift.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <yaml-cpp/yaml.h>

namespace ddl {
namespace {

// The top-level mapping of `text`, or an error.
YAML::Node top_level(const std::string& text, std::string& error) {
    try {
        YAML::Node doc = YAML::Load(text);
        if (!doc.IsMap()) error = "it is not a mapping of keys";
        return doc;
    } catch (const YAML::Exception& e) {
        error = e.what();
        return {};
    }
}

// Whether two YAML nodes hold the same data: scalars by their text, sequences item by item, mappings key by
// key; flow or block style, comments and key order aside.
bool same(const YAML::Node& a, const YAML::Node& b) {
    if (a.Type() != b.Type()) return false;
    switch (a.Type()) {
    case YAML::NodeType::Scalar:
        return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!same(a[i], b[i])) return false;
        return true;
    case YAML::NodeType::Map:
        if (a.size() != b.size()) return false;
        for (const auto& kv : a) {
            const YAML::Node other = b[kv.first.as<std::string>("")];
            if (!other.IsDefined() || !same(kv.second, other)) return false;
        }
        return true;
    default:
        return true; // both null or both undefined
    }
}

} // namespace

bool SpecDrift::work_changed() const {
    return std::any_of(keys.begin(), keys.end(),
                       [](const std::string& k) { return k == "workdir" || k == "setup" || k == "env"; });
}

std::string SpecDrift::line() const {
    if (!error.empty())
        return file + " changed since deploy and does not read (" + error + "); `ddl validate " + file +
               "` shows where";
    return file + " changed since deploy: " + join(keys, ", ") + "; `ddl deploy " + file +
           "` applies it (`ddl plan " + file + "` shows how)";
}

SpecDrift spec_drift(const std::string& file, const std::string& deployed, const std::string& edited) {
    SpecDrift d;
    d.file = file;
    if (deployed == edited) return d;
    std::string old_error;
    const YAML::Node before = top_level(deployed, old_error);
    const YAML::Node now = top_level(edited, d.error);
    if (!d.error.empty() || !old_error.empty()) return d;
    for (const auto& kv : now) {
        const auto key = kv.first.as<std::string>("");
        const YAML::Node was = before[key];
        if (!was.IsDefined() || !same(was, kv.second)) d.keys.push_back(key);
    }
    for (const auto& kv : before) {
        const auto key = kv.first.as<std::string>("");
        if (!now[key].IsDefined()) d.keys.push_back(key);
    }
    return d;
}

} // namespace ddl
