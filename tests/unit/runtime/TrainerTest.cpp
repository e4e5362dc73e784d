// The example trainer through the real launcher: data parallelism must not change the mathematics.
#include "RankHarness.hpp"
#include "runtime/Launcher.hpp"
#include "runtime/LocalTransport.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

using namespace ddl::runtime;

namespace {

const std::string k_trainer = std::string(DDL_BINARY_DIR) + "/dist/bin/mlp_trainer";

using Run = ddl::runtime::testing::LocalRun;

Run train(int ranks, int steps) {
    return ddl::runtime::testing::run_local(
        ranks, {k_trainer, "--steps", std::to_string(steps), "--checksum", "--print-weights"});
}

std::vector<double> weights_of(const std::vector<std::string>& lines) {
    for (const auto& l : lines) {
        if (l.rfind("weights ", 0) != 0) continue;
        std::istringstream in(l.substr(8));
        std::vector<double> w;
        for (double v; in >> v;)
            w.push_back(v);
        return w;
    }
    return {};
}

double loss_at(const std::vector<std::string>& lines, int step) {
    const std::string prefix = "step " + std::to_string(step) + " loss ";
    for (const auto& l : lines)
        if (l.rfind(prefix, 0) == 0) return std::stod(l.substr(prefix.size()));
    return -1;
}

} // namespace

TEST_CASE("the MLP trainer keeps replicas bit-identical and matches single-process training") {
    REQUIRE(ddl::path_exists(k_trainer));
    constexpr int k_steps = 30;
    const Run single = train(1, k_steps);
    const Run four = train(4, k_steps);
    REQUIRE(single.exit_code == 0);
    REQUIRE(four.exit_code == 0);
    REQUIRE(four.lines.size() == 4);

    SECTION("loss decreases") {
        CHECK(loss_at(single.lines.at(0), k_steps - 1) < 0.8 * loss_at(single.lines.at(0), 0));
    }

    // After every step all replicas hold the same weights.
    {
        for (int step = 0; step < k_steps; ++step) {
            std::set<std::string> checksums;
            for (const auto& [rank, lines] : four.lines)
                for (const auto& l : lines)
                    if (l.rfind("step " + std::to_string(step) + " ", 0) == 0)
                        checksums.insert(l.substr(l.find("checksum")));
            INFO("step " << step);
            CHECK(checksums.size() == 1);
        }
    }

    // 4 ranks end within 1e-5 of one process on the global batch.
    {
        const auto a = weights_of(single.lines.at(0));
        const auto b = weights_of(four.lines.at(0));
        REQUIRE(!a.empty());
        REQUIRE(a.size() == b.size());
        double worst = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            worst = std::max(worst, std::abs(a[i] - b[i]));
        CHECK(worst < 1e-5);
    }
}
