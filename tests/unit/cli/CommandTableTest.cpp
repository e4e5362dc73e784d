// The command table and the set-up Invoke does once for every command, in process.
#include "cli/CommandTable.hpp"

#include "cli/Invoke.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "util/Files.hpp"

#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>
#include <csignal>
#include <set>
#include <sstream>

using namespace ddl;
using namespace ddl::cli;

namespace {

// What a test command saw.
struct Seen {
    int prepared = 0;
    int asked_cluster = 0;
    int acted = 0;
    bool had_cluster = false;
    bool had_driver = false;
};

CommandBody recording_body(Seen& seen, std::string ref, std::optional<int> stop_in_prepare = std::nullopt) {
    return {.add_options = [](CLI::App&) {},
            .prepare =
                [&seen, stop_in_prepare](Invocation&) {
                    ++seen.prepared;
                    return stop_in_prepare;
                },
            .cluster =
                [&seen, ref] {
                    ++seen.asked_cluster;
                    return ref;
                },
            .action =
                [&seen](Invocation& inv) {
                    ++seen.acted;
                    seen.had_cluster = inv.cluster != nullptr;
                    seen.had_driver = inv.cluster && inv.cluster->driver != nullptr;
                    return 7;
                }};
}

// A locked_cluster command installs ddl's SIGINT/SIGTERM/SIGPIPE handlers: the test program gets its
// own back.
struct RestoreSignals {
    ~RestoreSignals() {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
    }
};

// stderr while it lives.
class CaptureStderr {
public:
    CaptureStderr() : m_saved(std::cerr.rdbuf(m_text.rdbuf())) {}
    ~CaptureStderr() { std::cerr.rdbuf(m_saved); }
    std::string text() const { return m_text.str(); }

private:
    std::ostringstream m_text;
    std::streambuf* m_saved;
};

// A deployed-looking local cluster "t1" in `state_dir`, with a spec that validates.
void write_cluster(const std::string& state_dir) {
    StateStore store(state_dir);
    ClusterState st;
    st.cluster = "t1";
    st.target = "local";
    st.spec_text = "apiVersion: ddl/v1\nname: t1\ntarget: local\nlocal:\n  nodes: 2\n";
    REQUIRE(store.ensure_cluster_dir("t1").ok());
    REQUIRE(store.save(st).ok());
}

} // namespace

TEST_CASE("every command in the table has a help line and a unique name, and a group comes before its "
          "subcommands") {
    std::set<std::string> names;
    for (const auto& c : command_table()) {
        INFO(c.name);
        CHECK(std::string(c.help).size() > 10);
        CHECK(names.insert(c.name).second);
        std::string name = c.name;
        if (auto space = name.rfind(' '); space != std::string::npos) {
            CHECK(names.count(name.substr(0, space)) == 1);
            CHECK(command_named(name.substr(0, space)).body == nullptr);
        }
    }
    CHECK(command_named("destroy").needs == Needs::locked_cluster);
    CHECK_THROWS_AS(command_named("nosuch"), std::logic_error);
}

TEST_CASE("a command that needs a cluster says which one its options name") {
    for (const auto& c : command_table()) {
        if (!c.body) continue;
        INFO(c.name);
        CLI::App sub;
        auto body = c.body();
        REQUIRE(body.add_options);
        REQUIRE(body.action);
        body.add_options(sub);
        if (c.needs != Needs::nothing) {
            REQUIRE(body.cluster);
            CHECK(body.cluster().empty()); // nothing parsed yet: the only cluster
        }
    }
}

TEST_CASE("invoke reports a cluster that does not exist as bad input, before the action runs") {
    TempDir dir;
    GlobalOptions g{dir.path() + "/state", false};
    CLI::App app;
    Seen seen;
    auto body = recording_body(seen, "none");
    Invocation inv{"probe-me", g, app, {}, nullptr};
    const CommandEntry entry{"probe-me", "a test command", Needs::cluster, nullptr};
    CaptureStderr err;
    CHECK(invoke(entry, body, inv) == exit_code::k_bad_input);
    CHECK(err.text() ==
          "ddl probe-me: no cluster \"none\" in " + g.state_dir +
              " (there are none)\nhint: `ddl deploy cluster.yaml` creates one, or name the state "
              "folder that holds it: --state-dir DIR, or DDL_STATE_DIR\n");
    CHECK(seen.prepared == 1);
    CHECK(seen.acted == 0);
}

TEST_CASE("invoke stops after prepare when it gives an exit code, without opening anything") {
    TempDir dir;
    GlobalOptions g{dir.path(), false};
    CLI::App app;
    Seen seen;
    auto body = recording_body(seen, "t1", exit_code::k_ok);
    Invocation inv{"x", g, app, {}, nullptr};
    CHECK(invoke({"x", "a test command", Needs::cluster, nullptr}, body, inv) == exit_code::k_ok);
    CHECK(seen.asked_cluster == 0);
    CHECK(seen.acted == 0);
}

TEST_CASE("invoke opens the named cluster read-only, or under its lock with its driver") {
    TempDir dir;
    write_cluster(dir.path());
    GlobalOptions g{dir.path(), false};
    CLI::App app;
    RestoreSignals restore;
    for (auto needs : {Needs::nothing, Needs::cluster, Needs::locked_cluster}) {
        Seen seen;
        auto body = recording_body(seen, "t1");
        Invocation inv{"x", g, app, {}, nullptr};
        CHECK(invoke({"x", "a test command", needs, nullptr}, body, inv) == 7);
        CHECK(seen.acted == 1);
        CHECK(seen.had_cluster == (needs != Needs::nothing));
        CHECK(seen.had_driver == (needs == Needs::locked_cluster));
        if (needs != Needs::nothing) CHECK(inv.cluster->ctx->spec.name == "t1");
    }
    log::close_file();
}

TEST_CASE("the words after -- are appended to a command's own, and a command that needs some says so") {
    GlobalOptions g;
    CLI::App app;
    Invocation inv{"exec", g, app, {"-l", "a b"}, nullptr};
    std::vector<std::string> words{"ls"};
    CHECK_FALSE(take_command_words(inv, words, true));
    CHECK(words == std::vector<std::string>{"ls", "-l", "a b"});

    Invocation bare{"run", g, app, {}, nullptr};
    std::vector<std::string> none;
    CHECK_FALSE(take_command_words(bare, none, false));
    CaptureStderr err;
    CHECK(take_command_words(bare, none, true) == exit_code::k_bad_input);
    CHECK(err.text() == "ddl: give the command after --, e.g. ddl run -- hostname\n");
}
