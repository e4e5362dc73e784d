// The gc sweep runner against scripted steps: order, "already gone", refusals, dependencies, retries.
#include "provision/Sweep.hpp"

#include "support/Fakes.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

// An item whose removal answers from `answers` in turn (the last one repeats), recording each call.
SweepItem scripted(const std::string& label, std::vector<Result<SweepAnswer>> answers,
                   std::vector<std::string>& calls) {
    auto left = std::make_shared<std::vector<Result<SweepAnswer>>>(std::move(answers));
    return SweepItem{label, [label, left, &calls]() -> Result<SweepAnswer> {
                         calls.push_back(label);
                         auto a = left->front();
                         if (left->size() > 1) left->erase(left->begin());
                         return a;
                     }};
}

SweepAnswer accepted() {
    return SweepAnswer{true, "", ""};
}
SweepAnswer refused(const std::string& code, const std::string& text) {
    return SweepAnswer{false, code, text};
}
bool not_found(const std::string& code) {
    return code == "NotFound";
}

SweepStep step(const std::string& name, std::vector<SweepItem> items) {
    return SweepStep{.name = name,
                     .list = [items]() -> Result<std::vector<SweepItem>> { return items; },
                     .gone = not_found};
}

} // namespace

TEST_CASE("a sweep removes in table order, counts what is gone as removed and notes each removal") {
    std::vector<std::string> calls;
    test::FakeProgress progress;
    std::vector<SweepStep> steps{step("a", {scripted("thing a1", {accepted()}, calls)}),
                                 step("b", {scripted("thing b1", {refused("NotFound", "x")}, calls),
                                            scripted("thing b2", {accepted()}, calls)})};
    REQUIRE(run_sweep("c1", steps, progress).ok());
    CHECK(calls == std::vector<std::string>{"thing a1", "thing b1", "thing b2"});
    CHECK(progress.notes ==
          std::vector<std::string>{"removed thing a1 of cluster c1", "removed thing b2 of cluster c1"});
}

TEST_CASE("a refusal is named, the rest still tried, and the error says to run gc again") {
    std::vector<std::string> calls;
    test::FakeProgress progress;
    std::vector<SweepStep> steps{
        step("a", {scripted("a1", {refused("DependencyViolation", "a1: refused")}, calls)}),
        step("b", {scripted("b1", {Result<SweepAnswer>(Error{"timed out"})}, calls)}),
        SweepStep{.name = "c",
                  .list = []() -> Result<std::vector<SweepItem>> { return Error{"cannot list c"}; }},
        step("d", {scripted("d1", {accepted()}, calls)})};
    auto st = run_sweep("c1", steps, progress);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message ==
          "a1: refused; b1: timed out; cannot list c; run ddl gc again to retry what is left");
    CHECK(calls == std::vector<std::string>{"a1", "b1", "d1"});
}

TEST_CASE("a failed step the rest cannot do without stops the sweep, and so does a settle that times out") {
    std::vector<std::string> calls;
    test::FakeProgress progress;
    auto first = step("instances", {scripted("i1", {refused("Busy", "i1: busy")}, calls)});
    first.stop_on_failure = true;
    std::vector<SweepStep> steps{first, step("rest", {scripted("r1", {accepted()}, calls)})};
    auto st = run_sweep("c1", steps, progress);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message == "i1: busy");
    CHECK(calls == std::vector<std::string>{"i1"});

    calls.clear();
    auto waits = step("servers", {scripted("s1", {accepted()}, calls)});
    waits.settle = [] { return Status(Error{"s1 still there"}); };
    std::vector<SweepStep> steps2{
        step("ips", {scripted("ip1", {refused("Conflict", "ip1: conflict")}, calls)}), waits,
        step("rest", {scripted("r1", {accepted()}, calls)})};
    st = run_sweep("c1", steps2, progress);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message == "ip1: conflict; s1 still there");
    CHECK(calls == std::vector<std::string>{"ip1", "s1"});
}

TEST_CASE("a step after a failed one is skipped, and a step with attempts retries a refusal") {
    std::vector<std::string> calls;
    test::FakeProgress progress;
    auto detach = step("detach", {scripted("gw from vpc", {refused("Busy", "gw: busy")}, calls)});
    auto remove = step("gateways", {scripted("gw", {accepted()}, calls)});
    remove.after = {"detach"};
    auto retried =
        step("vpcs", {scripted("vpc", {refused("DependencyViolation", "vpc: in use"), accepted()}, calls)});
    retried.attempts = 2;
    auto st = run_sweep("c1", {detach, remove, retried}, progress);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message == "gw: busy; run ddl gc again to retry what is left");
    CHECK(calls == std::vector<std::string>{"gw from vpc", "vpc", "vpc"});
    CHECK(progress.notes == std::vector<std::string>{"removed vpc of cluster c1"});
}
