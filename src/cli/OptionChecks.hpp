#pragma once
// CLI11 validators shared by the commands' options: garbage in a flag is refused while parsing (exit 2),
// before any cluster or file is touched.
#include <CLI/CLI.hpp>

namespace ddl::cli {

// A value that is not empty ("NON-EMPTY").
extern const CLI::Validator k_non_empty;
// Seconds as a whole number in 1 s .. 7 days; says which of the two a bad value misses ("SECONDS").
extern const CLI::Validator k_seconds;

} // namespace ddl::cli
