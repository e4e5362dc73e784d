#pragma once
// `ddl gc --expired --spec FILE`: what a spec's target still has whose lifetime, as the target itself
// records it (FoundCluster::expires: the OpenStack servers' ddl_expires metadata, the EC2 instances'
// ddl-expires tag), has ended, and whose state folder is gone (another machine deployed it, or its state
// was lost). A cluster whose state is in this state folder is left to the state folder's own check; one
// whose state is in another folder, one that records no end, and one whose end is still to come are named
// and left alone. The spec's target is found as `ddl gc --spec` finds it (spec_target).
#include "cli/Lifetime.hpp"
#include "provision/TargetCapabilities.hpp"
#include "provision/TargetDriver.hpp"
#include "state/StateStore.hpp"
#include "util/Result.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ddl::cli {

// The targets that can be asked for their clusters without a spec (`--target`), for a hint.
std::string asked_without_spec();

// The target of spec file `file`, when it can be asked for its clusters with a spec; an Error (bad input)
// when the spec does not load or its target cannot be asked so.
struct SpecTarget {
    std::string file;
    Spec spec;
    std::shared_ptr<TargetDriver> driver;
};
Result<SpecTarget> spec_target(const std::string& file);

enum class TargetExpiry {
    expired,         // its recorded end has passed and no state folder here has it: gc destroys it
    not_yet,         // its recorded end is still to come
    not_recorded,    // it records no end (no lifetime, or a ddl that did not record it)
    unreadable,      // what it records does not read as a time
    state_here,      // its state is in this state folder: the state folder's check decides
    state_elsewhere, // its state is in another state folder on this machine: gc --expired runs there
};
struct ExpiryVerdict {
    TargetExpiry what;
    std::string why; // one line: "its lifetime ended 2026-...", "its state is in /x", ...
};
// The verdict on `found` at `now`. `state_at`: the folder whose state.json has it (empty: none); `here`:
// this state folder's folder for it.
ExpiryVerdict judge_target_expiry(const FoundCluster& found, const std::string& state_at,
                                  const std::string& here, time_point now);

// A cluster to destroy through its target's record.
struct ExpiredFound {
    std::string target;
    std::shared_ptr<TargetDriver> driver;
    FoundCluster found;
    std::string why;
};
// Asks each spec's target; the expired clusters with the prefix (empty: any) are returned, the others
// named in `notes` ("osfull (openstack: its lifetime ends ... (in 2h))"), a target that cannot be asked in
// `problems`. An Error (bad input) for a spec that does not load or a target that cannot be asked so.
Result<std::vector<ExpiredFound>>
expired_on_targets(const StateStore& store, const std::vector<std::string>& specs, const std::string& prefix,
                   time_point now, std::vector<std::string>& notes, std::vector<std::string>& problems);

} // namespace ddl::cli
