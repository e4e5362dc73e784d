// `ddl gc` on the local target from the machine's side: every deployed cluster has a record in
// /run/ddl/local/users (name, state folder, plan, spec, creation time), so a cluster whose state folder is
// gone (a CI job's container thrown away) is still found and removed. /run is emptied at boot, as are the
// namespaces and links the records describe.
#include "spec/SpecLoader.hpp"
#include "targets/local/LocalSection.hpp"
#include "targets/local/LocalTarget.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <ctime>
#include <filesystem>

namespace ddl {
namespace {

std::optional<long long> age_of(const std::string& iso) {
    std::tm tm{};
    if (!strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
    return static_cast<long long>(std::time(nullptr) - timegm(&tm));
}

// Discards the console chatter of a destroy run on behalf of gc, keeping node lines.
class Relay : public Progress {
public:
    explicit Relay(Progress& to) : m_to(to) {}
    void phase_start(const std::string&, const std::string&) override {}
    void phase_done(const std::string&, double, double, bool) override {}
    void phase_failed(const std::string&, const std::string&) override {}
    void node(const std::string& node, const std::string& message) override { m_to.node(node, message); }
    void note(const std::string& message) override { m_to.note(message); }

private:
    Progress& m_to;
};

} // namespace

std::string LocalTarget::registry_record(const Context& ctx, const LocalPlan& plan,
                                         const std::string& previous) {
    auto old = nlohmann::json::parse(previous, nullptr, false);
    std::string created = old.is_object() ? old.value("created", "") : "";
    if (created.empty()) created = utc_now_iso();
    return nlohmann::json{{"cluster", ctx.state.cluster},
                          {"cluster_dir", ctx.cluster_dir()},
                          {"created", created},
                          {"plan", plan.to_json()},
                          {"spec_text", ctx.state.spec_text}}
        .dump(2);
}

Result<std::vector<FoundCluster>> LocalTarget::find_clusters(const Spec* /*spec*/,
                                                             ProcessRunner& /*proc*/) const {
    std::vector<FoundCluster> out;
    const std::string dir = std::string(k_registry) + "/users";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return out;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        auto text = read_file_limited(e.path().string(), std::size_t{1024} * 1024);
        if (!text) continue;
        auto j = nlohmann::json::parse(*text, nullptr, false);
        // A record of an older ddl holds only the state folder: that cluster is found through it.
        if (!j.is_object() || !j.contains("plan") || !j.contains("cluster")) continue;
        FoundCluster f;
        f.cluster = j.value("cluster", "");
        f.state_dir = j.value("cluster_dir", "");
        f.age_s = age_of(j.value("created", "")).value_or(0);
        const auto plan = LocalPlan::from_json(j["plan"]);
        f.detail = std::to_string(plan.nodes.size()) + (plan.containers ? " container" : " namespace") +
                   " node(s) on this machine";
        f.record = std::move(j);
        out.push_back(std::move(f));
    }
    if (ec) return Error{"cannot list " + dir + ": " + ec.message()};
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.cluster < b.cluster; });
    return out;
}

Status LocalTarget::destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) {
    const auto& r = found.record;
    const std::string cluster_dir = r.value("cluster_dir", "");
    const std::string parent = std::filesystem::path(cluster_dir).parent_path().string();
    if (cluster_dir.empty() || std::filesystem::path(cluster_dir).filename() != found.cluster)
        return Error{"the record of " + found.cluster + " names no state folder of that cluster"};
    // The spec as deployed (training containers, engine); without one a bare local spec does.
    Spec spec;
    auto loaded = SpecLoader::load_string(r.value("spec_text", ""), found.cluster + " (record)",
                                          {&local_kind()}, SpecOrigin::stored);
    if (loaded.spec) {
        spec = std::move(*loaded.spec);
    } else {
        spec.name = found.cluster;
        spec.target = "local";
        spec.section = SectionBox(std::make_unique<LocalSpec>());
    }
    // The same state folder path as when deployed: the registry record's id and the node folders follow
    // from it. Nothing is written there.
    StateStore store(parent);
    ClusterState state;
    state.cluster = found.cluster;
    state.target = "local";
    state.target_data["plan"] = r["plan"];
    LibsshExecutor remote;
    Relay relay(progress);
    Context ctx{
        .spec = spec, .state = state, .store = store, .proc = proc, .remote = remote, .progress = relay};
    ctx.options.yes = true;
    return destroy(ctx);
}

} // namespace ddl
