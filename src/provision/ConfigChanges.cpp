#include "provision/ConfigChanges.hpp"

namespace ddl {
namespace {

std::string shown(const nlohmann::json& v) {
    if (v.is_null()) return "unset";
    if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
    return v.dump();
}

// Leaves of `a` and `b` under `path` that differ, as changes; objects are walked, anything else compared.
void diff(const std::string& path, const nlohmann::json& a, const nlohmann::json& b,
          std::vector<PlannedChange>& out) {
    if (a.is_object() && b.is_object()) {
        for (const auto& [key, value] : a.items())
            diff(path.empty() ? key : path + "." + key, value, b.contains(key) ? b[key] : nlohmann::json(),
                 out);
        for (const auto& [key, value] : b.items())
            if (!a.contains(key)) diff(path.empty() ? key : path + "." + key, nlohmann::json(), value, out);
        return;
    }
    if (a == b) return;
    out.push_back({"update", "config", path, shown(a) + " -> " + shown(b)});
}

} // namespace

std::vector<PlannedChange> config_changes(const Spec& deployed, const Spec& next) {
    auto a = deployed.to_json();
    auto b = next.to_json();
    // The nodes and the target's section are the target's plan; the smoke test's settings and the name
    // change nothing on the nodes.
    for (const std::string& key :
         {std::string("apiVersion"), std::string("name"), std::string("target"), std::string("nodes"),
          std::string("smoke"), deployed.target, next.target}) {
        a.erase(key);
        b.erase(key);
    }
    // Who may connect is the target's too: its security groups are in its own plan.
    for (auto* j : {&a, &b}) {
        if (!j->contains("access")) continue;
        (*j)["access"].erase("allowed_cidrs");
        (*j)["access"].erase("allow_any_source");
    }
    std::vector<PlannedChange> out;
    diff("", a, b, out);
    return out;
}

std::vector<PlannedChange> work_changes(const WorkSpec& deployed, const WorkSpec& next) {
    std::vector<PlannedChange> out;
    if (deployed.workdir != next.workdir)
        out.push_back(
            {"update", "config", "workdir", shown(deployed.workdir) + " -> " + shown(next.workdir)});
    if (deployed.setup != next.setup) {
        std::size_t i = 0;
        while (i < deployed.setup.size() && i < next.setup.size() && deployed.setup[i] == next.setup[i])
            ++i;
        auto at = [](const std::vector<std::string>& v, std::size_t k) {
            return k < v.size() ? nlohmann::json(v[k]) : nlohmann::json();
        };
        out.push_back({"update", "config", "setup[" + std::to_string(i) + "]",
                       shown(at(deployed.setup, i)) + " -> " + shown(at(next.setup, i)) +
                           "; runs on every node at the next deploy"});
    }
    auto find = [](const std::vector<EnvVar>& env, const std::string& name) -> const EnvVar* {
        for (const auto& e : env)
            if (e.name == name) return &e;
        return nullptr;
    };
    for (const auto& e : next.env) {
        const EnvVar* was = find(deployed.env, e.name);
        if (!was)
            out.push_back({"update", "config", "env." + e.name, "added"});
        else if (!(*was == e))
            out.push_back({"update", "config", "env." + e.name, "value changed"});
    }
    for (const auto& e : deployed.env)
        if (!find(next.env, e.name)) out.push_back({"update", "config", "env." + e.name, "removed"});
    return out;
}

std::vector<std::string> config_change_lines(const std::vector<PlannedChange>& changes) {
    std::vector<std::string> lines;
    lines.reserve(changes.size());
    for (const auto& c : changes)
        lines.push_back("update " + c.address + " on every node (" + c.detail + ")");
    return lines;
}

} // namespace ddl
