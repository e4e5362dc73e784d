#include "provision/DeployPlan.hpp"

#include <algorithm>
#include <array>

namespace ddl {
namespace {

constexpr std::array<const char*, 5> k_actions{"create", "update", "replace", "delete", "keep"};

// Terraform's plan symbols, so the lines read the way its users know.
const char* symbol(const std::string& action) {
    if (action == "create") return "+";
    if (action == "update") return "~";
    if (action == "replace") return "-/+";
    if (action == "delete") return "-";
    return " ";
}

const PlannedNode* find_node(const std::vector<PlannedNode>& nodes, const std::string& name) {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const PlannedNode& n) { return n.name == name; });
    return it == nodes.end() ? nullptr : &*it;
}

} // namespace

std::vector<PlannedChange> node_changes(const std::vector<PlannedNode>& before,
                                        const std::vector<PlannedNode>& after) {
    std::vector<PlannedChange> out;
    for (const auto& n : after) {
        const PlannedNode* old = find_node(before, n.name);
        if (!old)
            out.push_back({"create", "node", n.name, n.detail});
        else if (old->detail != n.detail)
            out.push_back({"update", "node", n.name, old->detail + " -> " + n.detail});
        else
            out.push_back({"keep", "node", n.name, n.detail});
    }
    for (const auto& n : before)
        if (!find_node(after, n.name)) out.push_back({"delete", "node", n.name, n.detail});
    return out;
}

int DeployPlan::count(const std::string& kind, const std::string& action) const {
    return static_cast<int>(std::count_if(changes.begin(), changes.end(), [&](const PlannedChange& c) {
        return c.kind == kind && c.action == action;
    }));
}

bool DeployPlan::touches_existing() const {
    return std::any_of(changes.begin(), changes.end(),
                       [](const PlannedChange& c) { return c.touches_existing(); });
}

nlohmann::json DeployPlan::to_json() const {
    nlohmann::json j{{"cluster", cluster}, {"target", target}, {"exists", exists}};
    j["changes"] = nlohmann::json::array();
    for (const auto& c : changes)
        j["changes"].push_back(
            {{"action", c.action}, {"kind", c.kind}, {"address", c.address}, {"detail", c.detail}});
    nlohmann::json summary = nlohmann::json::object();
    for (const char* kind : {"node", "resource", "config"})
        for (const char* a : k_actions)
            summary[std::string(kind) + "s"][a] = count(kind, a);
    j["summary"] = summary;
    j["touches_existing"] = touches_existing();
    j["notes"] = notes;
    return j;
}

std::string DeployPlan::to_text() const {
    std::string out = "cluster " + cluster + " (target " + target + ", " +
                      (exists ? "deployed: changes against its state" : "new") + ")\n";
    for (const char* kind : {"node", "resource", "config"}) {
        for (const auto& c : changes) {
            if (c.kind != kind || c.action == "keep") continue;
            out += "  " + std::string(symbol(c.action)) + " " + c.action + " " + c.kind + " " + c.address +
                   (c.detail.empty() ? "" : " (" + c.detail + ")") + "\n";
        }
    }
    for (const auto& n : notes)
        out += "  note: " + n + "\n";
    auto n = [&](const char* kind, const char* action) { return std::to_string(count(kind, action)); };
    out += "Nodes: " + n("node", "create") + " to create, " + n("node", "update") + " to update, " +
           n("node", "replace") + " to replace, " + n("node", "delete") + " to delete (" + n("node", "keep") +
           " unchanged).\n";
    const bool resources = std::any_of(changes.begin(), changes.end(),
                                       [](const PlannedChange& c) { return c.kind == "resource"; });
    if (resources)
        out += "Resources: " + std::to_string(count("resource", "create") + count("resource", "replace")) +
               " to add, " + n("resource", "update") + " to change, " +
               std::to_string(count("resource", "delete") + count("resource", "replace")) + " to destroy.\n";
    if (const int settings = count("config", "update"); settings > 0)
        out += "Configuration: " + std::to_string(settings) +
               " setting(s) to change; configure applies them to every node.\n";
    return out;
}

} // namespace ddl
