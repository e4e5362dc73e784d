// `ddl gc --spec` on a SLICES Virtual Wall spec: ddl's resources in the spec's experiment, by cluster, and
// their removal.
#include "targets/virtualwall/VirtualwallSection.hpp"
#include "targets/virtualwall/VirtualwallSlices.hpp"
#include "util/Strings.hpp"
#include "util/UtcTime.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <regex>

namespace ddl {

Result<std::vector<FoundCluster>> slices_find_clusters(const Spec& spec, ProcessRunner& proc) {
    const auto& v = spec.target_section<VirtualwallSpec>();
    const std::string experiment = v.experiment_name(spec.name);
    const std::vector<std::string> show{v.slices_cli, "experiment", "show", experiment, "--format", "json"};
    auto shown = proc.run({.argv = show, .timeout = std::chrono::minutes(5)});
    if (!shown) return shown.error();
    if (!shown->success()) {
        // Exit 1 is how the CLI says there is no such experiment (users' scripts rely on it), and also how a
        // Python CLI ends on any other error; its words are not published. Only a "not found" reads as no
        // experiment (nothing of ddl's there); anything else stops gc with what the CLI said, rather than
        // finding nothing and leaving resources behind.
        const std::string said = to_lower(shown->out + shown->err);
        const bool missing = said.find("not found") != std::string::npos ||
                             said.find("no such") != std::string::npos ||
                             said.find("does not exist") != std::string::npos;
        if (shown->exit_code == 1 && missing) return std::vector<FoundCluster>{};
        return slices_failure(show, *shown);
    }
    // The description ddl gave the experiment names the cluster's state folder. That `show --format json`
    // carries it is inferred (users' scripts read id, friendly_name, project_id, expires_at): without it, a
    // cluster records no state folder and gc leaves it alone, naming it.
    auto j = nlohmann::json::parse(shown->out, nullptr, false);
    const std::string description = j.is_object() ? j.value("description", std::string()) : std::string();
    auto all = slices_list(proc, v.slices_cli, v.site, experiment);
    if (!all) return all.error();
    static const std::regex name_re("^ddl-(.+)-(master0?|w[0-9]*)$");
    std::map<std::string, FoundCluster> by_cluster;
    const std::time_t now = std::time(nullptr);
    for (const auto& r : *all) {
        std::smatch m;
        if (!std::regex_match(r.name, m, name_re)) continue;
        auto& f = by_cluster[m[1].str()];
        f.cluster = m[1].str();
        const std::string lead = std::string(k_slices_state_lead) + f.cluster + k_slices_state_mark;
        if (description.rfind(lead, 0) == 0) f.state_dir = description.substr(lead.size());
        auto created = utc_parse(r.created_at);
        const long long age = created ? static_cast<long long>(now - *created) : 0;
        f.age_s = f.record.contains("resources") ? std::min(f.age_s, age) : age;
        if (!r.expires_at.empty() && (f.expires.empty() || r.expires_at < f.expires))
            f.expires = r.expires_at;
        f.record["slices_cli"] = v.slices_cli;
        f.record["site"] = v.site;
        f.record["experiment"] = experiment;
        f.record["resources"].push_back(r.name);
        f.detail = "SLICES resources " + join(f.record["resources"].get<std::vector<std::string>>(), ", ") +
                   " in experiment " + experiment;
    }
    std::vector<FoundCluster> out;
    out.reserve(by_cluster.size());
    for (auto& [name, f] : by_cluster)
        out.push_back(std::move(f));
    return out;
}

Status slices_destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) {
    const std::string cli = found.record.value("slices_cli", std::string("slices"));
    const std::string experiment = found.record.value("experiment", std::string());
    if (experiment.empty() || !found.record.contains("resources"))
        return Error{"the record of " + found.cluster + " names no SLICES experiment or resources"};
    const auto names = found.record["resources"].get<std::vector<std::string>>();
    if (auto r = slices_call(
            proc, slices_bi_destroy_argv(cli, found.record.value("site", std::string()), experiment, names),
            std::chrono::minutes(15));
        !r)
        return r.error();
    progress.note("removed SLICES resources " + join(names, ", ") + " of cluster " + found.cluster);
    return {};
}

} // namespace ddl
