#pragma once
// Loads and validates cluster.yaml in one pass: every problem is reported (never only the first), each
// with its file position; a Spec comes back only when there were no errors.
#include "core/Diagnostics.hpp"
#include "spec/Spec.hpp"
#include "spec/TargetKind.hpp"
#include "util/Result.hpp"

#include <optional>
#include <string>

namespace ddl {

// Where a spec comes from. `file`: one the user gives; every rule applies, and files the spec names on this
// machine (private keys) must exist. `stored`: the spec a deployed cluster was deployed with; no file
// checks (a key moved later must not lock the cluster out), and the spec comes back even when a rule of
// this ddl refuses it (an older ddl accepted it), with those errors in the diagnostics for a warning, so
// status, hostfile, run and destroy keep working on what was deployed.
enum class SpecOrigin { file, stored };

struct SpecLoadResult {
    // Set when there were no errors; for SpecOrigin::stored also when only the rules failed (the YAML read,
    // the cluster has a name and a known target).
    std::optional<Spec> spec;
    Diagnostics diagnostics;
};

class SpecLoader {
public:
    // Largest spec accepted; bigger files are refused before parsing.
    static constexpr std::size_t k_max_bytes = std::size_t{1024} * 1024;

    // `kinds`: the targets a spec may name (src/targets/Registry.hpp has them all and wraps these two).
    static SpecLoadResult load_file(const std::string& path, const TargetKinds& kinds,
                                    SpecOrigin origin = SpecOrigin::file);
    // `display_name` is the file name used in diagnostics.
    static SpecLoadResult load_string(const std::string& text, const std::string& display_name,
                                      const TargetKinds& kinds, SpecOrigin origin = SpecOrigin::file);
};

// The spec text with its top-level `name:` line set to `name` (comments and layout kept); an Error when the
// name is not DNS-safe or the text has no `name:` line at the top level.
Result<std::string> with_cluster_name(const std::string& text, const std::string& name);

// DNS-safe cluster/node name rule, shared with the CLI's name arguments.
bool is_dns_label(const std::string& name, std::size_t max_len = 40);

} // namespace ddl
