#include "util/Process.hpp"

#include <catch2/catch.hpp>

using namespace ddl;
using namespace std::chrono_literals;

TEST_CASE("SystemProcessRunner keeps stdout and stderr apart and reports the exit code") {
    SystemProcessRunner runner;
    auto r = runner.run({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
    REQUIRE(r.ok());
    CHECK(r->out == "out\n");
    CHECK(r->err == "err\n");
    CHECK(r->exit_code == 3);
}

TEST_CASE("SystemProcessRunner passes stdin, cwd and extra environment") {
    SystemProcessRunner runner;
    Command c{.argv = {"sh", "-c", "cat; pwd; echo $DDL_TEST_VAR"},
              .cwd = "/tmp",
              .env_set = {{"DDL_TEST_VAR", "v1"}}};
    c.stdin_data = "hello\n";
    auto r = runner.run(c);
    REQUIRE(r.ok());
    CHECK(r->out == "hello\n/tmp\nv1\n");
}

TEST_CASE("SystemProcessRunner kills a process that runs past its timeout") {
    SystemProcessRunner runner;
    Command c{.argv = {"sleep", "30"}};
    c.timeout = 300ms;
    auto r = runner.run(c);
    REQUIRE(r.ok());
    CHECK(r->timed_out);
    CHECK_FALSE(r->success());
}

TEST_CASE("SystemProcessRunner reports a missing program as an error") {
    SystemProcessRunner runner;
    auto r = runner.run({.argv = {"ddl-no-such-program-xyz"}});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("ddl-no-such-program-xyz") != std::string::npos);
}

TEST_CASE("printable_argv hides secrets") {
    Command c{.argv = {"curl", "-u", "user:s3cret"}, .secrets = {"s3cret"}};
    CHECK(printable_argv(c) == "curl -u 'user:***'");
}

TEST_CASE("SystemProcessRunner passes each stdout line to on_stdout_line as it arrives, the last one too") {
    SystemProcessRunner runner;
    std::vector<std::string> lines;
    Command c{.argv = {"sh", "-c", "printf 'one\\ntwo\\n'; sleep 0.1; printf 'three\\nfour'"}};
    c.on_stdout_line = [&](const std::string& l) { lines.push_back(l); };
    auto r = runner.run(c);
    REQUIRE(r.ok());
    CHECK(lines == std::vector<std::string>{"one", "two", "three", "four"});
    CHECK(r->out == "one\ntwo\nthree\nfour");
}
