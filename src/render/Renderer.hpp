#pragma once
// Renderers turn a Spec into the files a target's tools read. They are pure: same spec in, same bytes
// out (stable key order, no timestamps, no absolute paths), so a rendered folder can be diffed/reviewed.
#include "spec/Spec.hpp"
#include "util/Result.hpp"

#include <map>
#include <string>

namespace ddl {

// Relative path -> file content, ordered by path.
using RenderedFiles = std::map<std::string, std::string>;

// Renders everything the target needs. An Error when the target's renderer is not available.
Result<RenderedFiles> render_spec(const Spec& spec);

// Writes the files below `out_dir` (created 0700, files 0600 - rendered inputs may name private hosts).
Status write_rendered(const RenderedFiles& files, const std::string& out_dir);

} // namespace ddl
