#include "cli/Confirm.hpp"

#include "core/Diagnostics.hpp"
#include "util/Strings.hpp"

#include <iostream>
#include <unistd.h>

namespace ddl::cli {

bool can_ask() {
    return isatty(STDIN_FILENO) != 0 && isatty(STDERR_FILENO) != 0;
}

Approval ask(std::istream& in, std::ostream& out, const std::string& question, const std::string& expected) {
    out << question << std::flush;
    std::string line;
    if (!std::getline(in, line)) {
        out << "\n";
        return Approval::declined;
    }
    return trim(line) == expected ? Approval::approved : Approval::declined;
}

Approval ask_on_terminal(const std::string& question, const std::string& expected) {
    if (!can_ask()) return Approval::no_terminal;
    return ask(std::cin, std::cerr, question, expected);
}

std::optional<int> confirm_destroy(const std::string& command, const std::string& what,
                                   const std::string& question, const std::string& expected,
                                   const std::string& hint) {
    switch (ask_on_terminal(command + " will destroy " + what + ".\n" + question, expected)) {
    case Approval::approved:
        return std::nullopt;
    case Approval::declined:
        std::cerr << command << ": not confirmed; nothing was destroyed\n";
        return exit_code::k_failure;
    case Approval::no_terminal:
        break;
    }
    std::cerr << command << ": would destroy " << what
              << "; there is no terminal to confirm on\n  hint: " << hint << "\n";
    return exit_code::k_bad_input;
}

} // namespace ddl::cli
