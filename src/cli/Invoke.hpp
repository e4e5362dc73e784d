#pragma once
// Running one entry of the command table: the set-up its needs ask for exists here once.
#include "cli/CommandTable.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddl::cli {

// Runs `entry` with `body` (its options already parsed): a locked_cluster entry first installs the
// SIGINT/SIGTERM handlers; then body.prepare; then the set-up (an existing cluster, read-only or under its
// lock with its driver, in inv.cluster; a failure is "ddl NAME: message" with exit code 2 when the
// cluster named is none, else 1); then body.action. Returns the exit code.
int invoke(const CommandEntry& entry, CommandBody& body, Invocation& inv);

// Runs the command table's `command` with `body` from within another command (`from`: gc destroying or
// stopping a cluster), with the same global options. Returns the exit code.
int invoke_from(const Invocation& from, const std::string& command, CommandBody body);

// For a command that takes a command line (exec, ssh, run): appends the words after "--" to `words`; when
// `required` and there are none, says so and gives the exit code to stop with.
std::optional<int> take_command_words(const Invocation& inv, std::vector<std::string>& words, bool required);

} // namespace ddl::cli
