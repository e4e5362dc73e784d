#pragma once
// The bundled runtime (dist/) as one tar file for the runtime role: one copy and one compare-and-unpack
// per node, instead of a remote stat (and a transfer when changed) for every file of the tree.
#include "util/Result.hpp"

#include <string>

namespace ddl {

// Writes `archive` (mode 0600, replaced atomically) in POSIX ustar format (IEEE Std 1003.1, pax's
// "ustar Interchange Format"): the regular files and symbolic links under `dist` in name order, as
// "./<path>", owned by root (uid and gid 0), with their own permission bits and modification times.
// No folder entries, so `tar --compare` on a node looks at the files alone; no __pycache__.
Status pack_runtime(const std::string& dist, const std::string& archive);

} // namespace ddl
