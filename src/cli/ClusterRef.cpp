#include "cli/ClusterRef.hpp"

#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <filesystem>

namespace ddl::cli {

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
    if (ends_with(ref, ".yaml") || ends_with(ref, ".yml") || ref.find('/') != std::string::npos) {
        auto loaded = load_spec_file(ref, SpecOrigin::stored);
        if (!loaded.spec) return Error{"cannot read " + ref + ":\n" + loaded.diagnostics.format_text()};
        return loaded.spec->name;
    }
    if (!is_dns_label(ref))
        return Error{"\"" + printable_utf8(ref, 64) +
                     "\" is not a cluster name (lowercase letters, digits, '-')"};
    return ref;
}

} // namespace ddl::cli
