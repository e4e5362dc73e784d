#include "spec/LifeSection.hpp"

#include "util/Strings.hpp"

#include <cmath>
#include <cstdint>

namespace ddl {
namespace {

// A price: a number from 0 to 1e6 (per hour). `path`: its name in messages (default cost.<key>).
void price(SectionReader& r, const YAML::Node& map, const std::string& key, double& out,
           const std::string& path = "") {
    const YAML::Node n = map[key];
    if (!n.IsDefined()) return;
    const std::string name = path.empty() ? "cost." + key : path;
    double v = -1;
    try {
        v = n.as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!std::isfinite(v) || v < 0 || v > 1e6 || !n.IsScalar())
        r.diags().error(r.pos(n),
                        name + " must be a number from 0 to 1000000 (got " + YamlReader::describe(n) + ")",
                        "the price of one hour, e.g. " + key + ": 2.5");
    else
        out = v;
}

// autostop: {idle_minutes: N, action: destroy|stop, node_credential: bool}.
void read_autostop(SectionReader& r, const YAML::Node& a, AutostopSpec& out, const TargetKind* kind) {
    if (!r.expect_map(a, "autostop", "e.g. autostop: {idle_minutes: 60, action: destroy}")) return;
    r.check_keys(a, "autostop", {"idle_minutes", "action", "node_credential"});
    if (!a["idle_minutes"].IsDefined())
        r.diags().error(r.pos(a), "autostop needs idle_minutes",
                        "how long the cluster may stay idle, e.g. autostop: {idle_minutes: 60}");
    // A week at most: longer is what lifetime is for.
    constexpr std::int64_t k_week_minutes = std::int64_t{7} * 24 * 60;
    if (auto m = r.integer(a, "idle_minutes", "autostop", 1, k_week_minutes))
        out.idle_minutes = static_cast<int>(*m);
    if (auto x = r.choice(a, "action", "autostop", {"destroy", "stop"})) {
        out.action = *x;
        if (*x == "stop" && kind != nullptr)
            if (auto no = kind->refuse_stop()) r.diags().error(r.pos(a["action"]), no->message, no->hint);
    }
    if (auto on = r.boolean(a, "node_credential", "autostop"); on && *on) {
        out.node_credential = true;
        if (kind != nullptr)
            if (auto no = kind->refuse_node_credential())
                r.diags().error(r.pos(a["node_credential"]), no->message, no->hint);
    }
}

// A map from a name (flavor, GPU model) to a price.
void price_table(SectionReader& r, const YAML::Node& cost, const std::string& key, const std::string& hint,
                 std::map<std::string, double>& out) {
    const YAML::Node t = cost[key];
    if (!t.IsDefined() || !r.expect_map(t, "cost." + key, hint)) return;
    for (const auto& kv : t) {
        const auto name = kv.first.IsScalar() ? kv.first.as<std::string>() : std::string();
        if (name.empty() || name.find_first_of(" \t\n") != std::string::npos) {
            r.diags().error(r.pos(kv.first),
                            "cost." + key + ": \"" + SectionReader::printable(name) + "\" is not a name",
                            hint);
            continue;
        }
        price(r, t, name, out[name], "cost." + key + "." + name);
    }
}

} // namespace

void read_life(SectionReader& r, const YAML::Node& doc, LifeSpec& out, const TargetKind* kind) {
    if (auto text = r.string(doc, "lifetime", "")) {
        auto s = parse_duration_s(*text);
        if (!s || *s < 60)
            r.diags().error(r.pos(doc["lifetime"]),
                            "lifetime must be a span of at least a minute (got \"" +
                                SectionReader::printable(*text) + "\")",
                            "a number with m, h or d, e.g. lifetime: 12h (ddl gc --expired destroys the "
                            "cluster once it has lived this long)");
        else
            out.lifetime_s = *s;
    }
    if (const YAML::Node a = doc["autostop"]; a.IsDefined()) read_autostop(r, a, out.autostop, kind);
    const YAML::Node c = doc["cost"];
    if (!c.IsDefined()) return;
    if (!r.expect_map(c, "cost", "e.g. cost: {per_node_hour: 1.2, per_gpu_hour: 2.5, currency: EUR}")) return;
    r.check_keys(c, "cost", {"per_node_hour", "per_gpu_hour", "per_flavor", "per_gpu_model", "currency"});
    price(r, c, "per_node_hour", out.cost.per_node_hour);
    price(r, c, "per_gpu_hour", out.cost.per_gpu_hour);
    price_table(r, c, "per_flavor", "a node-hour of a flavor, e.g. per_flavor: {g1.xlarge: 3.2}",
                out.cost.per_flavor);
    price_table(r, c, "per_gpu_model", "a GPU-hour of a model, e.g. per_gpu_model: {A100: 2.9, V100: 1.1}",
                out.cost.per_gpu_model);
    if (auto cur = r.string(c, "currency", "cost", true, "the unit the prices are in, e.g. currency: EUR")) {
        if (cur->empty() || cur->size() > 8 || cur->find_first_of(" \t\n") != std::string::npos)
            r.diags().error(r.pos(c["currency"]),
                            "cost.currency must be a short word (got \"" + SectionReader::printable(*cur) +
                                "\")",
                            "e.g. currency: EUR, USD or credits");
        else
            out.cost.currency = *cur;
    }
}

} // namespace ddl
