#pragma once
// Option groups several commands share, each defined once: the cluster a command works on, the Terraform
// options, the benchmark tables' format. Help texts that depend on targets name them from the target
// registry (what each driver can do), never from a list written here.
#include "provision/TargetDriver.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace ddl::cli {

// The registered targets whose driver `has`, ", "-joined in registry order ("openstack, aws").
std::string targets_that(const std::function<bool(TargetDriver&)>& has);
// The Terraform targets (their driver is a TerraformTarget).
std::string terraform_targets();

// How a command takes its cluster: a positional `cluster` (optional: the only cluster when left out), or
// `--cluster`.
enum class ClusterRef { positional, positional_or_only, option };
CLI::Option* add_cluster_ref(CLI::App& sub, std::string& cluster, ClusterRef form);

// The options of the commands that run Terraform: --terraform-bin, and for deploy --skip-preflight (the
// checks of the account or cloud over its API).
enum class TerraformUse { deploy, destroy, plan };
void add_terraform_options(CLI::App& sub, std::string& terraform_bin, TerraformUse use,
                           bool* skip_preflight = nullptr);

// --format of the benchmark tables: text, json or csv.
CLI::Option* add_table_format(CLI::App& sub, std::string& format);

} // namespace ddl::cli
