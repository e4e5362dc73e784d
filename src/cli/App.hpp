#pragma once

namespace ddl::cli {

// The whole command line: parses argv, runs one command, returns the process exit code
// (0 ok, 1 runtime failure, 2 bad input, 3 partial). Fatal exceptions are caught here, once.
int run_app(int argc, char** argv);

} // namespace ddl::cli
