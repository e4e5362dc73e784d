#pragma once
// Which link names (bridges, veths) a new local cluster may take on this machine. Link names hold only
// 15 characters, so they carry a 24-bit tag of the cluster's name rather than the name: two names can
// share one (rt-c6481 and rt-c15740 do), and the second cluster would then add its address to the first
// one's bridge and its destroy would remove the first one's links. Provision picks the tag under the
// machine-wide lock, from the registry's records and the links that exist, and records it in the plan.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ddl {

// The tag a name of a local cluster's link carries (ddlbr-TAG, ddlpb-TAG, ddlTAGh0, ...); empty for a
// name that is not one.
std::string tag_of_link(const std::string& link);

// The links a plan (its JSON, as recorded in the state and in the registry) names on this machine: the
// bridges and the host ends of the veths.
std::vector<std::string> plan_links(const nlohmann::json& plan);

// The smallest salt whose link_tag for `cluster` is in neither `taken`; none if the first 65536 all are
// (the machine would hold tens of thousands of local clusters).
std::optional<std::uint32_t> free_tag_salt(const std::string& cluster, const std::set<std::string>& taken);

// The names of this machine's network interfaces (if_nameindex, the root namespace).
std::vector<std::string> host_links();

// A cluster's record's file name in the registry: its name and a hash of the state folder it was
// deployed from (its cluster folder), so two folders' clusters of one name have two records.
std::string local_registry_id(const std::string& cluster, const std::string& cluster_dir);

// The folder a state folder was moved from while its nodes run (their sshd read keys and config there):
// `recorded` (the cluster folder provision recorded) when it is another folder than `cluster_dir` (where
// the state is now), has no state.json (a copy leaves the original in charge) and still has its record in
// `users_dir` (without one its nodes are gone: a reboot empties /run along with the namespaces).
std::optional<std::string> moved_state_folder(const std::string& cluster, const std::string& recorded,
                                              const std::string& cluster_dir, const std::string& users_dir);

// One record of the machine-wide registry (LocalTarget::k_registry/users): its file name and content.
struct RegistryRecord {
    std::string id; // <cluster>.<hash of its state folder>
    nlohmann::json record;
};
// The records in `users_dir` that parse as JSON objects.
std::vector<RegistryRecord> registry_records(const std::string& users_dir);

// The tag salt of a cluster that has none yet: the first (free_tag_salt) whose tag neither the plan of a
// record in `records` other than its own (`own_id`) nor a link in `links` (this machine's, which may
// belong to a cluster whose record is gone) carries.
std::optional<std::uint32_t> allocate_tag_salt(const std::string& cluster, const std::string& own_id,
                                               const std::vector<RegistryRecord>& records,
                                               const std::vector<std::string>& links);

} // namespace ddl
