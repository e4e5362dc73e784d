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

struct Run {
    int exit_code = -1;
    std::map<int, std::vector<std::string>> lines; // by rank
};

Run train(int ranks, int steps) {
    LaunchOptions o;
    o.hosts = {HostfileEntry{"localhost", ranks, std::nullopt, 0}};
    o.argv = {k_trainer, "--steps", std::to_string(steps), "--checksum", "--print-weights"};
    o.master_addr = "127.0.0.1";
    o.master_port = ddl::runtime::testing::free_port();
    o.iface = "lo";
    o.forward_signals = false;
    Run run;
    std::mutex mutex;
    o.output = [&](const std::string& line, OutputStream) {
        std::lock_guard lock(mutex);
        const auto close = line.find(']');
        run.lines[std::stoi(line.substr(1, close - 1))].push_back(line.substr(close + 2));
    };
    LocalTransport transport;
    auto result = Launcher(transport).run(o);
    if (result.ok()) run.exit_code = result->exit_code;
    return run;
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
