#include "cli/OptionGroups.hpp"

#include "targets/Registry.hpp"
#include "terraform/TerraformTarget.hpp"

namespace ddl::cli {

std::string targets_that(const std::function<bool(TargetDriver&)>& has) {
    std::string out;
    for (const auto& entry : target_registry()) {
        auto driver = entry.driver();
        if (!has(*driver)) continue;
        out += (out.empty() ? "" : ", ") + entry.kind.name();
    }
    return out;
}

std::string terraform_targets() {
    return targets_that([](TargetDriver& d) { return dynamic_cast<TerraformTarget*>(&d) != nullptr; });
}

CLI::Option* add_cluster_ref(CLI::App& sub, std::string& cluster, ClusterRef form) {
    auto* option = sub.add_option("--cluster", cluster, "Cluster name or spec file");
    // Where the cluster is also a positional word, --cluster C works too: every command takes it.
    switch (form) {
    case ClusterRef::positional:
        return sub.add_option("cluster", cluster, "Cluster name or spec file");
    case ClusterRef::positional_or_only:
        return sub.add_option("cluster", cluster, "Cluster name or spec file (default: the only cluster)");
    case ClusterRef::option:
        break;
    }
    return option;
}

void add_terraform_options(CLI::App& sub, std::string& terraform_bin, TerraformUse use,
                           bool* skip_preflight) {
    const std::string targets = terraform_targets() + ": ";
    const std::string help =
        use == TerraformUse::destroy
            ? "terraform or tofu to destroy with (default: the one that deployed)"
            : "terraform or tofu (name on PATH or a path); default: the spec's, else whichever is on PATH";
    sub.add_option("--terraform-bin", terraform_bin, targets + help);
    if (skip_preflight != nullptr)
        sub.add_flag("--skip-preflight", *skip_preflight,
                     targets + "skip the checks of the account or cloud (instance types or flavors, image, "
                               "network, quota) before creating");
}

CLI::Option* add_table_format(CLI::App& sub, std::string& format) {
    return sub.add_option("--format", format, "text, json or csv")
        ->check(CLI::IsMember({"text", "json", "csv"}));
}

} // namespace ddl::cli
