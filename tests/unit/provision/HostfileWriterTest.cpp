#include "provision/HostfileWriter.hpp"

#include "runtime/Hostfile.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <regex>

using namespace ddl;

namespace {

NodeState node(const std::string& name, const std::string& address, int slots) {
    NodeState n;
    n.name = name;
    n.address = address;
    n.slots = slots;
    return n;
}

// Horovod's rules, as its launcher applies them (horovod/runner/common/util/hosts.py, parse_host_files
// then parse_hosts_and_slots): every line is split into its first word and the text after the first
// '=', joined as "host:slots", and that must match ^[\w.-]+:[0-9]+$. Blank and comment lines raise.
// Written here as the line rule it implies (ASCII host names: ddl's node names are ASCII).
bool horovod_accepts(const std::string& text) {
    static const std::regex line_rule(R"(\s*[A-Za-z0-9_.-]+\s+slots=[0-9]+)");
    const auto lines = split_lines(text);
    if (lines.empty()) return false;
    for (const auto& l : lines)
        if (!std::regex_match(l, line_rule)) return false;
    return true;
}

// MPICH Hydra (src/pm/hydra/lib/utils/args.c, HYDU_parse_hostfile): "host[:N]" per line, the host cut
// at the first ':'; so an IPv6 address cannot be written at all.
bool hydra_accepts(const std::string& text) {
    static const std::regex line_rule(R"(\s*[^\s:#\[\]]+(:[0-9]+)?\s*)");
    for (const auto& l : split_lines(text))
        if (!std::regex_match(l, line_rule)) return false;
    return !text.empty();
}

} // namespace

TEST_CASE("every node gets /etc/ddl/hostfile for mpirun and horovodrun and /etc/ddl/hostfile.mpich") {
    const std::vector<NodeState> nodes{node("master", "10.0.0.1", 2), node("worker1", "10.0.0.2", 4)};
    const auto files = node_hostfiles(nodes);
    REQUIRE(files.size() == 2);
    CHECK(files[0].path == "/etc/ddl/hostfile");
    CHECK(files[0].content == "10.0.0.1 slots=2\n10.0.0.2 slots=4\n");
    CHECK(horovod_accepts(files[0].content));
    CHECK(files[1].path == "/etc/ddl/hostfile.mpich");
    CHECK(files[1].content == "10.0.0.1:2\n10.0.0.2:4\n");
    CHECK(hydra_accepts(files[1].content));
    // Open MPI reads the same file: ddl's own parser (which follows Open MPI's syntax) agrees.
    auto parsed = runtime::parse_hostfile(files[0].content, "hostfile");
    REQUIRE(parsed);
    CHECK(runtime::total_slots(*parsed) == 6);
}

TEST_CASE("IPv6 nodes appear by name in the files horovodrun, mpirun and mpiexec read") {
    const std::vector<NodeState> nodes{node("master", "2001:db8::1", 1), node("worker1", "2001:db8::2", 1)};
    const auto files = node_hostfiles(nodes);
    CHECK(files[0].content == "master slots=1\nworker1 slots=1\n");
    CHECK(horovod_accepts(files[0].content));
    CHECK(files[1].content == "master:1\nworker1:1\n");
    CHECK(hydra_accepts(files[1].content));
    CHECK(format_hostfile(nodes, HostfileFormat::horovod) == files[0].content);
    // Open MPI 4.1's mpirun reads a bare IPv6 address but cannot route to the daemon it starts there
    // (tests/e2e/test_ipv6.sh): its format uses the names too.
    const auto openmpi = format_hostfile(nodes, HostfileFormat::openmpi);
    CHECK(openmpi.find("worker1 slots=1\n") != std::string::npos);
    CHECK(openmpi.find("2001:db8") == std::string::npos);
}

TEST_CASE("the Open MPI format's comment line is one horovodrun would refuse") {
    const std::vector<NodeState> nodes{node("master", "10.0.0.1", 1)};
    const auto openmpi = format_hostfile(nodes, HostfileFormat::openmpi);
    CHECK(openmpi.rfind("# ", 0) == 0);
    CHECK_FALSE(horovod_accepts(openmpi));
    CHECK_FALSE(horovod_accepts("10.0.0.1 slots=1 max_slots=2\n"));
    CHECK_FALSE(horovod_accepts("2001:db8::1 slots=1\n"));
    CHECK_FALSE(hydra_accepts("[2001:db8::1]:1\n"));
}

TEST_CASE("a cordoned node gets no line in any hostfile format, and the files still go to every node") {
    auto worker = node("worker1", "10.0.0.12", 2);
    worker.cordoned = true;
    const std::vector<NodeState> nodes{node("master", "10.0.0.11", 2), worker,
                                       node("worker2", "10.0.0.13", 2)};
    for (auto f : {HostfileFormat::openmpi, HostfileFormat::horovod, HostfileFormat::mpich})
        CHECK(format_hostfile(nodes, f).find("10.0.0.12") == std::string::npos);
    CHECK(format_hostfile(nodes, HostfileFormat::mpich) == "10.0.0.11:2\n10.0.0.13:2\n");
    CHECK_FALSE(worker.gets_ranks());
    for (const auto& f : node_hostfiles(nodes))
        CHECK(f.content.find("10.0.0.12") == std::string::npos);
}
