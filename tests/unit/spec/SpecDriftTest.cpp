// SpecDrift: which top-level keys of a spec file changed since deploy, comments and layout aside.
#include "spec/SpecDrift.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {
const char* k_deployed = "name: demo\ntarget: local\nlocal: {nodes: 3}\nworkdir: .\nsetup:\n  - make\n";
}

TEST_CASE("the same spec, or only its comments and layout changed, is no drift") {
    CHECK_FALSE(spec_drift("c.yaml", k_deployed, k_deployed).changed());
    const char* relaid =
        "# a comment\nname: demo\ntarget: local\nlocal:\n  nodes: 3\nworkdir: .\nsetup: [make]\n";
    const auto d = spec_drift("c.yaml", k_deployed, relaid);
    CHECK_FALSE(d.changed());
    CHECK_FALSE(d.work_changed());
}

TEST_CASE("changed, added and removed keys are named, and the line says what applies them") {
    const char* edited =
        "name: demo\ntarget: local\nlocal: {nodes: 4}\nworkdir: .\nsetup:\n  - make\n  - make "
        "test\nenv: {A: b}\n";
    auto d = spec_drift("c.yaml", k_deployed, edited);
    CHECK(d.keys == std::vector<std::string>{"local", "setup", "env"});
    CHECK(d.work_changed());
    CHECK(d.line() ==
          "c.yaml changed since deploy: local, setup, env; `ddl deploy c.yaml` applies it (`ddl plan "
          "c.yaml` shows how)");
    d = spec_drift("c.yaml", k_deployed, "name: demo\ntarget: local\nlocal: {nodes: 3}\n");
    CHECK(d.keys == std::vector<std::string>{"workdir", "setup"});
    d = spec_drift("c.yaml", k_deployed,
                   "name: demo\ntarget: local\nlocal: {nodes: 5}\nworkdir: .\nsetup: [make]\n");
    CHECK(d.keys == std::vector<std::string>{"local"});
    CHECK_FALSE(d.work_changed());
}

TEST_CASE("an edited file that no longer reads is said as such") {
    auto d = spec_drift("c.yaml", k_deployed, "name: [demo\n");
    CHECK(d.changed());
    CHECK(d.keys.empty());
    CHECK(d.line().find("c.yaml changed since deploy and does not read") == 0);
    CHECK(spec_drift("c.yaml", k_deployed, "- a list\n").error == "it is not a mapping of keys");
}
