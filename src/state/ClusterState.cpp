#include "state/ClusterState.hpp"

#include "util/UtcTime.hpp"

#include <algorithm>
#include <ctime>

namespace ddl {

bool ClusterState::phase_done(const std::string& name) const {
    auto it = phases.find(name);
    return it != phases.end() && it->second.done;
}

void ClusterState::mark_done(const std::string& name, const std::string& when) {
    phases[name] = {true, when};
}

void ClusterState::reset_phases_from(const std::vector<std::string>& order, const std::string& first) {
    auto it = std::find(order.begin(), order.end(), first);
    for (; it != order.end(); ++it)
        phases.erase(*it);
}

const NodeState* ClusterState::node(const std::string& name) const {
    for (const auto& n : nodes)
        if (n.name == name) return &n;
    return nullptr;
}

void ClusterState::note_spell(const std::string& now) {
    UsageSpell spell{.at = now, .running = !stopped(), .nodes = {}};
    for (const auto& n : nodes)
        spell.nodes.push_back({.name = n.name,
                               .group = n.group,
                               .gpus = n.probed ? n.gpus : -1,
                               .gpu_name = n.gpu_names.empty() ? "" : n.gpu_names.front()});
    auto same = [](const UsageSpell& a, const UsageSpell& b) {
        if (a.running != b.running || a.nodes.size() != b.nodes.size()) return false;
        for (std::size_t i = 0; i < a.nodes.size(); ++i)
            if (a.nodes[i].name != b.nodes[i].name || a.nodes[i].gpus != b.nodes[i].gpus ||
                a.nodes[i].gpu_name != b.nodes[i].gpu_name)
                return false;
        return true;
    };
    if (!spells.empty() && same(spells.back(), spell)) return;
    // A node probed for the first time: what it has counted from the spell it started in.
    if (!spells.empty() && spells.back().running == spell.running &&
        spells.back().nodes.size() == spell.nodes.size()) {
        bool only_probed = true;
        for (std::size_t i = 0; i < spell.nodes.size() && only_probed; ++i)
            only_probed =
                spells.back().nodes[i].name == spell.nodes[i].name &&
                (spells.back().nodes[i].gpus == spell.nodes[i].gpus || spells.back().nodes[i].gpus < 0);
        if (only_probed) {
            spells.back().nodes = std::move(spell.nodes);
            return;
        }
    }
    if (spells.empty() && !created_at.empty() && created_at < now) {
        // The first spell starts at the creation. A state written before spells were kept also had its
        // stopped time counted in seconds: it becomes one stopped spell ending now, so the sum is what
        // it was (today's nodes from creation, the stopped seconds left out).
        const auto t_now = utc_parse(now), t_created = utc_parse(created_at),
                   t_stopped = utc_parse(stopped_at);
        long long stopped_total = stopped_s;
        if (stopped() && t_now && t_stopped && *t_now > *t_stopped) stopped_total += *t_now - *t_stopped;
        UsageSpell first = spell;
        first.at = created_at;
        first.running = true;
        spells.push_back(first);
        if (stopped_total > 0 && t_now && t_created) {
            UsageSpell off = first;
            off.at = utc_text(std::max(*t_created, *t_now - static_cast<std::time_t>(stopped_total)));
            off.running = false;
            spells.push_back(std::move(off));
        }
        if (same(spells.back(), spell)) return;
    }
    spells.push_back(std::move(spell));
}

nlohmann::json ClusterState::to_json() const {
    nlohmann::json j;
    j["schema_version"] = k_schema_version;
    j["cluster"] = cluster;
    j["target"] = target;
    j["spec"] = spec;
    j["spec_text"] = spec_text;
    if (!spec_file.empty()) j["spec_file"] = spec_file;
    if (!setup_failed.empty()) j["setup_failed"] = setup_failed;
    j["destroying"] = destroying;
    j["jupyter_token"] = jupyter_token;
    if (!created_at.empty()) j["created_at"] = created_at;
    if (!stopped_at.empty()) j["stopped_at"] = stopped_at;
    if (stopped_s > 0) j["stopped_s"] = stopped_s;
    if (!spells.empty()) {
        auto& sp = j["usage_spells"] = nlohmann::json::array();
        for (const auto& u : spells) {
            auto ns = nlohmann::json::array();
            for (const auto& n : u.nodes)
                ns.push_back(
                    {{"name", n.name}, {"group", n.group}, {"gpus", n.gpus}, {"gpu_name", n.gpu_name}});
            sp.push_back({{"at", u.at}, {"running", u.running}, {"nodes", std::move(ns)}});
        }
    }
    auto& ph = j["phases"] = nlohmann::json::object();
    for (const auto& [k, v] : phases)
        ph[k] = {{"done", v.done}, {"finished_at", v.finished_at}};
    auto& ns = j["nodes"] = nlohmann::json::array();
    for (const auto& n : nodes) {
        ns.push_back({{"name", n.name},
                      {"group", n.group},
                      {"address", n.address},
                      {"private_address", n.private_address},
                      {"port", n.port},
                      {"user", n.user},
                      {"jump", n.jump},
                      {"key", n.key},
                      {"jump_key", n.jump_key},
                      {"netns", n.netns},
                      {"probed", n.probed},
                      {"gpus", n.gpus},
                      {"gpu_names", n.gpu_names},
                      {"cpus", n.cpus},
                      {"memory_mb", n.memory_mb},
                      {"os", n.os},
                      {"kernel", n.kernel},
                      {"hostname", n.hostname},
                      {"slots", n.slots},
                      {"cuda", n.cuda},
                      {"configured_inputs", n.configured_inputs},
                      {"cordoned", n.cordoned}});
        if (n.spare) ns.back()["spare"] = true; // absent when not: states without spares unchanged
    }
    j["target_data"] = target_data;
    return j;
}

Result<ClusterState> ClusterState::from_json(const nlohmann::json& j) {
    try {
        int version = j.at("schema_version");
        if (version != k_schema_version)
            return Error{"state schema version " + std::to_string(version) +
                         " is not supported (this ddl reads " + std::to_string(k_schema_version) + ")"};
        ClusterState s;
        s.cluster = j.at("cluster");
        s.target = j.at("target");
        s.spec = j.value("spec", nlohmann::json::object());
        s.spec_text = j.value("spec_text", "");
        s.spec_file = j.value("spec_file", "");
        s.setup_failed = j.value("setup_failed", "");
        s.destroying = j.value("destroying", false);
        s.jupyter_token = j.value("jupyter_token", "");
        s.created_at = j.value("created_at", "");
        s.stopped_at = j.value("stopped_at", "");
        s.stopped_s = j.value("stopped_s", 0LL);
        for (const auto& u : j.value("usage_spells", nlohmann::json::array())) {
            UsageSpell spell{.at = u.at("at"), .running = u.value("running", true), .nodes = {}};
            for (const auto& n : u.value("nodes", nlohmann::json::array()))
                spell.nodes.push_back({.name = n.at("name"),
                                       .group = n.value("group", "workers"),
                                       .gpus = n.value("gpus", -1),
                                       .gpu_name = n.value("gpu_name", "")});
            s.spells.push_back(std::move(spell));
        }
        for (const auto& [k, v] : j.at("phases").items())
            s.phases[k] = {v.at("done"), v.value("finished_at", "")};
        for (const auto& n : j.at("nodes")) {
            NodeState ns;
            ns.name = n.at("name");
            ns.group = n.value("group", "workers");
            ns.address = n.at("address");
            ns.private_address = n.value("private_address", "");
            ns.port = n.value("port", 22);
            ns.user = n.value("user", "");
            ns.jump = n.value("jump", "");
            ns.key = n.value("key", "");
            ns.jump_key = n.value("jump_key", "");
            ns.netns = n.value("netns", "");
            ns.probed = n.value("probed", false);
            ns.gpus = n.value("gpus", 0);
            ns.gpu_names = n.value("gpu_names", std::vector<std::string>{});
            ns.cpus = n.value("cpus", 0);
            ns.memory_mb = n.value("memory_mb", 0LL);
            ns.os = n.value("os", "");
            ns.kernel = n.value("kernel", "");
            ns.hostname = n.value("hostname", "");
            ns.slots = n.value("slots", 1);
            ns.cuda = n.value("cuda", "");
            ns.configured_inputs = n.value("configured_inputs", "");
            ns.cordoned = n.value("cordoned", false);
            ns.spare = n.value("spare", false);
            s.nodes.push_back(std::move(ns));
        }
        s.target_data = j.value("target_data", nlohmann::json::object());
        return s;
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("state file is malformed: ") + e.what()};
    }
}

std::string utc_now_iso() {
    return utc_text(std::time(nullptr));
}

} // namespace ddl
