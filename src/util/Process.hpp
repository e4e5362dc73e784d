#pragma once
// Subprocesses: always an argv vector, never a shell string; cwd, environment and timeout explicit;
// stdout and stderr kept apart. Tests substitute ProcessRunner with a recording fake.
#include "util/Result.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

struct Command {
    std::vector<std::string> argv;
    std::string cwd;                            // empty: inherit
    std::map<std::string, std::string> env_set; // added to / overriding the inherited environment
    std::vector<std::string> env_unset;         // removed from the inherited environment
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
    std::string stdin_data;
    // Values in argv that must not be logged (replaced by "***" in the log line); run() registers them with
    // the shared redactor (util/Redactor.hpp), so they are masked in everything ddl prints too.
    std::vector<std::string> secrets;
    // Called with each complete stdout line (without the newline) as it arrives, for progress from
    // long-running tools; the whole output is still returned in ProcessResult::out.
    std::function<void(const std::string&)> on_stdout_line;
};

struct ProcessResult {
    int exit_code = -1;  // -1 when killed by a signal
    int term_signal = 0; // the signal, when killed
    bool timed_out = false;
    std::string out;
    std::string err;
    bool success() const { return exit_code == 0 && !timed_out; }
};

class ProcessRunner {
public:
    virtual ~ProcessRunner() = default;
    // Runs to completion (or timeout, after which the process group is killed). An Error means the
    // program could not be started at all; a non-zero exit is a ProcessResult.
    virtual Result<ProcessResult> run(const Command& cmd) = 0;
};

// Runs real processes with fork/exec in their own process group.
class SystemProcessRunner : public ProcessRunner {
public:
    Result<ProcessResult> run(const Command& cmd) override;
};

// Called with the printable argv before any process starts (the CLI routes it into the log).
void set_process_observer(std::function<void(const std::string&)> observer);
std::string printable_argv(const Command& cmd);

// "cmd failed (exit 3): <last stderr line>" for error messages.
std::string describe_failure(const Command& cmd, const ProcessResult& result);

// Finds an executable in PATH; empty when absent.
std::string find_in_path(const std::string& name);

} // namespace ddl
