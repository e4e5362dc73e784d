// ddl-train-bench: the model profiles against torchvision's real parameter counts, and the binary
// through the real launcher producing the JSON line its users (docs/performance.md, scripts) parse.
#include "RankHarness.hpp"
#include "runtime/Launcher.hpp"
#include "runtime/LocalTransport.hpp"
#include "runtime/tools/ModelProfile.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <mutex>

using namespace ddl::runtime;

namespace {

const std::string k_bench = std::string(DDL_BINARY_DIR) + "/dist/bin/ddl-train-bench";

using Run = ddl::runtime::testing::LocalRun;

Run bench(int ranks, std::vector<std::string> args) {
    args.insert(args.begin(), k_bench);
    return ddl::runtime::testing::run_local(ranks, std::move(args));
}

// The raw text of a top-level field of a flat JSON object ("" when absent).
std::string field(const std::string& json, const std::string& key) {
    const std::string tag = "\"" + key + "\":";
    const auto at = json.find(tag);
    if (at == std::string::npos) return "";
    const auto begin = at + tag.size();
    return json.substr(begin, json.find_first_of(",}", begin) - begin);
}

double number(const std::string& json, const std::string& key) {
    const auto text = field(json, key);
    return text.empty() ? -1 : std::stod(text);
}

} // namespace

TEST_CASE("the resnet50 profile has torchvision's 161 tensors and 25,557,032 parameters, fc first") {
    auto p = make_model_profile("resnet50");
    REQUIRE(p.ok());
    CHECK(p->tensors.size() == 161);
    CHECK(p->params() == 25'557'032);
    CHECK(p->bytes() == 102'228'128); // 97.49 MiB
    // Backprop order: the classifier's gradients are ready first, the stem's last.
    CHECK(p->tensors.front().name == "fc.bias");
    CHECK(p->tensors.front().count == 1000);
    CHECK(p->tensors[1].name == "fc.weight");
    CHECK(p->tensors[1].count == 2048 * 1000);
    CHECK(p->tensors.back().name == "conv1.weight");
    CHECK(p->tensors.back().count == 64 * 3 * 7 * 7);
    // The well-known 4.1 GMACs of a 224x224 forward pass (conv and fc).
    CHECK(p->forward_flops() > 2 * 4.0e9);
    CHECK(p->forward_flops() < 2 * 4.2e9);
}

TEST_CASE("the resnet101 profile has torchvision's 314 tensors and 44,549,160 parameters") {
    auto p = make_model_profile("resnet101");
    REQUIRE(p.ok());
    CHECK(p->tensors.size() == 314);
    CHECK(p->params() == 44'549'160);
    CHECK(p->forward_flops() > 2 * 7.7e9);
    CHECK(p->forward_flops() < 2 * 7.9e9);
}

TEST_CASE("a custom profile takes explicit element counts and rejects bad ones") {
    auto p = make_model_profile("custom:10,2000, 7");
    REQUIRE(p.ok());
    REQUIRE(p->tensors.size() == 3);
    CHECK(p->params() == 2017);
    CHECK(p->tensors[1].forward_flops > 0);
    CHECK_FALSE(make_model_profile("custom:").ok());
    CHECK_FALSE(make_model_profile("custom:10,-3").ok());
    CHECK_FALSE(make_model_profile("custom:10,x").ok());
    auto unknown = make_model_profile("resnet51");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message.find("resnet50") != std::string::npos);
}

TEST_CASE("ddl-train-bench on 2 ranks prints one sane JSON line from rank 0") {
    REQUIRE(ddl::path_exists(k_bench));
    const Run run =
        bench(2, {"--profile", "resnet50", "--batch", "2", "--steps", "2", "--warmup", "1", "--json"});
    REQUIRE(run.exit_code == 0);
    REQUIRE(run.lines.count(0) == 1);
    REQUIRE(run.lines.at(0).size() == 1);
    CHECK(run.lines.count(1) == 0); // only rank 0 reports
    const std::string& json = run.lines.at(0).front();
    INFO(json);
    CHECK(json.front() == '{');
    CHECK(json.back() == '}');
    CHECK(field(json, "profile") == "\"resnet50\"");
    CHECK(field(json, "ranks") == "2");
    CHECK(field(json, "batch") == "2");
    CHECK(field(json, "tensors") == "161");
    CHECK(field(json, "params") == "25557032");
    CHECK(field(json, "steps") == "2");
    const double step = number(json, "step_s"), compute = number(json, "compute_s");
    const double exposed = number(json, "comm_exposed_s");
    CHECK(step > 0);
    CHECK(compute > 0);
    CHECK(compute <= step);
    CHECK(exposed >= 0);
    CHECK(exposed == Approx(step - compute).margin(1e-5));
    CHECK(number(json, "samples_per_s_rank") == Approx(2 / step).epsilon(1e-3));
    CHECK(number(json, "samples_per_s") == Approx(2 * number(json, "samples_per_s_rank")).epsilon(1e-3));
}

TEST_CASE("ddl-train-bench --fused-vs-single reports both times and their ratio") {
    REQUIRE(ddl::path_exists(k_bench));
    const Run run = bench(2, {"--fused-vs-single", "--profile", "custom:1000,250000,3,40000", "--steps", "2",
                              "--warmup", "0", "--json"});
    REQUIRE(run.exit_code == 0);
    REQUIRE(run.lines.at(0).size() == 1);
    const std::string& json = run.lines.at(0).front();
    INFO(json);
    CHECK(field(json, "mode") == "\"fused-vs-single\"");
    CHECK(field(json, "tensors") == "4");
    CHECK(field(json, "bytes") == std::to_string(4 * 291003));
    CHECK(number(json, "fused_s") > 0);
    CHECK(number(json, "single_s") > 0);
    CHECK(number(json, "ratio") == Approx(number(json, "fused_s") / number(json, "single_s")).epsilon(1e-2));
}

TEST_CASE("ddl-train-bench rejects an unknown profile with exit status 2") {
    REQUIRE(ddl::path_exists(k_bench));
    const Run run = bench(1, {"--profile", "vgg16"});
    CHECK(run.exit_code == 2);
}
