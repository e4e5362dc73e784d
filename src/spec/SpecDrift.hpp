#pragma once
// How the spec file a cluster was deployed from differs from the spec it was deployed with: the top-level
// keys whose YAML differs (comments and formatting aside), so every command can say in one line that the
// file was edited since and what `ddl deploy` would apply.
#include <string>
#include <vector>

namespace ddl {

struct SpecDrift {
    std::string file; // the spec file compared
    std::vector<std::string>
        keys;          // its top-level keys that differ, in the file's order then the removed ones
    std::string error; // the file no longer reads as YAML (or as a mapping): why

    bool changed() const { return !keys.empty() || !error.empty(); }
    // Whether a key of the researcher's code (workdir, setup, env) is among them.
    bool work_changed() const;
    // "cluster.yaml changed since deploy: setup, env; `ddl deploy cluster.yaml` applies it".
    std::string line() const;
};

// Compares `edited` (the text of `file` now) with `deployed` (the text the cluster was deployed from).
SpecDrift spec_drift(const std::string& file, const std::string& deployed, const std::string& edited);

} // namespace ddl
