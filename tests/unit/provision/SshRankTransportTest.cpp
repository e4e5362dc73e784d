#include "provision/SshRankTransport.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {
runtime::RankStart start_of(std::vector<std::string> argv) {
    runtime::RankStart s;
    s.rank = 1;
    s.host = "10.0.0.2";
    s.argv = std::move(argv);
    s.env = {{"DDL_RANK", "1"}, {"MASTER_ADDR", "10.0.0.1"}, {"X", "a b'c"}};
    return s;
}
} // namespace

TEST_CASE("a rank in a container goes through the engine's exec with -e flags and the same wrapper") {
    auto s = start_of({"python3", "train.py", "--lr", "0.1"});
    auto cmd = SshRankTransport::container_command(s, {"podman", "--runtime", "runc"}, "ddl-train-c-worker1");
    CHECK(cmd.rfind("podman --runtime runc exec -i -e DDL_RANK=1 -e MASTER_ADDR=10.0.0.1 -e 'X=a b'", 0) ==
          0);
    CHECK(cmd.find(" ddl-train-c-worker1 sh -c ") != std::string::npos);
    // The wrapper (process group, signal lines on stdin, kill on EOF) runs inside the container.
    CHECK(cmd.find("setsid") != std::string::npos);
    CHECK(cmd.find("ddl-rank python3 train.py --lr 0.1") != std::string::npos);
    // No `env` prefix: the environment reached the container through -e.
    CHECK(cmd.find("ddl-rank env ") == std::string::npos);
    auto host = SshRankTransport::remote_command(s);
    CHECK(host.find("ddl-rank env DDL_RANK=1") != std::string::npos);
    CHECK(host.find(" exec -i ") == std::string::npos);
    CHECK(host.rfind("sh -c ", 0) == 0);
}

TEST_CASE("a rank with a workdir starts in it, and a missing folder ends it with 127 and the fix") {
    auto s = start_of({"python3", "train.py"});
    s.workdir = "/var/lib/ddl/work/my cluster";
    auto cmd = SshRankTransport::remote_command(s);
    CHECK(cmd.rfind("cd '/var/lib/ddl/work/my cluster' 2>/dev/null || {", 0) == 0);
    CHECK(cmd.find("run ddl sync") != std::string::npos);
    CHECK(cmd.find("exit 127; }; sh -c ") != std::string::npos);
    CHECK(cmd.find("ddl-rank env DDL_RANK=1") != std::string::npos);
}
