#pragma once
// How validate, render and deploy show a spec's diagnostics.
#include "core/Diagnostics.hpp"

namespace ddl::cli {

// Text on stderr; with --output json (`json`), one JSON document on stdout: {"valid", "diagnostics"}.
void print_diagnostics(bool json, const Diagnostics& d);

} // namespace ddl::cli
