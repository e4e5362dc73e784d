#pragma once
// Asking before something destructive: on a terminal the user answers a prompt; without one (a script, CI)
// the command is refused unless -y said yes beforehand, as Terraform refuses an apply it cannot ask about.
#include <iosfwd>
#include <optional>
#include <string>

namespace ddl::cli {

enum class Approval { approved, declined, no_terminal };

// Whether stdin and stderr are both a terminal (someone can read the question and answer it).
bool can_ask();

// Writes `question` to `out`, reads one line from `in`; approved when the line, trimmed, equals `expected`.
Approval ask(std::istream& in, std::ostream& out, const std::string& question, const std::string& expected);

// ask() on this process's terminal, or no_terminal when there is none.
Approval ask_on_terminal(const std::string& question, const std::string& expected);

// Before `command` destroys `what`: asks `question` (approved by `expected`) on the terminal. nullopt: go on;
// else the exit code, after saying why: 1 when the answer was not `expected`, 2 without a terminal (with
// `hint`, which names -y).
std::optional<int> confirm_destroy(const std::string& command, const std::string& what,
                                   const std::string& question, const std::string& expected,
                                   const std::string& hint);

} // namespace ddl::cli
