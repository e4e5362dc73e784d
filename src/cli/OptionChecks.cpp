#include "cli/OptionChecks.hpp"

#include "util/Strings.hpp"

namespace ddl::cli {

const CLI::Validator
    k_non_empty([](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); },
                "NON-EMPTY");

const CLI::Validator k_seconds(
    [](std::string& v) {
        auto n = parse_int(v);
        if (!n) return std::string("must be a whole number of seconds, e.g. 90 (got \"" + v + "\")");
        if (*n < 1 || *n > 7L * 86400) return std::string("must be between 1 and 604800 seconds (7 days)");
        return std::string();
    },
    "SECONDS");

} // namespace ddl::cli
