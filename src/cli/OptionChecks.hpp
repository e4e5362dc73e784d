#pragma once
// CLI11 validators shared by the commands' options: garbage in a flag is refused while parsing (exit 2),
// before any cluster or file is touched.
#include "util/Result.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ddl::cli {

// A value that is not empty ("NON-EMPTY").
extern const CLI::Validator k_non_empty;
// Seconds as a whole number in 1 s .. 7 days; says which of the two a bad value misses ("SECONDS").
extern const CLI::Validator k_seconds;

// "A..B" or "A,B,C": whole numbers in min..max; an Error naming the option `what` otherwise.
Result<std::vector<int>> parse_int_list(const std::string& text, int max, const std::string& what,
                                        int min = 1);

} // namespace ddl::cli
