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
};

// Renders everything the target needs; an Error when the spec cannot be rendered.
Result<RenderedFiles> render_spec(const Spec& spec, const RenderInputs& inputs = {});

// Where the OpenStack Terraform module and its inputs go inside the rendered files.
inline constexpr const char* k_openstack_terraform_dir = "openstack/terraform";

// Writes the files below `out_dir` (created 0700, files 0600 - rendered inputs may name private hosts).
Status write_rendered(const RenderedFiles& files, const std::string& out_dir);

} // namespace ddl
