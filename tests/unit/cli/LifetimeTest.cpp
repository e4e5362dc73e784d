#include "cli/Lifetime.hpp"

#include "util/UtcTime.hpp"

#include <catch2/catch.hpp>

using namespace ddl;
using namespace ddl::cli;

namespace {

// 2026-11-18T11:06:40Z
const auto k_created = std::chrono::system_clock::from_time_t(1'795'000'000);

ClusterState two_nodes() {
    ClusterState st;
    st.cluster = "demo";
    st.target = "local";
    st.created_at = "2026-11-18T11:06:40Z";
    NodeState m{.name = "master", .group = "master"};
    m.probed = true;
    m.gpus = 4;
    NodeState w{.name = "w1", .group = "workers"};
    st.nodes = {m, w};
    return st;
}

} // namespace

TEST_CASE("the lifetime ends its span after the state's creation time") {
    auto st = two_nodes();
    LifeSpec life{.lifetime_s = 3600};
    REQUIRE(created_time(st) == k_created);
    CHECK(lifetime_end(st, life) == k_created + std::chrono::hours(1));
    CHECK_FALSE(lifetime_end(st, LifeSpec{}));
    CHECK(lifetime_text(k_created + std::chrono::hours(1), k_created + std::chrono::minutes(20)) ==
          "lifetime ends 2026-11-18T12:06:40Z (in 40m)");
    CHECK(lifetime_text(k_created + std::chrono::hours(1), k_created + std::chrono::hours(2)) ==
          "lifetime ended 2026-11-18T12:06:40Z (`ddl gc --expired` destroys it)");
}

TEST_CASE("a state without created_at counts from its earliest finished phase") {
    auto st = two_nodes();
    st.created_at.clear();
    st.mark_done("render", "2026-11-18T11:06:40Z");
    st.mark_done("probe", "2026-11-18T11:10:00Z");
    st.phases["configure"] = {false, "2026-11-18T09:00:00Z"}; // not finished: not counted
    CHECK(created_time(st) == k_created);
    st.phases.clear();
    CHECK_FALSE(created_time(st));
    CHECK_FALSE(lifetime_end(st, LifeSpec{.lifetime_s = 60}));
    CHECK(usage_so_far(st, Spec{}, k_created).node_hours == 0);
}

TEST_CASE("node-hours, GPU-hours and cost grow with the nodes, their GPUs and the hours") {
    auto st = two_nodes();
    Spec spec;
    spec.workers.gpus = 2; // the unprobed worker counts what the spec asks for
    CostSpec cost{.per_node_hour = 1.2, .per_gpu_hour = 2.5, .currency = "EUR"};
    spec.life.cost = cost;
    const auto u = usage_so_far(st, spec, k_created + std::chrono::minutes(90));
    CHECK(u.nodes == 2);
    CHECK(u.gpus == 6);
    CHECK(u.node_hours == Approx(3.0));
    CHECK(u.gpu_hours == Approx(9.0));
    auto j = usage_json(u, cost);
    CHECK(j["cost"]["amount"].get<double>() == Approx(3.0 * 1.2 + 9.0 * 2.5));
    CHECK(j["cost"]["per_hour"].get<double>() == Approx(2 * 1.2 + 6 * 2.5));
    CHECK(j["cost"]["currency"] == "EUR");
    CHECK(usage_json(u, CostSpec{})["cost"].is_null());
    CHECK(usage_text(u, cost) ==
          "2 nodes, 6 GPUs: 3.00 node-hours, 9.00 GPU-hours (cost 26.10 EUR so far, 17.40 EUR per hour)");
    // Before its creation (a clock behind the state's): nothing used yet.
    CHECK(usage_so_far(st, spec, k_created - std::chrono::minutes(5)).gpu_hours == 0);
}

TEST_CASE("a price table by flavor and GPU model prices each node by its group's flavor and its GPUs") {
    auto st = two_nodes();
    st.nodes[0].gpu_names = {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"};
    Spec spec;
    spec.master.flavor = "g1.xlarge";
    spec.workers.gpus = 2;
    spec.life.cost = {.per_node_hour = 1.2,
                      .per_gpu_hour = 2.5,
                      .per_flavor = {{"g1.xlarge", 3.0}},
                      .per_gpu_model = {{"a100", 2.0}, {"A100-SXM4", 2.2}},
                      .currency = "EUR"};
    // The longest model name the GPU's name holds, whatever the case; an unknown name: per_gpu_hour.
    CHECK(spec.life.cost.gpu_price("NVIDIA A100-SXM4-80GB") == Approx(2.2));
    CHECK(spec.life.cost.gpu_price("NVIDIA A100-PCIE-40GB") == Approx(2.0));
    CHECK(spec.life.cost.gpu_price("") == Approx(2.5));
    CHECK(spec.life.cost.node_price("m1.small") == Approx(1.2));
    const auto u = usage_so_far(st, spec, k_created + std::chrono::minutes(90));
    // master: 3.00 + 4 x 2.20; the worker (no flavor, 2 GPUs as the spec asks, name unknown): 1.20 + 2
    // x 2.50.
    CHECK(hourly_cost(u, spec.life.cost) == Approx(18.0));
    CHECK(usage_json(u, spec.life.cost)["cost"]["amount"].get<double>() == Approx(27.0));
    CHECK(usage_text(u, spec.life.cost) ==
          "2 nodes, 6 GPUs: 3.00 node-hours, 9.00 GPU-hours (cost 27.00 EUR so far, 18.00 EUR per hour)");
}

TEST_CASE("the plan's hourly figure: by node count, or by each node group's flavor where it is priced") {
    Spec spec;
    spec.master.flavor = "m1.large";
    spec.workers = {.count = 2, .flavor = "g1.xlarge", .gpus = 2};
    CHECK(hourly_text(spec).empty());
    spec.life.cost = {.per_node_hour = 1.2, .per_gpu_hour = 2.5, .currency = "EUR"};
    CHECK(hourly_text(spec) == "13.60 EUR per hour (3 nodes at 1.20, 4 GPUs at 2.50)");
    spec.life.cost.per_flavor = {{"g1.xlarge", 3.2}};
    CHECK(hourly_text(spec) ==
          "17.60 EUR per hour (1 node of m1.large at 1.20, 2 nodes of g1.xlarge at 3.20, 4 GPUs at 2.50)");
}

TEST_CASE("stopped spells are left out of node-hours, GPU-hours and cost") {
    auto st = two_nodes();
    Spec spec;
    st.stopped_s = 1800; // an earlier spell of 30 minutes
    st.stopped_at = "2026-11-18T12:06:40Z";
    // Created 3 h ago, stopped 2 h ago (now) and 30 min before: 30 min of running time.
    CostSpec cost{.per_node_hour = 1.0, .currency = "EUR"};
    spec.life.cost = cost;
    const auto u = usage_so_far(st, spec, k_created + std::chrono::hours(3));
    CHECK(stopped_seconds(st, k_created + std::chrono::hours(3)) == Approx(1800 + 7200));
    CHECK(u.hours == Approx(0.5));
    CHECK(u.node_hours == Approx(1.0));
    CHECK(u.gpu_hours == Approx(2.0));
    CHECK(usage_json(u, cost)["cost"]["amount"].get<double>() == Approx(1.0));
    st.stopped_at.clear(); // started again: only the finished spells count
    CHECK(usage_so_far(st, spec, k_created + std::chrono::hours(3)).hours == Approx(2.5));
}

TEST_CASE("usage adds up spell by spell: growing, shrinking, stopping never lowers what was used") {
    auto st = two_nodes(); // created at k_created with 2 nodes (master: 4 GPUs)
    Spec spec;
    spec.life.cost = {.per_node_hour = 1.0, .currency = "EUR"};
    auto at = [](std::chrono::minutes m) {
        return utc_text(std::chrono::system_clock::to_time_t(k_created + m));
    };
    st.note_spell(at(std::chrono::minutes(1)));
    REQUIRE(st.spells.size() == 1);
    CHECK(st.spells.front().at == st.created_at); // the first spell starts at the creation
    st.note_spell(at(std::chrono::minutes(5)));   // nothing changed: no new spell
    CHECK(st.spells.size() == 1);
    // Grown to 3 nodes after 60 min, shrunk to 1 after 120 min.
    st.nodes.push_back(NodeState{.name = "w2", .group = "workers"});
    st.note_spell(at(std::chrono::minutes(60)));
    st.nodes.resize(1);
    st.note_spell(at(std::chrono::minutes(120)));
    REQUIRE(st.spells.size() == 3);
    auto used = [&](int minutes) {
        return usage_so_far(st, spec, k_created + std::chrono::minutes(minutes));
    };
    CHECK(used(60).node_hours == Approx(2.0));
    CHECK(used(120).node_hours == Approx(2.0 + 3.0));
    CHECK(used(180).node_hours == Approx(2.0 + 3.0 + 1.0));
    CHECK(used(180).gpu_hours == Approx(3 * 4.0)); // the master's 4 GPUs all along
    CHECK(used(180).cost == Approx(6.0));
    CHECK(used(180).nodes == 1); // what runs now
    // Stopped at 180 min, started at 240: the hour between counts nothing.
    st.stopped_at = at(std::chrono::minutes(180));
    st.note_spell(at(std::chrono::minutes(180)));
    st.stopped_at.clear();
    st.note_spell(at(std::chrono::minutes(240)));
    CHECK(used(240).node_hours == Approx(6.0));
    CHECK(used(300).node_hours == Approx(7.0));
    // The master's GPUs change (probed again with 8): a new spell from then on.
    st.nodes[0].gpus = 8;
    st.note_spell(at(std::chrono::minutes(250)));
    CHECK(st.spells.size() == 6);
    CHECK(used(300).gpu_hours == Approx(12.0 + 4.0 * 10 / 60 + 8.0 * 50 / 60));
    // Written and read back, the spells are the same.
    auto back = ClusterState::from_json(st.to_json());
    REQUIRE(back);
    CHECK(usage_so_far(*back, spec, k_created + std::chrono::minutes(300)).node_hours == Approx(7.0));
}

TEST_CASE("a state written before spells were kept keeps its usage: its stopped seconds become a spell") {
    auto st = two_nodes();
    Spec spec;
    st.stopped_s = 1800; // stopped for 30 min at some time in its first 3 hours
    const auto now = k_created + std::chrono::hours(3);
    const double before = usage_so_far(st, spec, now).node_hours; // the old formula: 2 nodes x 2.5 h
    CHECK(before == Approx(5.0));
    st.note_spell(utc_text(std::chrono::system_clock::to_time_t(now)));
    REQUIRE(st.spells.size() == 3); // running from creation, stopped for 30 min until now, running again
    CHECK(st.spells[0].at == st.created_at);
    CHECK_FALSE(st.spells[1].running);
    CHECK(usage_so_far(st, spec, now).node_hours == Approx(before));
    CHECK(usage_so_far(st, spec, now + std::chrono::hours(1)).node_hours == Approx(before + 2.0));
    // Stopped when its first spell is written: the stopped spell goes on.
    auto off = two_nodes();
    off.stopped_at = "2026-11-18T13:06:40Z"; // 2 h after creation
    off.note_spell(utc_text(std::chrono::system_clock::to_time_t(now)));
    REQUIRE(off.spells.size() == 2);
    CHECK(usage_so_far(off, spec, now + std::chrono::hours(1)).node_hours == Approx(4.0));
}

TEST_CASE("a node's first probe starts no spell: its probed GPUs count from the spell's start") {
    auto st = two_nodes();
    Spec spec;
    spec.workers.gpus = 2; // what the unprobed worker is expected to have
    st.note_spell(st.created_at);
    REQUIRE(st.spells.size() == 1);
    CHECK(st.spells[0].nodes[1].gpus == -1);
    st.nodes[1].probed = true;
    st.nodes[1].gpus = 1;
    st.note_spell("2026-11-18T11:36:40Z");
    REQUIRE(st.spells.size() == 1);
    CHECK(st.spells[0].nodes[1].gpus == 1);
    CHECK(usage_so_far(st, spec, k_created + std::chrono::hours(1)).gpu_hours == Approx(5.0));
}

TEST_CASE("gc --expired destroys past the lifetime, stops or destroys when idle by autostop.action") {
    auto st = two_nodes();
    const auto now = k_created + std::chrono::hours(2);
    int asked = 0;
    auto idle = [&] {
        ++asked;
        return true;
    };
    auto busy = [&] {
        ++asked;
        return false;
    };
    LifeSpec life{.lifetime_s = 3600};
    CHECK(expiry_of(st, life, now, idle) == Expiry::destroy);
    life.autostop = {.idle_minutes = 10, .action = "stop"};
    CHECK(expiry_of(st, life, now, idle) == Expiry::destroy); // the lifetime wins over the idle stop
    life.lifetime_s = 0;
    CHECK(expiry_of(st, life, now, idle) == Expiry::stop);
    CHECK(expiry_of(st, life, now, busy) == Expiry::none);
    life.autostop.action = "destroy";
    CHECK(expiry_of(st, life, now, idle) == Expiry::destroy);
    // A stopped cluster is left as it is: its idle clock is not asked (its master does not answer).
    asked = 0;
    st.stopped_at = "2026-11-18T12:00:00Z";
    life.autostop.action = "stop";
    CHECK(expiry_of(st, life, now, idle) == Expiry::none);
    CHECK(asked == 0);
    // ... unless its lifetime has ended: then it is destroyed, stopped or not.
    life.lifetime_s = 3600;
    CHECK(expiry_of(st, life, now, idle) == Expiry::destroy);
    // Without autostop nothing is asked either.
    st.stopped_at.clear();
    CHECK(expiry_of(st, LifeSpec{}, now, idle) == Expiry::none);
    CHECK(asked == 0);
}
