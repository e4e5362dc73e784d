#pragma once
// The master's idle clock as the controller sees it: the record /opt/ddl/bin/ddl-idle keeps on the master
// (docs/spec.md, "autostop"), read over the cluster's SSH by `ddl status` and `ddl gc --expired`, and the
// last one read kept in the cluster's state folder (idle.json) for `ddl list`.
#include "cli/Lifetime.hpp"
#include "provision/Context.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddl::cli {

// Where the clock's program is on the master (the runtime's bin/, beside ddl-run).
inline constexpr const char* k_ddl_idle = "/opt/ddl/bin/ddl-idle";

struct IdleRecord {
    std::optional<time_point> checked_at; // the clock's last decision
    std::optional<time_point> idle_since; // nullopt: busy at the last decision
    std::vector<std::string> busy;        // why it was busy
    std::vector<std::string> unanswered;  // nodes the clock could not ask
    int period_s = 60;                    // seconds between two decisions
    std::optional<time_point> read_at;    // when the controller read it
    nlohmann::json source;                // each node's GPU source: "dcgm", "nvidia-smi" or "load"
    // Where the clock ended the allocation itself (autostop on Slurm and GPULab): when, and its line.
    std::optional<time_point> ended_at;
    std::string ended_why;
};

// The record in `j` (ddl-idle's JSON, with read_at where the controller kept it); an Error where it is not
// one.
Result<IdleRecord> parse_idle_record(const nlohmann::json& j);
nlohmann::json idle_json(const IdleRecord& r);
// idle_json with "idle_s": idle_for_s at `now` (null: busy, or the record too old to tell), for the views.
nlohmann::json idle_json_at(const IdleRecord& r, time_point now);

// Reads the record from the master (`ddl-idle show`); nullopt where the cluster is not configured, has no
// clock (namespace nodes, a ddl older than the clock) or the clock has not decided yet. The record read is
// kept in the cluster's state folder (`dir`/idle.json). Where the nodes are not reached over SSH (Slurm),
// the clock runs inside the job and writes `dir`/idle.json itself: that record.
Result<std::optional<IdleRecord>> read_idle_clock(Context& ctx, const std::string& dir, time_point now);
// Where the target lets the clock end the allocation itself (SelfEnding) and the spec sets autostop: the
// record with ended_at/ended_why once the target says the clock ended it (kept in `dir`/idle.json, so
// that `ddl list` shows it); nullopt while the allocation holds nodes or on other targets.
Result<std::optional<IdleRecord>> autostop_ended(Context& ctx, const std::string& dir, time_point now);
// The record last read into `dir`/idle.json; nullopt without one.
std::optional<IdleRecord> last_idle_record(const std::string& dir);

// How long the cluster has been idle at `now` by the record; nullopt: busy, or a record so old (over
// three periods since its last decision) that it tells nothing about now.
std::optional<long long> idle_for_s(const IdleRecord& r, time_point now);
// "idle since 2026-11-27T12:00:00Z (14m)", "busy: job 3 running; worker1: GPU ...", or "idle clock
// silent since ..." for `ddl status` and `ddl list`; with autostop, what it does and when.
std::string idle_text(const IdleRecord& r, const AutostopSpec& autostop, time_point now);

} // namespace ddl::cli
