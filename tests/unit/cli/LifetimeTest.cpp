#include "cli/Lifetime.hpp"

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
    const auto u = usage_so_far(st, spec, k_created + std::chrono::minutes(90));
    CHECK(u.nodes == 2);
    CHECK(u.gpus == 6);
    CHECK(u.node_hours == Approx(3.0));
    CHECK(u.gpu_hours == Approx(9.0));
    CostSpec cost{.per_node_hour = 1.2, .per_gpu_hour = 2.5, .currency = "EUR"};
    auto j = usage_json(u, cost);
    CHECK(j["cost"]["amount"].get<double>() == Approx(3.0 * 1.2 + 9.0 * 2.5));
    CHECK(j["cost"]["per_hour"].get<double>() == Approx(2 * 1.2 + 6 * 2.5));
    CHECK(j["cost"]["currency"] == "EUR");
    CHECK(usage_json(u, CostSpec{})["cost"].is_null());
    CHECK(usage_text(u, cost) ==
          "2 nodes, 6 GPUs: 3.00 node-hours, 9.00 GPU-hours (cost 26.10 EUR so far, 17.40 EUR per hour)");
    CHECK(hourly_text(3, 4, cost) == "13.60 EUR per hour (3 nodes at 1.20, 4 GPUs at 2.50)");
    CHECK(hourly_text(3, 4, CostSpec{}).empty());
    // Before its creation (a clock behind the state's): nothing used yet.
    CHECK(usage_so_far(st, spec, k_created - std::chrono::minutes(5)).gpu_hours == 0);
}
