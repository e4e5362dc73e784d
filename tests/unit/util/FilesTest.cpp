#include "util/Files.hpp"

#include "util/KillPoint.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ddl;

TEST_CASE("write_file_atomic replaces the content and sets the mode") {
    TempDir dir;
    std::string p = dir.path() + "/state.json";
    REQUIRE(write_file_atomic(p, "one", 0600).ok());
    REQUIRE(write_file_atomic(p, "two", 0600).ok());
    CHECK(read_file(p).value() == "two");
    struct stat st {};
    REQUIRE(stat(p.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("read_file_limited refuses a file over its limit") {
    TempDir dir;
    std::string p = dir.path() + "/big";
    REQUIRE(write_file_atomic(p, std::string(3 * 1024 * 1024, 'x')).ok());
    auto r = read_file_limited(p, 1024 * 1024);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("larger than 1 MiB") != std::string::npos);
}

TEST_CASE("TempDir removes its folder and content") {
    std::string p;
    {
        TempDir dir;
        p = dir.path();
        REQUIRE(make_dirs(p + "/a/b").ok());
    }
    CHECK_FALSE(path_exists(p));
}

TEST_CASE("kill_point SIGKILLs the process at the named pass and traces every pass") {
    TempDir dir;
    std::string trace = dir.path() + "/trace";
    pid_t pid = fork();
    if (pid == 0) {
        setenv("DDL_TEST_KILL_AT", "step#2", 1);
        setenv("DDL_TEST_KILL_TRACE", trace.c_str(), 1);
        kill_point("other");
        kill_point("step");
        kill_point("step");
        _exit(0); // not reached when the point works
    }
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    auto text = read_file(trace);
    REQUIRE(text.ok());
    CHECK(*text == "other#1\nstep#1\nstep#2\n");
}
