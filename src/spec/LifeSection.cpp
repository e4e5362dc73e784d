#include "spec/LifeSection.hpp"

#include "util/Strings.hpp"

#include <cmath>

namespace ddl {
namespace {

// A price: a number from 0 to 1e6 (per hour).
void price(SectionReader& r, const YAML::Node& map, const std::string& key, double& out) {
    const YAML::Node n = map[key];
    if (!n.IsDefined()) return;
    double v = -1;
    try {
        v = n.as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!std::isfinite(v) || v < 0 || v > 1e6 || !n.IsScalar())
        r.diags().error(r.pos(n),
                        "cost." + key + " must be a number from 0 to 1000000 (got " +
                            YamlReader::describe(n) + ")",
                        "the price of one hour, e.g. " + key + ": 2.5");
    else
        out = v;
}

} // namespace

void read_life(SectionReader& r, const YAML::Node& doc, LifeSpec& out) {
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
    const YAML::Node c = doc["cost"];
    if (!c.IsDefined()) return;
    if (!r.expect_map(c, "cost", "e.g. cost: {per_node_hour: 1.2, per_gpu_hour: 2.5, currency: EUR}")) return;
    r.check_keys(c, "cost", {"per_node_hour", "per_gpu_hour", "currency"});
    price(r, c, "per_node_hour", out.cost.per_node_hour);
    price(r, c, "per_gpu_hour", out.cost.per_gpu_hour);
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
