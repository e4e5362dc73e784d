#include "cli/Confirm.hpp"

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

} // namespace ddl::cli
