#include "spec/WorkSection.hpp"

#include "targets/Registry.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

using namespace ddl;

namespace {
const std::string k_head = "apiVersion: ddl/v1\nname: demo\ntarget: local\n";

SpecLoadResult load_in(const TempDir& dir, const std::string& body) {
    return load_spec_string(k_head + body, dir.path() + "/cluster.yaml");
}
} // namespace

TEST_CASE("workdir is read from the spec file's folder and setup and env keep their order") {
    TempDir dir;
    std::filesystem::create_directory(dir.path() + "/code");
    auto r = load_in(
        dir, "workdir: ./code/\nsetup:\n  - pip install -r requirements.txt\n  - |\n    echo a\n    echo b\n"
             "env:\n  WANDB_PROJECT: mnist\n  HF_TOKEN: ${HF_TOKEN}\n  KEY: {from_env: MY_KEY}\n");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec);
    const auto& w = r.spec->work;
    CHECK(w.workdir == "./code/");
    CHECK(w.workdir_path == dir.path() + "/code");
    REQUIRE(w.setup.size() == 2);
    CHECK(w.setup[1] == "echo a\necho b\n");
    CHECK(w.setup_lines == std::vector<int>{6, 7});
    REQUIRE(w.env.size() == 3);
    CHECK(w.env[0] == EnvVar{.name = "WANDB_PROJECT", .value = "mnist"});
    CHECK(w.env[1] == EnvVar{.name = "HF_TOKEN", .from_env = "HF_TOKEN"});
    CHECK(w.env[2] == EnvVar{.name = "KEY", .from_env = "MY_KEY"});
}

TEST_CASE(
    "a setup given as one program is a list of one, and the work keys stay out of the normalized spec") {
    TempDir dir;
    auto r = load_in(dir, "workdir: .\nsetup: make\n");
    REQUIRE(r.spec);
    CHECK(r.spec->work.setup == std::vector<std::string>{"make"});
    CHECK(r.spec->work.workdir_path == dir.path());
    CHECK_FALSE(r.spec->to_json().contains("workdir"));
}

TEST_CASE("a workdir that is not a folder is reported at its line with the path it looked at") {
    TempDir dir;
    auto r = load_in(dir, "workdir: missing\n");
    CHECK_FALSE(r.spec);
    auto text = r.diagnostics.format_text();
    CHECK(text.find("cluster.yaml:4:10: error: workdir missing is not a folder (" + dir.path() +
                    "/missing)") != std::string::npos);
}

TEST_CASE("a stored spec's workdir is not looked for on this machine") {
    auto r = load_spec_string(k_head + "workdir: gone\n", "demo (stored spec)", SpecOrigin::stored);
    REQUIRE(r.spec);
    CHECK(r.spec->work.workdir_path == "gone");
}

TEST_CASE("bad setup and env entries are each reported with a hint") {
    TempDir dir;
    auto r =
        load_in(dir, "workdir: .\nsetup: [ok, '', {a: 1}]\nenv:\n  DDL_RANK: 1\n  RANK: 2\n  1BAD: x\n"
                     "  MIX: pre-${X}\n  LIST: [1]\n  FROM: {from_env: 'no-name'}\n  OTHER: {from: X}\n");
    CHECK_FALSE(r.spec);
    auto text = r.diagnostics.format_text();
    INFO(text);
    CHECK(text.find(":5:13: error: setup[1] must be a shell program") != std::string::npos);
    CHECK(text.find(":5:17: error: setup[2] must be a shell program") != std::string::npos);
    CHECK(text.find(":7:3: error: env: \"DDL_RANK\" cannot be set here") != std::string::npos);
    CHECK(text.find(":8:3: error: env: \"RANK\" cannot be set here") != std::string::npos);
    CHECK(text.find(":9:3: error: env: \"1BAD\" cannot be set here") != std::string::npos);
    CHECK(text.find("env.MIX mixes text and ${...}") != std::string::npos);
    CHECK(text.find("env.LIST must be a value or {from_env: NAME}") != std::string::npos);
    CHECK(text.find("env.FROM.from_env must be a variable name") != std::string::npos);
    CHECK(text.find("unknown key \"from\"") != std::string::npos);
}

TEST_CASE("setup without a workdir is refused") {
    auto r = load_spec_string(k_head + "setup: make\n", "cluster.yaml");
    CHECK_FALSE(r.spec);
    CHECK(r.diagnostics.format_text().find("setup runs in the workdir, and this spec has none") !=
          std::string::npos);
}

TEST_CASE("a workdir of a spec named without a folder is found from the current folder") {
    TempDir dir;
    std::filesystem::create_directory(dir.path() + "/code");
    const auto before = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    auto r = load_spec_string(k_head + "workdir: code\n", "cluster.yaml");
    std::filesystem::current_path(before);
    REQUIRE(r.spec);
    CHECK(r.spec->work.workdir_path == dir.path() + "/code");
}

TEST_CASE("a workdir that is a system folder is refused at its line") {
    for (const std::string w : {"/", "/etc", "/usr", "/root"}) {
        auto r = load_spec_string(k_head + "workdir: " + w + "\n", "cluster.yaml");
        INFO(w);
        CHECK_FALSE(r.spec);
        CHECK(r.diagnostics.format_text().find("cluster.yaml:4:10: error: workdir " + w + " is " + w +
                                               ", a system folder: every sync would copy all of it") !=
              std::string::npos);
    }
}

TEST_CASE("a workdir that is the home folder itself is refused, a folder in it is not") {
    TempDir home;
    std::filesystem::create_directory(home.path() + "/project");
    const char* was = std::getenv("HOME");
    const std::string saved = was ? was : "";
    setenv("HOME", home.path().c_str(), 1);
    auto r = load_spec_string(k_head + "workdir: .\n", home.path() + "/cluster.yaml");
    auto ok = load_spec_string(k_head + "workdir: project\n", home.path() + "/cluster.yaml");
    if (was)
        setenv("HOME", saved.c_str(), 1);
    else
        unsetenv("HOME");
    CHECK_FALSE(r.spec);
    CHECK(r.diagnostics.format_text().find("error: workdir " + home.path() + " is your home folder") !=
          std::string::npos);
    CHECK(ok.spec);
}

TEST_CASE("a workdir that holds or lies in the folder namespace nodes are synced to is refused at its line") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() + "/shared/work/code");
    const std::string services = "services: {nfs: {enabled: true, mount: " + dir.path() + "/shared}}\n";
    auto holds = load_in(dir, services + "workdir: .\n");
    CHECK_FALSE(holds.spec);
    const auto text = holds.diagnostics.format_text();
    CHECK(text.find("cluster.yaml:5:10: error: workdir " + dir.path() + " holds " + dir.path() +
                    "/shared/work, where sync copies it") != std::string::npos);
    CHECK(text.find("hint: use a folder that does not hold " + dir.path() + "/shared/work") !=
          std::string::npos);
    auto inside = load_in(dir, services + "workdir: shared/work/code\n");
    CHECK_FALSE(inside.spec);
    CHECK(inside.diagnostics.format_text().find("lies in " + dir.path() + "/shared/work") !=
          std::string::npos);
    // Container nodes have folders of their own: the same place is no copy into itself.
    auto containers = load_in(dir, "local: {nodes_as: containers}\n" + services + "workdir: .\n");
    INFO(containers.diagnostics.format_text());
    CHECK(containers.spec);
}
