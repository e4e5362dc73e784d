#pragma once
// The Virtual Wall as SLICES serves it today (virtualwall.client: slices): Basic Infrastructure resources
// made and removed with the `slices` CLI (SlicesCli.hpp), the way ddl drives `terraform`. Pre-flight checks
// the CLI, the login (`slices auth show`), the project, and that the site offers each flavor and the image,
// before anything exists. Provision joins or creates the experiment (its description names the cluster and
// its state folder, for `ddl gc --spec`), registers the cluster's public key (the site's bastion admits the
// account's keys), asks for the master and the workers (resources ddl-<cluster>-master and
// ddl-<cluster>-w<i>), waits until every one is up, and reads addresses, logins and the jump host from `bi
// list --format json`. Destroy removes those resources (and only those) and checks they are gone; renew
// extends each; the lease is the earliest expiry.
#include "provision/Context.hpp"
#include "provision/TargetCapabilities.hpp"
#include "targets/virtualwall/SlicesCli.hpp"

#include <chrono>
#include <optional>

namespace ddl {

Status slices_preflight(const Context& ctx);
Status slices_provision(Context& ctx);
Status slices_destroy(Context& ctx);
Status slices_renew(Context& ctx, std::chrono::hours hours);
std::optional<std::chrono::system_clock::time_point> slices_lease_end(const nlohmann::json& target_data);

// `ddl deploy --replace NODE` (VirtualwallSlicesReplace.cpp): after approval, the node's resource is
// destroyed (and checked gone) and its pinned host key forgotten; provision makes it again alone under its
// recorded name. The other resources are left as they are.
Status slices_remove_for_replace(Context& ctx, const std::string& node);

// One call of the CLI (timeout 5 minutes by default); an Error with what it said, and `slices auth login`
// where its login is the cause.
Result<ProcessResult> slices_call(ProcessRunner& proc, const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout = std::chrono::minutes(5));
// The Error for a failed call: what it said, and `slices auth login` where its login is the cause.
Error slices_failure(const std::vector<std::string>& argv, const ProcessResult& r);
// `slices bi list --format json` of the experiment at the site.
Result<std::vector<SlicesResource>> slices_list(ProcessRunner& proc, const std::string& cli,
                                                const std::string& site, const std::string& experiment);
// `slices bi destroy` of `names`, then a list to be sure none of them is left.
Status slices_remove(Context& ctx, const std::string& cli, const std::string& site,
                     const std::string& experiment, const std::vector<std::string>& names);

// The experiment's description as ddl creates it: "ddl cluster C, state folder F".
inline constexpr const char* k_slices_state_lead = "ddl cluster ";
inline constexpr const char* k_slices_state_mark = ", state folder ";

// `ddl gc --spec FILE` (VirtualwallSlicesFound.cpp): ddl's resources in the spec's experiment, by cluster;
// the state folder from the experiment's description where `experiment show` gives one.
Result<std::vector<FoundCluster>> slices_find_clusters(const Spec& spec, ProcessRunner& proc);
Status slices_destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress);

// The ddl node a resource name stands for (ddl-<cluster>-master[0] -> master, ddl-<cluster>-w[0] ->
// worker1, ddl-<cluster>-w<k> -> worker<k+1>); nullopt when it is not one of `cluster`'s.
std::optional<std::string> slices_node_of(const std::string& cluster, const std::string& resource);

} // namespace ddl
