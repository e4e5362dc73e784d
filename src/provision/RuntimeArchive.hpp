#pragma once
// The bundled runtime (dist/) as one tar archive: one transfer and one compare-and-unpack per node
// (provision/NodeFiles.hpp), instead of a remote stat (and a transfer when changed) for every file.
#include "util/Result.hpp"

#include <string>

namespace ddl {

// The archive's bytes, in POSIX ustar format (IEEE Std 1003.1, pax's "ustar Interchange Format"): the
// regular files and symbolic links under `dist` in name order, as "./<path>", owned by root (uid and
// gid 0), with their own permission bits and modification times. No folder entries, so `tar --compare`
// on a node looks at the files alone; no __pycache__.
Result<std::string> pack_runtime(const std::string& dist);

} // namespace ddl
