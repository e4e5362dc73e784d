// A registered secret never reaches the terminal: what Invocation::fail and say print, the JSON error
// object under --output json, and anything a command prints through run_app's streams.
#include "cli/App.hpp"
#include "cli/CommandTable.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "util/Files.hpp"
#include "util/Redactor.hpp"

#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ddl;
using namespace ddl::cli;

namespace {

// std::cout and std::cerr into strings while it lives.
class CaptureOutput {
public:
    CaptureOutput()
        : m_out_saved(std::cout.rdbuf(m_out.rdbuf())), m_err_saved(std::cerr.rdbuf(m_err.rdbuf())) {}
    ~CaptureOutput() {
        std::cout.rdbuf(m_out_saved);
        std::cerr.rdbuf(m_err_saved);
    }
    std::string out() const { return m_out.str(); }
    std::string err() const { return m_err.str(); }

private:
    std::ostringstream m_out, m_err;
    std::streambuf* m_out_saved;
    std::streambuf* m_err_saved;
};

} // namespace

TEST_CASE("a registered secret never appears in what fail, say and the JSON error object print") {
    const std::string secret = "RTSECRET-fail-0b5e77";
    log::register_secret(secret);
    GlobalOptions g{".ddl", true};
    CLI::App app;
    Invocation inv{"sync", g, app, {}, nullptr};
    CaptureOutput cap;
    {
        redaction::StreamRedaction out(std::cout), err(std::cerr);
        inv.say("the setup printed token=" + secret);
        CHECK(inv.fail("setup[0] failed: token=" + secret + "\nhint: unset " + secret,
                       exit_code::k_bad_input) == exit_code::k_bad_input);
    }
    CHECK(cap.out().find(secret) == std::string::npos);
    CHECK(cap.err().find(secret) == std::string::npos);
    CHECK(cap.err() ==
          "ddl sync: the setup printed token=***\nddl sync: setup[0] failed: token=***\nhint: unset ***\n");
    auto j = nlohmann::json::parse(cap.out());
    CHECK(j["error"]["message"] == "setup[0] failed: token=***");
    CHECK(j["error"]["hint"] == "unset ***");
}

TEST_CASE("ddl's entry point masks a registered secret on stdout and stderr, with --output json") {
    const std::string secret = "RTSECRETX";
    log::register_secret(secret);
    TempDir dir;
    const std::string state = dir.path() + "/state";
    // Not a cluster name (uppercase): the message quotes it, on stderr and as the JSON error object.
    std::vector<std::string> args{"ddl", "--state-dir", state, "--output", "json", "status", secret};
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    CaptureOutput cap;
    const int rc = run_app(static_cast<int>(argv.size()), argv.data());
    CHECK(rc != exit_code::k_ok);
    CHECK(cap.err().find(secret) == std::string::npos);
    CHECK(cap.out().find(secret) == std::string::npos);
    CHECK(cap.err().find("\"***\"") != std::string::npos);
    CHECK(nlohmann::json::parse(cap.out())["error"]["message"].get<std::string>().find("***") !=
          std::string::npos);
    // run_app gave the streams their own buffers back.
    CHECK(std::cout.rdbuf() != nullptr);
}
