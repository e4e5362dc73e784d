#pragma once
// Jobs as the master's queue (src/runtime/tools/ddl-run) records them: the JSON `ddl-run jobs --json`
// prints, read into records; the table `ddl jobs` prints; the command lines the controller runs there.
#include "util/Result.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddl::cli {

struct JobRecord {
    int id = 0;
    std::string name;
    std::vector<std::string> command;
    int ranks = 0;
    std::string state;                     // queued, running, succeeded, failed, cancelled
    std::string submitted, started, ended; // ISO 8601 UTC; empty: not yet
    std::optional<int> exit_code;
    std::optional<int> failed_rank;
    std::string origin; // "ddl run -d", "ddl run", "ddl-run" (a shell on the master)
    int restarts = 0;   // how often --max-restarts started it again so far
    int max_restarts = 0;
};

// Where the queue's program is on every node (the runtime's bin/).
inline constexpr const char* k_ddl_run = "/opt/ddl/bin/ddl-run";

// Whether `state` is one a job ends in.
bool job_state_final(const std::string& state);
// The records in `json` (a list of objects); an Error names the first one that does not read as a job
// (a state outside the five, a final state without its end time, a failed rank without a failure).
Result<std::vector<JobRecord>> parse_job_records(const std::string& json);
// One line per job under a header: ID NAME STATE RANKS STARTED ENDED EXIT COMMAND.
std::string job_table(const std::vector<JobRecord>& jobs);
// A job id as the user gives it: digits only; an Error naming it otherwise.
Result<int> parse_job_id(const std::string& text);

// The command line that queues `command` on the master: ddl-run with its options, the variables on
// its standard input (NAME=VALUE, NUL-separated: see env_block).
// `max_restarts`: how often a failed job starts again (ddl-run --max-restarts).
std::string submit_command(const std::string& name, int np, bool beside, const std::string& workdir,
                           const std::vector<std::string>& command, int max_restarts = 0);
// The variables as ddl-run reads them on its standard input.
std::string env_block(const std::map<std::string, std::string>& env);

} // namespace ddl::cli
