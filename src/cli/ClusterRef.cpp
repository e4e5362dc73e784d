#include "cli/ClusterRef.hpp"

#include "state/KnownFolders.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"
#include "util/Strings.hpp"

#include <filesystem>
#include <set>

namespace ddl::cli {

bool names_spec_file(const std::string& ref) {
    return ends_with(ref, ".yaml") || ends_with(ref, ".yml") || ref.find('/') != std::string::npos;
}

namespace {

// A state folder other than `here` (canonical) known to hold `name`; empty when none is.
std::string recorded_state_folder(const std::string& name, const std::string& here) {
    std::error_code ec;
    for (const auto& [cluster, folder] : recorded_clusters())
        if (cluster == name && std::filesystem::weakly_canonical(folder, ec).string() != here) return folder;
    return {};
}

} // namespace

std::vector<std::pair<std::string, std::string>> recorded_clusters() {
    std::vector<std::pair<std::string, std::string>> out;
    std::set<std::pair<std::string, std::string>> seen;
    auto add = [&](const std::string& name, const std::string& folder) {
        std::error_code ec;
        auto canonical = std::filesystem::weakly_canonical(folder, ec);
        if (seen.emplace(name, ec ? folder : canonical.string()).second) out.emplace_back(name, folder);
    };
    for (const auto& folder : known_state_folders())
        for (const auto& name : StateStore(folder).clusters())
            add(name, folder);
    auto driver = make_target_driver("local");
    if (!driver || !(*driver)->leaked_clusters()) return out;
    SystemProcessRunner proc;
    auto found = (*driver)->leaked_clusters()->find_clusters(nullptr, proc);
    if (!found) return out;
    for (const auto& f : *found)
        if (!f.state_dir.empty()) add(f.cluster, std::filesystem::path(f.state_dir).parent_path().string());
    return out;
}

Result<std::string> resolve_cluster(const StateStore& store, const std::string& ref) {
    std::error_code ec;
    if (std::filesystem::exists(store.root(), ec) && !std::filesystem::is_directory(store.root(), ec))
        return Error{"--state-dir " + store.root() +
                     " is not a folder; name the folder holding the clusters' state"};
    if (ref.empty()) {
        auto all = store.clusters();
        if (all.size() == 1) return all.front();
        if (all.empty())
            return Error{"no clusters in " + store.root() + "; deploy one with `ddl deploy cluster.yaml`"};
        return Error{"several clusters in " + store.root() + " (" + join(all, ", ") + "); name one"};
    }
    if (names_spec_file(ref)) {
        auto loaded = load_spec_file(ref, SpecOrigin::stored);
        if (!loaded.spec) return Error{"cannot read " + ref + ":\n" + loaded.diagnostics.format_text()};
        return loaded.spec->name;
    }
    if (!is_dns_label(ref))
        return Error{"\"" + printable_utf8(ref, 64) +
                     "\" is not a cluster name (lowercase letters, digits, '-')"};
    return ref;
}

Error cluster_not_found(const StateStore& store, const std::string& ref, const std::string& name) {
    std::string message = "no cluster \"" + name + "\" in " + store.root();
    std::error_code ec;
    const std::string here = std::filesystem::weakly_canonical(store.root(), ec).string();
    const std::string elsewhere = recorded_state_folder(name, here);
    if (!elsewhere.empty())
        return Error{message + "\nhint: it was deployed from the state folder " + elsewhere +
                     ": `ddl --state-dir " + elsewhere + " …`, or `export DDL_STATE_DIR=" + elsewhere + "`"};
    if (names_spec_file(ref))
        return Error{message + "\nhint: " + ref + " is not deployed from here: `ddl deploy " + ref +
                     "` creates it (or name the state folder that holds it: --state-dir, DDL_STATE_DIR)"};
    auto all = store.clusters();
    if (auto near = closest_match(name, all)) return Error{message + "\nhint: did you mean " + *near + "?"};
    if (all.empty())
        return Error{message + " (there are none)\nhint: `ddl deploy cluster.yaml` creates one, or name the "
                               "state folder that holds it: --state-dir DIR, or DDL_STATE_DIR"};
    return Error{message + " (there: " + join(all, ", ") + ")"};
}

} // namespace ddl::cli
