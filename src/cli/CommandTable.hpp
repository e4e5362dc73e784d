#pragma once
// The command table: every `ddl` command with its help line, what it needs opened before it runs, and
// its options and action. App.cpp registers the entries as CLI11 subcommands; Invoke.cpp does the set-up
// an entry's needs ask for, once for all of them.
#include "cli/OpenCluster.hpp"

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace ddl::cli {

// The options before the command.
struct GlobalOptions {
    std::string state_dir = ".ddl";
    bool json = false;
};

// What a command needs opened before its action runs.
enum class Needs {
    nothing,        // it reads spec files or the state folder itself (deploy and smoke-test create theirs)
    cluster,        // an existing cluster, read-only (no lock): state, stored spec, context
    probed_cluster, // the same, deployed as far as its nodes were probed (else exit 2 naming `ddl deploy`)
    locked_cluster, // an existing cluster under its lock, with its target driver (a mutating command)
};

// One run of one command.
struct Invocation {
    std::string name; // "deploy", "bench allreduce": messages start with "ddl NAME: "
    const GlobalOptions& g;
    const CLI::App& app;                     // the whole command line (help, completion)
    std::vector<std::string> after_dashdash; // the words after the first "--", verbatim
    std::unique_ptr<OpenCluster> cluster;    // opened before the action when the entry needs one

    // Prints "ddl NAME: message" on stderr.
    void say(const std::string& message) const;
    // say(message), then returns rc: `return inv.fail(why, exit_code::k_bad_input);`
    int fail(const std::string& message, int rc) const;
};

// What a command's file provides: its options and action, sharing the command's own argument struct.
struct CommandBody {
    // Adds the command's options and positionals to its CLI11 subcommand, in the order help shows them.
    std::function<void(CLI::App&)> add_options;
    // Optional; runs before the set-up, on the options alone: an exit code stops the command there.
    std::function<std::optional<int>(Invocation&)> prepare;
    // The cluster the user named (name, spec file, or empty for the only one); for needs other than nothing.
    std::function<std::string()> cluster;
    std::function<int(Invocation&)> action;
};

struct CommandEntry {
    const char* name; // "bench allreduce": the subcommand "allreduce" of the entry "bench"
    const char* help; // its line in `ddl --help`
    Needs needs;
    CommandBody (*body)(); // nullptr: a group, which requires one of its subcommands
};

// The entries in the order `ddl --help` and the completion script list them; a group comes before its
// subcommands.
std::span<const CommandEntry> command_table();
// The entry called `name` (e.g. "destroy"); std::logic_error when there is none.
const CommandEntry& command_named(std::string_view name);

// Each command's body, defined in the command's own file.
CommandBody completion_command();      // CompletionCommand.cpp
CommandBody help_command();            // HelpCommand.cpp
CommandBody init_command();            // InitCommand.cpp
CommandBody validate_command();        // ValidateCommand.cpp
CommandBody render_command();          // RenderCommand.cpp
CommandBody plan_command();            // PlanCommand.cpp
CommandBody deploy_command();          // DeployCommand.cpp
CommandBody destroy_command();         // DestroyCommand.cpp
CommandBody renew_command();           // RenewCommand.cpp
CommandBody list_command();            // ListCommand.cpp
CommandBody status_command();          // StatusCommand.cpp
CommandBody hostfile_command();        // HostfileCommand.cpp
CommandBody exec_command();            // ExecCommand.cpp
CommandBody ssh_command();             // SshCommand.cpp
CommandBody tunnel_command();          // TunnelCommand.cpp
CommandBody run_command();             // RunCommand.cpp
CommandBody bench_allreduce_command(); // BenchAllreduceCommand.cpp
CommandBody bench_train_command();     // BenchTrainCommand.cpp
CommandBody bench_io_command();        // BenchIoCommand.cpp
CommandBody smoke_test_command();      // SmokeTestCommand.cpp
CommandBody gc_command();              // GcCommand.cpp
CommandBody sync_command();            // SyncCommand.cpp
CommandBody cp_command();              // CpCommand.cpp
CommandBody data_stage_command();      // DataCommand.cpp
CommandBody data_status_command();     // DataCommand.cpp
CommandBody jobs_command();            // JobsCommand.cpp
CommandBody logs_command();            // JobsCommand.cpp
CommandBody cancel_command();          // JobsCommand.cpp
CommandBody doctor_command();          // DoctorCommand.cpp
CommandBody cordon_command();          // CordonCommand.cpp
CommandBody uncordon_command();        // CordonCommand.cpp
CommandBody stop_command();            // StopCommand.cpp
CommandBody start_command();           // StartCommand.cpp

// `ddl destroy NAME --yes` on behalf of another command (gc): the same checks, set-up and messages.
int destroy_cluster(const Invocation& from, const std::string& name);
// `ddl stop NAME --yes` on behalf of another command (gc --expired, autostop.action: stop). StopCommand.cpp.
int stop_cluster(const Invocation& from, const std::string& name);

// The spec's workdir to the cluster, then (with_setup) its setup where it changed, with progress notes;
// `out` gets the JSON summary. An exit code: bad input (no workdir, an env variable unset, a failing
// setup) is k_bad_input. SyncCommand.cpp; `ddl sync` and the end of `ddl deploy`.
int deliver_workdir(const Invocation& inv, Context& ctx, bool with_setup, nlohmann::json* out);

struct RunArgs;
// `ddl run -d`: queues the command on the master (its workdir, the spec's env and -x on ddl-run's
// standard input; with `max_restarts` the master starts a failed job again, DDL_CHECKPOINT_DIR as for a
// foreground run) and prints the job id. JobsCommand.cpp.
int run_detached(const Invocation& inv, const RunArgs& a, const std::string& name, bool beside,
                 int max_restarts = 0);

} // namespace ddl::cli
