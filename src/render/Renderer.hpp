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

// What a renderer may need besides the spec; each field is optional and has a documented fallback.
struct RenderInputs {
    // The cluster's OpenSSH public key line (openstack: the key pair every node gets). Empty: a
    // placeholder that `ddl deploy` replaces.
    std::string public_key;
    // The cluster's state folder (absolute), recorded on what the target creates so that `ddl gc --spec`
    // tells a leaked cluster from one still owned (openstack: the servers' ddl_state). Empty: not recorded.
    std::string state_dir;
    // When the cluster's lifetime ends (render/Expiry.hpp), recorded on what the target creates so that
    // `ddl gc --expired --spec` finds it expired from the target's side. Empty: no lifetime, not recorded.
    std::string expires;
};

// A JSON file as every renderer writes one: two-space indent, keys sorted, a final newline.
std::string json_file(const nlohmann::json& j);

// What every cluster gets whatever its target: the normalized spec (spec.json) and the variables every
// configure run receives (ansible/vars.json). A target's own files come from its driver's render().
RenderedFiles render_common(const Spec& spec);

// Writes the files below `out_dir` (created 0700, files 0600 - rendered inputs may name private hosts).
Status write_rendered(const RenderedFiles& files, const std::string& out_dir);

} // namespace ddl
