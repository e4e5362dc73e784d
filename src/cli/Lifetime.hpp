#pragma once
// A cluster's own end and what it has used: its lifetime (spec key lifetime) counted from the state's
// creation time, its node-hours and GPU-hours so far, and their cost with the spec's price table. Pure
// arithmetic on the state and the spec, with the clock passed in.
#include "spec/Spec.hpp"
#include "state/ClusterState.hpp"

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddl::cli {

using time_point = std::chrono::system_clock::time_point;

// "2026-11-27T12:00:00Z" (seconds and beyond ignored past the 19th character); nullopt where it is not one.
std::optional<time_point> parse_iso_utc(const std::string& iso);

// When the cluster was created: the state's created_at, else (states written before it was recorded) the
// earliest phase's finish; nullopt when neither is there.
std::optional<time_point> created_time(const ClusterState& state);
// When its lifetime ends; nullopt without a lifetime or a creation time.
std::optional<time_point> lifetime_end(const ClusterState& state, const LifeSpec& life);

// What `ddl gc --expired` does to a cluster at `now`: destroy it once its lifetime has ended (stopped or
// not); else, when it is idle past autostop.idle_minutes (`idle_past`, asked only of a running cluster with
// autostop that is not being destroyed), stop it (autostop.action: stop) or destroy it; a stopped cluster
// stays as it is.
enum class Expiry { none, destroy, stop };
Expiry expiry_of(const ClusterState& state, const LifeSpec& life, time_point now,
                 const std::function<bool()>& idle_past);

// One node as the price table sees it.
struct UsedNode {
    std::string flavor;   // its node group's flavor (empty: none)
    int gpus = 0;         // probed where the probe ran, else what the spec asks for
    std::string gpu_name; // its first GPU's name as probed (empty: not known)
};
struct Usage {
    int nodes = 0;
    int gpus = 0; // probed where the probe ran, else what the spec asks for
    double hours = 0;
    double node_hours = 0;
    double gpu_hours = 0;
    double cost = 0; // with the spec's price table, spell by spell (0 without one)
    std::vector<UsedNode> each;
};
// How long the cluster's machines have been stopped until `now`: its earlier stopped spells and the current
// one.
double stopped_seconds(const ClusterState& state, time_point now);
// What the cluster has used from its creation until `now` (nothing without a creation time): its usage
// spells added up, each with the nodes it had, stopped spells left out. A state without spells (written
// before they were kept) counts today's nodes since creation.
Usage usage_so_far(const ClusterState& state, const Spec& spec, time_point now);
// What the nodes cost per hour with the price table (each node's flavor and GPU model).
double hourly_cost(const Usage& u, const CostSpec& cost);
// {"node_hours", "gpu_hours", and with a price table "cost": {"amount", "per_hour", "currency"}}.
nlohmann::json usage_json(const Usage& u, const CostSpec& cost);
// "3 nodes, 4 GPUs: 1.50 node-hours, 2.00 GPU-hours (cost 6.80 EUR so far, 13.60 EUR per hour)".
std::string usage_text(const Usage& u, const CostSpec& cost);
// "4.70 EUR per hour (3 nodes at 1.20, 4 GPUs at 0.50)" for a plan; empty without a price table. With
// per_flavor prices for the spec's node groups: "... (1 node of m1.large at 0.30, 2 nodes of g1.xlarge at
// 3.20, 4 GPUs at 0.50)".
std::string hourly_text(const Spec& spec);

// "lifetime ends 2026-11-27T22:00:00Z (in 11h 20m)" or "lifetime ended 2026-... (ddl gc --expired destroys
// it)".
std::string lifetime_text(time_point end, time_point now);

// The lifetime and prices of a deployed cluster, from the spec stored with it (defaults when it cannot be
// read: no lifetime, no prices).
Spec stored_spec(const ClusterState& state);

} // namespace ddl::cli
