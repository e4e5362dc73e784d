#include "spec/SmokeSection.hpp"

#include "util/Strings.hpp"

#include <set>

namespace ddl {

void read_smoke(SectionReader& r, const YAML::Node& n, SmokeSpec& out) {
    if (!r.expect_map(n, "smoke")) return;
    r.check_keys(n, "smoke", {"checks", "training"});
    if (auto t = n["training"]; t.IsDefined() && r.expect_map(t, "smoke.training")) {
        r.check_keys(t, "smoke.training", {"enabled", "steps", "min_loss_drop"});
        if (auto b = r.boolean(t, "enabled", "smoke.training")) out.training.enabled = *b;
        if (auto s = r.integer(t, "steps", "smoke.training", 5, 1000))
            out.training.steps = static_cast<int>(*s);
        if (auto d = t["min_loss_drop"]; d.IsDefined()) {
            double v = -1;
            try {
                v = d.as<double>();
            } catch (const YAML::Exception&) {
            }
            if (v < 0 || v >= 1)
                r.diags().error(r.pos(d),
                                "smoke.training.min_loss_drop must be a fraction from 0 to below 1 (got " +
                                    YamlReader::describe(d) + ")",
                                "e.g. 0.3: the loss must fall by 30 % of the first step's");
            else
                out.training.min_loss_drop = v;
        }
    }
    const YAML::Node list = n["checks"];
    if (!list.IsDefined()) return;
    if (!list.IsSequence()) {
        r.diags().error(r.pos(list), "smoke.checks must be a list (got " + YamlReader::describe(list) + ")",
                        "e.g. checks: [{name: disk, run: \"df -h /\", on: all}]");
        return;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = "smoke.checks[" + std::to_string(i) + "]";
        const YAML::Node c = list[i];
        if (!r.expect_map(c, path, "each check is a map: {name: ..., run: ...}")) continue;
        r.check_keys(c, path, {"name", "run", "on", "timeout", "expect_exit"});
        SmokeCheck check;
        if (auto name = r.string(c, "name", path, true, "the name of the check in the report")) {
            if (trim(*name).empty() || name->size() > 60 || name->find('\n') != std::string::npos)
                r.diags().error(r.pos(c["name"]), path + ".name must be one line of 1-60 characters (got \"" +
                                                      SectionReader::printable(*name) + "\")");
            else if (!names.insert(*name).second)
                r.diags().error(r.pos(c["name"]),
                                path + ".name \"" + SectionReader::printable(*name) +
                                    "\" is used by another check",
                                "give every check its own name: the report tells them apart by it");
            check.name = *name;
        }
        if (auto run = r.string(c, "run", path, true, "the shell command to run on the nodes")) {
            if (trim(*run).empty())
                r.diags().error(r.pos(c["run"]), path + ".run is empty",
                                "the shell command to run on the nodes");
            check.run = *run;
        }
        if (auto on = r.choice(c, "on", path, {"master", "workers", "all"})) check.on = *on;
        if (auto t = r.integer(c, "timeout", path, 1, 3600)) check.timeout_s = static_cast<int>(*t);
        if (auto e = r.integer(c, "expect_exit", path, 0, 255)) check.expect_exit = static_cast<int>(*e);
        out.checks.push_back(std::move(check));
    }
}

} // namespace ddl
