#include "runtime/Launcher.hpp"

#include "runtime/LocalTransport.hpp"

#include <catch2/catch.hpp>
#include <mutex>

using namespace ddl::runtime;

namespace {

struct Captured {
    std::mutex mutex;
    std::vector<std::string> out, err;
};

LaunchOptions options_for(std::vector<std::string> argv, Captured& cap) {
    LaunchOptions o;
    o.hosts = {HostfileEntry{"hostA", 2, std::nullopt, 0}, HostfileEntry{"hostB", 1, std::nullopt, 0}};
    o.argv = std::move(argv);
    o.master_port = 29999;
    o.forward_signals = false;
    o.kill_grace = std::chrono::seconds(1);
    o.output = [&cap](const std::string& line, OutputStream s) {
        std::lock_guard lock(cap.mutex);
        (s == OutputStream::out ? cap.out : cap.err).push_back(line);
    };
    return o;
}

bool contains(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

} // namespace

TEST_CASE("ranks are packed host by host and -np above the slots is an error listing them") {
    const std::vector<HostfileEntry> hosts = {{"a", 2, std::nullopt, 0}, {"b", 2, std::nullopt, 0}};
    auto three = assign_ranks(hosts, 3);
    REQUIRE(three.ok());
    REQUIRE(three->size() == 3);
    CHECK((*three)[1].host == "a");
    CHECK((*three)[1].local_rank == 1);
    CHECK((*three)[2].host == "b");
    CHECK((*three)[2].local_size == 1);
    CHECK(assign_ranks(hosts, 0)->size() == 4);
    auto too_many = assign_ranks(hosts, 5);
    REQUIRE_FALSE(too_many.ok());
    CHECK(too_many.error().message == "-np 5 is more than the 4 slots in the hostfile (a: 2, b: 2)");
}

TEST_CASE("every rank gets the DDL and torch environment and its output prefixed with its rank") {
    Captured cap;
    auto opts = options_for(
        {"/bin/sh", "-c",
         "echo $DDL_RANK $DDL_SIZE $DDL_LOCAL_RANK $DDL_LOCAL_SIZE $DDL_MASTER_ADDR $DDL_MASTER_PORT "
         "$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT "
         "$NCCL_SOCKET_IFNAME x$DDL_IFACE; echo oops >&2"},
        cap);
    LocalTransport transport;
    auto result = Launcher(transport).run(opts);
    REQUIRE(result.ok());
    CHECK(result->exit_code == 0);
    CHECK(contains(cap.out, "[0] 0 3 0 2 hostA 29999 0 3 0 2 hostA 29999 ^lo,docker x"));
    CHECK(contains(cap.out, "[1] 1 3 1 2 hostA 29999 1 3 1 2 hostA 29999 ^lo,docker x"));
    CHECK(contains(cap.out, "[2] 2 3 0 1 hostA 29999 2 3 0 1 hostA 29999 ^lo,docker x"));
    CHECK(contains(cap.err, "[2] oops"));
}

TEST_CASE("the interface option sets DDL_IFACE and NCCL_SOCKET_IFNAME") {
    Captured cap;
    auto opts = options_for({"/bin/sh", "-c", "echo $DDL_IFACE $NCCL_SOCKET_IFNAME"}, cap);
    opts.iface = "eth1";
    opts.np = 1;
    LocalTransport transport;
    auto result = Launcher(transport).run(opts);
    REQUIRE(result.ok());
    CHECK(cap.out == std::vector<std::string>{"[0] eth1 eth1"});
}

TEST_CASE("one rank failing stops the others and the launcher names its rank, host and status") {
    Captured cap;
    auto opts = options_for({"/bin/sh", "-c", "if [ $DDL_RANK = 2 ]; then exit 3; fi; exec sleep 60"}, cap);
    LocalTransport transport;
    auto result = Launcher(transport).run(opts);
    REQUIRE(result.ok());
    CHECK(result->exit_code == 3);
    CHECK(result->failed_rank == 2);
    CHECK(result->failed_host == "hostB");
    CHECK(result->message == "rank 2 on hostB exited with status 3");
}

TEST_CASE("a rank killed by a signal is reported with the signal") {
    Captured cap;
    auto opts =
        options_for({"/bin/sh", "-c", "if [ $DDL_RANK = 0 ]; then kill -9 $$; fi; exec sleep 60"}, cap);
    LocalTransport transport;
    auto result = Launcher(transport).run(opts);
    REQUIRE(result.ok());
    CHECK(result->exit_code == 128 + 9);
    CHECK(result->message.find("rank 0 on hostA was killed by signal 9") == 0);
}

TEST_CASE("a program that cannot be executed fails the launch with the reason") {
    Captured cap;
    auto opts = options_for({"/nonexistent/program"}, cap);
    LocalTransport transport;
    auto result = Launcher(transport).run(opts);
    REQUIRE(result.ok());
    CHECK(result->exit_code != 0);
    CHECK(result->message.find("could not start: cannot execute '/nonexistent/program'") !=
          std::string::npos);
}

TEST_CASE("a prefix argv wraps the command of a host") {
    Captured cap;
    auto opts = options_for({"hello"}, cap);
    opts.np = 1;
    LocalTransport transport({}, {{"hostA", {"/bin/echo", "wrapped"}}});
    auto result = Launcher(transport).run(opts);
    REQUIRE(result.ok());
    CHECK(cap.out == std::vector<std::string>{"[0] wrapped hello"});
}

namespace {

// A transport whose ranks never start, for the start-up timeout.
class SilentTransport : public RankTransport {
public:
    class Handle : public RankHandle {
    public:
        Handle(int rank, RankEvents& events) : m_rank(rank), m_events(events) {}
        void kill(int) override {
            if (!m_exited) m_events.on_exit(m_rank, RankExit{-1, 0, true, "never connected"});
            m_exited = true;
        }

    private:
        int m_rank;
        RankEvents& m_events;
        bool m_exited = false;
    };
    ddl::Result<std::unique_ptr<RankHandle>> start(const RankStart& s, RankEvents& events) override {
        if (s.host == "hostA") events.on_started(s.rank);
        return std::unique_ptr<RankHandle>(std::make_unique<Handle>(s.rank, events));
    }
};

} // namespace

TEST_CASE("a start-up timeout names the hosts whose ranks did not start") {
    Captured cap;
    auto opts = options_for({"x"}, cap);
    opts.startup_timeout = std::chrono::milliseconds(200);
    SilentTransport transport;
    auto result = Launcher(transport).run(opts);
    REQUIRE(result.ok());
    CHECK(result->exit_code == 1);
    CHECK(result->message == "ranks did not start within 0.2 s on: hostB");
}
