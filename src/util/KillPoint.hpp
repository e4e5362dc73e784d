#pragma once
// Named crash points for fault-injection tests. Production runs pass through them at no cost; a test
// sets DDL_TEST_KILL_AT=<label> (first pass) or <label>#<n> (n-th pass) and ddl SIGKILLs itself when it
// reaches that point, as an OOM kill or a power cut would stop it (no destructors, no flush).
// DDL_TEST_KILL_TRACE=<file> appends every point passed as <label>#<n>, so a test can list the points
// of a run and then kill at each of them.
#include <string>

namespace ddl {

void kill_point(const std::string& label);

} // namespace ddl
