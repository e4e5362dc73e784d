#pragma once
// `ddl gc --spec FILE`: removing a found cluster through its cloud's own API, without Terraform's state. A
// cloud gives its steps as an ordered table (what to list, how to remove each item, which answers mean
// "already gone", which steps must have succeeded first, how to wait until a removal has taken effect), in
// the order its API accepts deletions; run_sweep walks the table. What is already gone counts as removed,
// so a gc cut short can run again; a refusal is named and the rest is still tried, except in a step the
// rest cannot do without (stop_on_failure) or after a step it depends on failed.
#include "provision/Progress.hpp"
#include "util/Result.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddl {

// What the API answered to one removal.
struct SweepAnswer {
    bool accepted = false; // done (or started, for what settles later)
    std::string code;      // the API's error code ("InvalidVpcID.NotFound", "HTTP 404"); empty when accepted
    std::string refusal;   // the whole sentence naming the refusal, for the report
};

// One thing to remove: its label in the report ("subnet ddl-x-net (subnet-1)") and the call.
struct SweepItem {
    std::string label;
    std::function<Result<SweepAnswer>()> remove;
};

struct SweepStep {
    std::string name;               // what `after` names
    std::vector<std::string> after; // steps that must have succeeded; this one is skipped otherwise
    // The items to remove; an Error is reported and the step counts as failed.
    std::function<Result<std::vector<SweepItem>>()> list;
    // Which error codes mean the item is already gone (counted as removed).
    std::function<bool(const std::string& code)> gone;
    // After the removals: waits until they have taken effect (an Error stops the sweep, named after the
    // failures so far).
    std::function<Status()> settle;
    bool stop_on_failure = false; // a failure here stops the sweep (the rest would only fail)
    int attempts = 1;             // tries of each refused removal
};

// Runs `steps` in order for `cluster`, noting "removed <label> of cluster <cluster>" for each removal. The
// Error names every failure, "; "-joined, and says to run ddl gc again.
Status run_sweep(const std::string& cluster, const std::vector<SweepStep>& steps, Progress& progress);

} // namespace ddl
