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

TEST_CASE(
    "read_regular_file refuses a FIFO without waiting for a writer, a folder, and a file over its limit") {
    TempDir dir;
    const std::string fifo = dir.path() + "/hostfile";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    auto r = read_regular_file(fifo, 1024);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == fifo + " is a FIFO, not a regular file; name a regular file");
    auto d = read_regular_file(dir.path(), 1024);
    REQUIRE_FALSE(d);
    CHECK(d.error().message == dir.path() + " is a folder, not a regular file; name a regular file");
    // A sparse file of 2 GB is refused from its size, before a byte is read.
    const std::string sparse = dir.path() + "/sparse";
    REQUIRE(write_file_atomic(sparse, "").ok());
    REQUIRE(truncate(sparse.c_str(), off_t{2} << 30) == 0);
    auto big = read_regular_file(sparse, std::size_t{64} << 20);
    REQUIRE_FALSE(big);
    CHECK(big.error().message == sparse + " is larger than 64 MiB (2147483648 bytes)");
    REQUIRE(write_file_atomic(dir.path() + "/ok", "hello").ok());
    CHECK(*read_regular_file(dir.path() + "/ok", 5) == "hello");
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
