#include "runtime/Hostfile.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>

using namespace ddl::runtime;

TEST_CASE("an OpenMPI hostfile with comments, blank lines and max_slots is read") {
    auto hosts =
        parse_hostfile("# cluster\n\nnode1 slots=4 max_slots=8\n  node2   slots=2 # two GPUs\n10.0.0.3\n");
    REQUIRE(hosts.ok());
    REQUIRE(hosts->size() == 3);
    CHECK((*hosts)[0] == HostfileEntry{"node1", 4, 8, 0});
    CHECK((*hosts)[1] == HostfileEntry{"node2", 2, std::nullopt, 0});
    CHECK((*hosts)[2] == HostfileEntry{"10.0.0.3", 1, std::nullopt, 0});
    CHECK((*hosts)[1].line == 4);
}

TEST_CASE("an MPICH hostfile with names, IPv4 and bracketed or bare IPv6 is read") {
    auto hosts = parse_hostfile("node1:2\n192.168.1.5:4\n[2001:db8::1]:3\n[::1]\nfe80::2\nplain\n");
    REQUIRE(hosts.ok());
    REQUIRE(hosts->size() == 6);
    CHECK((*hosts)[0] == HostfileEntry{"node1", 2, std::nullopt, 0});
    CHECK((*hosts)[1] == HostfileEntry{"192.168.1.5", 4, std::nullopt, 0});
    CHECK((*hosts)[2] == HostfileEntry{"2001:db8::1", 3, std::nullopt, 0});
    CHECK((*hosts)[3] == HostfileEntry{"::1", 1, std::nullopt, 0});
    CHECK((*hosts)[4] == HostfileEntry{"fe80::2", 1, std::nullopt, 0});
    CHECK(total_slots(*hosts) == 12);
}

TEST_CASE("IPv6 addresses with slots= are read in the OpenMPI format") {
    auto hosts = parse_hostfile("2001:db8::7 slots=2\n");
    REQUIRE(hosts.ok());
    CHECK((*hosts)[0] == HostfileEntry{"2001:db8::7", 2, std::nullopt, 0});
}

TEST_CASE("a host listed twice gets the sum of its slots") {
    auto hosts = parse_hostfile("a slots=2\nb\na:3\n");
    REQUIRE(hosts.ok());
    REQUIRE(hosts->size() == 2);
    CHECK((*hosts)[0].slots == 5);
}

TEST_CASE("every hostfile error is reported with its line number") {
    auto hosts = parse_hostfile(
        "good slots=1\nbad slots=0\nnode:x\n[::1:2\nhost slot=2\n1::2::3\nn max_slots=1 slots=2\nb@d\n",
        "hosts.txt");
    REQUIRE_FALSE(hosts.ok());
    const std::string& m = hosts.error().message;
    CHECK(m.find("hosts.txt:2: error: slots must be an integer >= 1 (got '0')") != std::string::npos);
    CHECK(m.find("hosts.txt:3: error: 'x' after ':' is not a slot count") != std::string::npos);
    CHECK(m.find("hosts.txt:4: error: '[::1:2' has no closing ']'") != std::string::npos);
    CHECK(m.find("hosts.txt:5: error: unknown key 'slot' (did you mean 'slots'?)") != std::string::npos);
    CHECK(m.find("hosts.txt:6: error: '1::2::3' is not an IPv6 address") != std::string::npos);
    CHECK(m.find("hosts.txt:7: error: max_slots=1 is below slots=2") != std::string::npos);
    CHECK(m.find("hosts.txt:8: error: 'b@d' is not a valid host name or address") != std::string::npos);
}

TEST_CASE("an empty hostfile is an error") {
    auto hosts = parse_hostfile("# nothing\n\n");
    REQUIRE_FALSE(hosts.ok());
    CHECK(hosts.error().message.find("no hosts") != std::string::npos);
}

TEST_CASE("writers produce the OpenMPI, strict Horovod and MPICH formats") {
    const std::vector<HostfileEntry> hosts = {
        {"node1", 2, 4, 0}, {"2001:db8::1", 1, std::nullopt, 0}, {"10.0.0.2", 3, std::nullopt, 0}};
    CHECK(write_hostfile(hosts, HostfileFormat::openmpi, {"written by ddl"}) ==
          "# written by ddl\nnode1 slots=2 max_slots=4\n2001:db8::1 slots=1\n10.0.0.2 slots=3\n");
    CHECK(write_hostfile(hosts, HostfileFormat::horovod, {"dropped"}) ==
          "node1 slots=2\n2001:db8::1 slots=1\n10.0.0.2 slots=3\n");
    CHECK(write_hostfile(hosts, HostfileFormat::mpich) == "node1:2\n[2001:db8::1]:1\n10.0.0.2:3\n");
}

TEST_CASE("every format round-trips through the parser, IPv6 included") {
    const std::vector<HostfileEntry> hosts = {{"node-1.example.org", 2, std::nullopt, 0},
                                              {"::1", 1, std::nullopt, 0},
                                              {"fe80::1234:5678", 4, std::nullopt, 0},
                                              {"192.0.2.9", 8, std::nullopt, 0}};
    for (auto format : {HostfileFormat::openmpi, HostfileFormat::horovod, HostfileFormat::mpich}) {
        INFO(hostfile_format_name(format));
        auto back = parse_hostfile(write_hostfile(hosts, format, {"header"}));
        REQUIRE(back.ok());
        CHECK(*back == hosts);
    }
}

TEST_CASE("hostfile format names are recognised") {
    CHECK(hostfile_format_from_name("OpenMPI") == HostfileFormat::openmpi);
    CHECK(hostfile_format_from_name("horovod") == HostfileFormat::horovod);
    CHECK(hostfile_format_from_name("mpich") == HostfileFormat::mpich);
    CHECK_FALSE(hostfile_format_from_name("slurm").has_value());
}

TEST_CASE("a host with a NUL byte is refused, also in brackets (found by fuzzing)") {
    using namespace std::string_literals;
    auto bracketed = ddl::runtime::parse_hostfile("[1:db8::3\0\0]:3\n"s, "hf");
    REQUIRE_FALSE(bracketed.ok());
    CHECK(bracketed.error().message.find("hf:1: error:") != std::string::npos);
    CHECK_FALSE(ddl::runtime::parse_hostfile("10.0.0.1\0x slots=2\n"s, "hf").ok());
}

TEST_CASE("a host listed twice sums its slots, and keeps a limit only when every line has one (fuzzing)") {
    auto a = ddl::runtime::parse_hostfile("node1 slots=4\nnode1 slots=5 max_slots=8\n", "hf");
    REQUIRE(a.ok());
    REQUIRE(a->size() == 1);
    CHECK((*a)[0].slots == 9);
    CHECK_FALSE((*a)[0].max_slots.has_value());
    auto b = ddl::runtime::parse_hostfile("node1 slots=2 max_slots=3\nnode1 slots=5 max_slots=8\n", "hf");
    REQUIRE(b.ok());
    CHECK((*b)[0].slots == 7);
    CHECK((*b)[0].max_slots == 11);
    auto again =
        ddl::runtime::parse_hostfile(ddl::runtime::write_hostfile(*a, ddl::runtime::HostfileFormat::openmpi));
    REQUIRE(again.ok());
    CHECK((*again)[0].slots == 9);
}

TEST_CASE("slots summed over repeated lines stay within the limit (fuzzing)") {
    auto r = ddl::runtime::parse_hostfile("i:46460\ni:46460\n", "hf");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("hf:2: error: 'i' has 92920 slots over all its lines; at most 65536") !=
          std::string::npos);
}

TEST_CASE("a hostfile that is a FIFO is refused at once instead of waiting for a writer") {
    ddl::TempDir dir;
    const std::string fifo = dir.path() + "/hosts";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    auto hosts = read_hostfile(fifo);
    REQUIRE_FALSE(hosts.ok());
    CHECK(hosts.error().message ==
          "hostfile: " + fifo + " is a FIFO, not a regular file; name a regular file");
}
