#include "state/Spares.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

std::vector<NodeState> cluster(int workers) {
    std::vector<NodeState> nodes;
    NodeState m;
    m.name = "master";
    m.group = "master";
    nodes.push_back(m);
    for (int i = 1; i <= workers; ++i) {
        NodeState w;
        w.name = "worker" + std::to_string(i);
        w.group = "workers";
        nodes.push_back(w);
    }
    return nodes;
}

std::vector<std::string> spares_of(const std::vector<NodeState>& nodes) {
    std::vector<std::string> out;
    for (const auto& n : nodes)
        if (n.spare) out.push_back(n.name + (n.cordoned ? " (out)" : ""));
    return out;
}

} // namespace

TEST_CASE("a first deploy marks the highest-numbered new workers as spares, never the master") {
    auto nodes = cluster(4);
    std::set<std::string> fresh{"master", "worker1", "worker2", "worker3", "worker4"};
    CHECK(assign_spares(nodes, 1, fresh) == std::vector<std::string>{"worker4"});
    CHECK(spares_of(nodes) == std::vector<std::string>{"worker4"});
    CHECK_FALSE(nodes[4].gets_ranks());
    CHECK(nodes[3].gets_ranks());
    // Again with nothing new: the marks stay.
    CHECK(assign_spares(nodes, 1, {}).empty());
    // More spares than workers: every worker, still not the master.
    auto small = cluster(1);
    assign_spares(small, 3, {"master", "worker1"});
    CHECK(spares_of(small) == std::vector<std::string>{"worker1"});
}

TEST_CASE("a resize keeps the spares' count: a new node gets ranks, or becomes the spare") {
    auto nodes = cluster(4);
    assign_spares(nodes, 1, {"master", "worker1", "worker2", "worker3", "worker4"});
    // One more node, the same number of spares: worker5 gets ranks.
    auto grown = nodes;
    NodeState w5;
    w5.name = "worker5";
    w5.group = "workers";
    grown.push_back(w5);
    CHECK(assign_spares(grown, 1, {"worker5"}).empty());
    CHECK(spares_of(grown) == std::vector<std::string>{"worker4"});
    // One more spare: the new node is it.
    auto more = nodes;
    more.push_back(w5);
    CHECK(assign_spares(more, 2, {"worker5"}) == std::vector<std::string>{"worker5"});
    // No spares any more: the mark goes, a ready one first.
    CHECK(assign_spares(more, 0, {}) == std::vector<std::string>{"worker4", "worker5"});
    CHECK(spares_of(more).empty());
    // The spare removed by a shrink: the highest-numbered worker with ranks takes the mark.
    auto shrunk = cluster(3);
    CHECK(assign_spares(shrunk, 1, {}) == std::vector<std::string>{"worker3"});
}

TEST_CASE("a spare takes a failed node's place; the failed node is a spare out of service") {
    auto nodes = cluster(4);
    assign_spares(nodes, 1, {"worker4"});
    CHECK(ready_spares(nodes) == std::vector<std::string>{"worker4"});
    REQUIRE(swap_in_spare(nodes, "worker2", "worker4").ok());
    CHECK(nodes[4].gets_ranks());
    CHECK_FALSE(nodes[2].gets_ranks());
    CHECK(spares_of(nodes) == std::vector<std::string>{"worker2 (out)"});
    CHECK(ready_spares(nodes).empty());
    // The count holds: a deploy that replaces worker2 clears its cordon, and it is a ready spare.
    CHECK(assign_spares(nodes, 1, {}).empty());
    nodes[2].cordoned = false;
    CHECK(ready_spares(nodes) == std::vector<std::string>{"worker2"});
    // Refused, nothing changed: no ready spare, a node without ranks, the master.
    auto before = spares_of(nodes);
    CHECK_FALSE(swap_in_spare(nodes, "worker1", "worker3").ok());
    CHECK_FALSE(swap_in_spare(nodes, "worker2", "worker2").ok());
    CHECK(swap_in_spare(nodes, "master", "worker2").error().message.find("the master") != std::string::npos);
    CHECK(spares_of(nodes) == before);
}
