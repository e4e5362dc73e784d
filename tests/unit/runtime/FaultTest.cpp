// Failures of real processes: a rank killed mid-allreduce, a rank stopped (a silent peer). Every
// surviving rank must get an error, never hang. No timing is asserted.
#include "RankHarness.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <sys/wait.h>
#include <thread>

using namespace ddl::runtime;

namespace {

constexpr int k_got_error = 42;

struct Child {
    pid_t pid = -1;
    int pipe_read = -1;
    int status = 0;
    std::string message;
};

// Forks one process per rank; each loops over allreduces until it gets a CommError, writes the
// message into its pipe and exits with k_got_error.
std::vector<Child> spawn_ranks(int n, std::chrono::milliseconds timeout) {
    const int port = ddl::runtime::testing::free_port();
    std::vector<Child> children(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(fds[0]);
            std::string message = "no error";
            int code = 1;
            try {
                CommOptions o = ddl::runtime::testing::loopback_options(r, n, port);
                o.timeout = timeout;
                Communicator comm(o);
                std::vector<float> buf(1 << 20, 1.0f);
                for (int i = 0; i < 100000; ++i)
                    comm.allreduce(buf.data(), buf.size(), DataType::float32, ReduceOp::average);
            } catch (const CommError& e) {
                message = e.what();
                code = k_got_error;
            } catch (const std::exception& e) {
                message = std::string("other exception: ") + e.what();
            }
            (void)!::write(fds[1], message.data(), message.size());
            ::_exit(code); // no atexit handlers of the test binary in the child
        }
        ::close(fds[1]);
        children[static_cast<std::size_t>(r)].pid = pid;
        children[static_cast<std::size_t>(r)].pipe_read = fds[0];
    }
    return children;
}

void collect(Child& c) {
    ::waitpid(c.pid, &c.status, 0);
    char buf[4096];
    ssize_t got = 0;
    while ((got = ::read(c.pipe_read, buf, sizeof buf)) > 0)
        c.message.append(buf, static_cast<std::size_t>(got));
    ::close(c.pipe_read);
}

} // namespace

TEST_CASE("killing one rank mid-allreduce gives every other rank an error naming it") {
    auto children = spawn_ranks(4, std::chrono::seconds(30));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500)); // bootstrapped and busy reducing
    ::kill(children[2].pid, SIGKILL);
    for (std::size_t r = 0; r < children.size(); ++r) {
        collect(children[r]);
        if (r == 2) continue;
        INFO("rank " << r << ": " << children[r].message);
        CHECK(WIFEXITED(children[r].status));
        CHECK(WEXITSTATUS(children[r].status) == k_got_error);
        CHECK(children[r].message.find("rank 2") != std::string::npos);
    }
}

TEST_CASE("a stopped rank (a silent peer) gives the others an error after the configured timeout") {
    auto children = spawn_ranks(3, std::chrono::milliseconds(1500));
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    ::kill(children[1].pid, SIGSTOP);
    for (std::size_t r = 0; r < children.size(); ++r) {
        if (r == 1) continue;
        collect(children[r]);
        INFO("rank " << r << ": " << children[r].message);
        CHECK(WIFEXITED(children[r].status));
        CHECK(WEXITSTATUS(children[r].status) == k_got_error);
        CHECK(children[r].message.find("rank") != std::string::npos);
    }
    ::kill(children[1].pid, SIGKILL);
    ::kill(children[1].pid, SIGCONT);
    collect(children[1]);
}

TEST_CASE("bootstrap fails with the missing ranks named when a rank never arrives") {
    auto results = ddl::runtime::testing::run_ranks(
        2, [](Communicator&) -> std::string { return "bootstrapped without rank 2"; },
        [](CommOptions& o) {
            o.size = 3; // rank 2 is never started
            o.bootstrap_timeout = std::chrono::seconds(1);
        });
    CHECK(results[0].find("rank(s) 2 did not join") != std::string::npos);
    CHECK(results[1].find("exception") != std::string::npos);
}
