#include "cli/JobRecords.hpp"

#include <catch2/catch.hpp>

using namespace ddl::cli;

namespace {
const std::string k_done = R"({"id": 1, "name": "train", "command": ["python3", "train.py"], "ranks": 3,
  "state": "succeeded", "submitted": "2026-01-01T10:00:00Z", "started": "2026-01-01T10:00:01Z",
  "ended": "2026-01-01T10:05:00Z", "exit_code": 0, "failed_rank": null, "origin": "ddl run -d"})";
}

TEST_CASE("the master's job list reads into records with their exit code and failing rank") {
    auto r = parse_job_records("[" + k_done + R"(, {"id": 2, "name": "x", "command": ["sh"], "ranks": 2,
      "state": "failed", "submitted": "a", "started": "b", "ended": "c", "exit_code": 3, "failed_rank": 1},
      {"id": 3, "name": "y", "command": ["sh"], "ranks": 2, "state": "queued", "submitted": "a",
       "started": null, "ended": null, "exit_code": null}])");
    REQUIRE(r);
    REQUIRE(r->size() == 3);
    CHECK((*r)[0].command == std::vector<std::string>{"python3", "train.py"});
    CHECK((*r)[0].exit_code == 0);
    CHECK_FALSE((*r)[0].failed_rank);
    CHECK((*r)[1].failed_rank == 1);
    CHECK((*r)[2].started.empty());
    auto table = job_table(*r);
    CHECK(
        table.find(
            "2    x                failed     2     b                    c                    3 (rank 1)") !=
        std::string::npos);
}

TEST_CASE("job records that break the state machine are refused by name") {
    CHECK(parse_job_records(R"([{"id": 4, "state": "done"}])").error().message ==
          "job 4: unknown state \"done\"");
    CHECK(parse_job_records(R"([{"id": 5, "state": "failed", "started": "a"}])").error().message ==
          "job 5: failed without an end time");
    CHECK(parse_job_records(
              R"([{"id": 6, "state": "succeeded", "started": "a", "ended": "b", "exit_code": 2}])")
              .error()
              .message == "job 6: succeeded with exit code 2");
    CHECK(parse_job_records(R"([{"id": 7, "state": "running", "failed_rank": 0, "started": "a"}])")
              .error()
              .message == "job 7: a failed rank in a job that is running");
    CHECK(parse_job_records(R"([{"id": 8, "state": "running"}])").error().message ==
          "job 8: running without a start time");
    CHECK(parse_job_records(R"({"id": 1})").error().message == "the master's job list is not a JSON list");
    // A queued job cancelled before its turn never started.
    CHECK(parse_job_records(R"([{"id": 9, "state": "cancelled", "ended": "b"}])"));
}

TEST_CASE("job states: three end a job, two do not") {
    for (const char* s : {"succeeded", "failed", "cancelled"})
        CHECK(job_state_final(s));
    for (const char* s : {"queued", "running", ""})
        CHECK_FALSE(job_state_final(s));
}

TEST_CASE("a job id is a positive number, anything else is named") {
    CHECK(parse_job_id("12").value() == 12);
    CHECK(parse_job_id("0").error().message == "\"0\" is not a job id (a number, as `ddl jobs` lists them)");
    CHECK_FALSE(parse_job_id("-3"));
    CHECK_FALSE(parse_job_id("3a"));
    CHECK_FALSE(parse_job_id(""));
}

TEST_CASE("a detached job's submission keeps the variables out of its command line") {
    auto cmd = submit_command("mnist", 4, true, "/shared/work", {"python3", "train.py", "--lr", "0.1"});
    CHECK(cmd ==
          "/opt/ddl/bin/ddl-run --env-stdin --origin 'ddl run -d' --name mnist --np 4 --beside --workdir "
          "/shared/work -- python3 train.py --lr 0.1");
    CHECK(env_block({{"A", "1"}, {"TOKEN", "s e\ncret"}}) == std::string("A=1\0TOKEN=s e\ncret\0", 19));
    CHECK(submit_command("", 0, false, "", {"true"}, 2) ==
          "/opt/ddl/bin/ddl-run --env-stdin --origin 'ddl run -d' --max-restarts 2 -- true");
}

TEST_CASE("a restarted job's restarts are read and shown beside its exit code") {
    auto r = parse_job_records(R"([{"id": 7, "name": "retry", "state": "failed", "command": ["x"], "ranks": 2,
        "submitted": "2026-11-27T10:00:00Z", "started": "2026-11-27T10:00:01Z", "ended": "2026-11-27T10:00:09Z",
        "exit_code": 4, "failed_rank": 1, "restarts": 2, "max_restarts": 2}])");
    REQUIRE(r);
    REQUIRE(r->size() == 1);
    CHECK((*r)[0].restarts == 2);
    CHECK(job_table(*r).find(" 4 (rank 1), restarted 2/2 x\n") != std::string::npos);
}

TEST_CASE("the job table shows escape codes in a job's name and command escaped, not raw") {
    auto r = parse_job_records(
        R"([{"id": 7, "name": "\u001b]0;pwned\u0007x", "command": ["echo", "\u001b[2J"], "ranks": 1,
             "state": "queued", "submitted": "a"}])");
    REQUIRE(r);
    const std::string table = job_table(*r);
    CHECK(table.find('\x1b') == std::string::npos);
    CHECK(table.find('\x07') == std::string::npos);
    CHECK(table.find("7    \\x1b]0;pwned\\x07x ") != std::string::npos);
    CHECK(table.find("\\x1b[2J") != std::string::npos);
}
