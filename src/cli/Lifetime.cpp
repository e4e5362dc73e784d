#include "cli/Lifetime.hpp"

#include "cli/Capabilities.hpp"
#include "cli/LeaseText.hpp"
#include "targets/Kinds.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace ddl::cli {

std::optional<time_point> parse_iso_utc(const std::string& iso) {
    std::tm tm{};
    if (iso.empty() || !strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
    return std::chrono::system_clock::from_time_t(timegm(&tm));
}

namespace {

std::string fixed2(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

} // namespace

std::optional<time_point> created_time(const ClusterState& state) {
    if (auto t = parse_iso_utc(state.created_at)) return t;
    std::optional<time_point> first;
    for (const auto& [phase, ps] : state.phases) {
        if (!ps.done) continue;
        if (auto t = parse_iso_utc(ps.finished_at); t && (!first || *t < *first)) first = t;
    }
    return first;
}

std::optional<time_point> lifetime_end(const ClusterState& state, const LifeSpec& life) {
    if (life.lifetime_s <= 0) return std::nullopt;
    auto created = created_time(state);
    if (!created) return std::nullopt;
    return *created + std::chrono::seconds(life.lifetime_s);
}

Expiry expiry_of(const ClusterState& state, const LifeSpec& life, time_point now,
                 const std::function<bool()>& idle_past) {
    if (auto end = lifetime_end(state, life); end && *end <= now) return Expiry::destroy;
    if (!life.autostop.set() || state.destroying || state.stopped() || !idle_past()) return Expiry::none;
    return life.autostop.action == "stop" ? Expiry::stop : Expiry::destroy;
}

double stopped_seconds(const ClusterState& state, time_point now) {
    double s = static_cast<double>(state.stopped_s);
    if (auto since = parse_iso_utc(state.stopped_at); since && now > *since)
        s += std::chrono::duration<double>(now - *since).count();
    return s;
}

namespace {

// The nodes of one spell as the price table sees them.
Usage spell_nodes(const UsageSpell& spell, const Spec& spec) {
    Usage u;
    u.nodes = static_cast<int>(spell.nodes.size());
    for (const auto& n : spell.nodes) {
        NodeState as_node;
        as_node.name = n.name;
        as_node.group = n.group;
        UsedNode used{.flavor = n.group == "master" ? spec.master.flavor : spec.workers.flavor,
                      .gpus = n.gpus >= 0 ? n.gpus : expected_gpus(spec, as_node),
                      .gpu_name = n.gpu_name};
        u.gpus += used.gpus;
        u.each.push_back(std::move(used));
    }
    return u;
}

} // namespace

Usage usage_so_far(const ClusterState& state, const Spec& spec, time_point now) {
    Usage u;
    u.nodes = static_cast<int>(state.nodes.size());
    for (const auto& n : state.nodes) {
        UsedNode used{.flavor = n.group == "master" ? spec.master.flavor : spec.workers.flavor,
                      .gpus = n.probed ? n.gpus : expected_gpus(spec, n),
                      .gpu_name = n.gpu_names.empty() ? "" : n.gpu_names.front()};
        u.gpus += used.gpus;
        u.each.push_back(std::move(used));
    }
    auto created = created_time(state);
    if (!created || now <= *created) return u;
    if (state.spells.empty()) {
        // Stopped machines use no compute: their spells are left out (their disks' cost is not priced here).
        const double running_s =
            std::chrono::duration<double>(now - *created).count() - stopped_seconds(state, now);
        u.hours = std::max(0.0, running_s) / 3600.0;
        u.node_hours = u.hours * u.nodes;
        u.gpu_hours = u.hours * u.gpus;
        u.cost = u.hours * hourly_cost(u, spec.life.cost);
        return u;
    }
    for (std::size_t i = 0; i < state.spells.size(); ++i) {
        const auto& spell = state.spells[i];
        auto from = parse_iso_utc(spell.at);
        if (!from || !spell.running) continue;
        auto to = i + 1 < state.spells.size() ? parse_iso_utc(state.spells[i + 1].at).value_or(now) : now;
        to = std::min(to, now);
        if (to <= *from) continue;
        const double h = std::chrono::duration<double>(to - *from).count() / 3600.0;
        const Usage then = spell_nodes(spell, spec);
        u.hours += h;
        u.node_hours += h * then.nodes;
        u.gpu_hours += h * then.gpus;
        u.cost += h * hourly_cost(then, spec.life.cost);
    }
    return u;
}

double hourly_cost(const Usage& u, const CostSpec& cost) {
    double per_hour = 0;
    for (const auto& n : u.each)
        per_hour += cost.node_price(n.flavor) + n.gpus * cost.gpu_price(n.gpu_name);
    return per_hour;
}

nlohmann::json usage_json(const Usage& u, const CostSpec& cost) {
    nlohmann::json j{
        {"nodes", u.nodes}, {"gpus", u.gpus}, {"node_hours", u.node_hours}, {"gpu_hours", u.gpu_hours}};
    j["cost"] = nullptr;
    if (cost.set()) {
        const double per_hour = hourly_cost(u, cost);
        j["cost"] = {{"amount", u.cost}, {"per_hour", per_hour}, {"currency", cost.currency}};
    }
    return j;
}

std::string usage_text(const Usage& u, const CostSpec& cost) {
    std::string out = std::to_string(u.nodes) + " nodes, " + std::to_string(u.gpus) +
                      " GPUs: " + fixed2(u.node_hours) + " node-hours, " + fixed2(u.gpu_hours) + " GPU-hours";
    if (cost.set()) {
        const double per_hour = hourly_cost(u, cost);
        out += " (cost " + fixed2(u.cost) + " " + cost.currency + " so far, " + fixed2(per_hour) + " " +
               cost.currency + " per hour)";
    }
    return out;
}

std::string hourly_text(const Spec& spec) {
    const auto& cost = spec.life.cost;
    if (!cost.set()) return "";
    const int nodes = spec.node_count(), gpus = spec.total_gpus();
    // Flavors priced by name: each node group on its own (the groups size the cluster where they have
    // flavors).
    std::string parts;
    double per_hour = gpus * cost.per_gpu_hour;
    const bool by_flavor =
        cost.per_flavor.count(spec.master.flavor) + cost.per_flavor.count(spec.workers.flavor) > 0;
    if (by_flavor) {
        for (const auto* g : {&spec.master, &spec.workers}) {
            if (g->count == 0) continue;
            per_hour += g->count * cost.node_price(g->flavor);
            parts += std::to_string(g->count) + (g->count == 1 ? " node" : " nodes") +
                     (g->flavor.empty() ? "" : " of " + g->flavor) + " at " +
                     fixed2(cost.node_price(g->flavor)) + ", ";
        }
    } else {
        per_hour += nodes * cost.per_node_hour;
        parts = std::to_string(nodes) + " nodes at " + fixed2(cost.per_node_hour) + ", ";
    }
    return fixed2(per_hour) + " " + cost.currency + " per hour (" + parts + std::to_string(gpus) +
           " GPUs at " + fixed2(cost.per_gpu_hour) + ")";
}

std::string lifetime_text(time_point end, time_point now) {
    if (end <= now) return "lifetime ended " + iso_utc(end) + " (`ddl gc --expired` destroys it)";
    return "lifetime ends " + iso_utc(end) + " (in " + time_left(end, now) + ")";
}

Spec stored_spec(const ClusterState& state) {
    auto loaded = load_spec_string(state.spec_text, state.cluster + " (stored spec)", SpecOrigin::stored);
    if (loaded.spec) return *loaded.spec;
    Spec none;
    none.name = state.cluster;
    none.target = state.target;
    return none;
}

} // namespace ddl::cli
