#pragma once
// Loads and validates cluster.yaml in one pass: every problem is reported (never only the first), each
// with its file position; a Spec comes back only when there were no errors.
#include "core/Diagnostics.hpp"
#include "spec/Spec.hpp"
#include "spec/TargetKind.hpp"

#include <optional>
#include <string>

namespace ddl {

struct SpecLoadResult {
    std::optional<Spec> spec; // set when there were no errors
    Diagnostics diagnostics;
};

class SpecLoader {
public:
    // Largest spec accepted; bigger files are refused before parsing.
    static constexpr std::size_t k_max_bytes = std::size_t{1024} * 1024;

    // check_files: files the spec names on this machine (private keys) must exist and be readable. Off for
    // the spec stored with a deployed cluster, so a key moved later does not lock its cluster out of
    // status and destroy.
    // `kinds`: the targets a spec may name (src/targets/Registry.hpp has them all and wraps these two).
    static SpecLoadResult load_file(const std::string& path, const TargetKinds& kinds,
                                    bool check_files = true);
    // `display_name` is the file name used in diagnostics.
    static SpecLoadResult load_string(const std::string& text, const std::string& display_name,
                                      const TargetKinds& kinds, bool check_files = true);
};

// DNS-safe cluster/node name rule, shared with the CLI's name arguments.
bool is_dns_label(const std::string& name, std::size_t max_len = 40);

} // namespace ddl
