#pragma once
// The one test rig: a cluster's state folder in a temp dir, its state and spec, and the recording fakes
// a Context is built from. Suites derive from it for their target's own pieces.
#include "support/Fakes.hpp"
#include "support/ScriptedProcess.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <string>

namespace ddl::test {

struct ClusterRig {
    TempDir dir;
    StateStore store{dir.path() + "/state"};
    ClusterState state;
    ScriptedProcess proc;
    FakeRemote remote;
    FakeProgress progress;
    Spec spec;

    ClusterRig() { proc.unmatched_ok = true; }
    explicit ClusterRig(const std::string& spec_text) : ClusterRig() { load(spec_text); }

    // The spec from `text` (it must validate); the state is named after it and its folder made.
    void load(const std::string& text) {
        auto r = load_spec_string(text, "c.yaml");
        INFO(r.diagnostics.format_text());
        REQUIRE(r.spec.has_value());
        spec = *r.spec;
        state.cluster = spec.name;
        state.target = spec.target;
        REQUIRE(store.ensure_cluster_dir(spec.name).ok());
    }
    Context ctx(DeployOptions options = {}) {
        return Context{spec, state, store, proc, remote, progress, std::move(options), nullptr};
    }
};

} // namespace ddl::test
