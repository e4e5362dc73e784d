#include "cli/WorkdirSync.hpp"

#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace ddl;
using namespace ddl::cli;
namespace fs = std::filesystem;

namespace {
void put(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
}
} // namespace

TEST_CASE("rsync with the workdir's filters leaves out what .gitignore and .ddlignore name, .git and the "
          "state folder") {
    TempDir t;
    const std::string src = t.path() + "/work", dst = t.path() + "/copy";
    put(src + "/train.py", "print(1)\n");
    put(src + "/.gitignore", "*.bin\ncheckpoints/\n");
    put(src + "/big.bin", "x");
    put(src + "/checkpoints/step1.pt", "x");
    put(src + "/data/.ddlignore", "raw/\n");
    put(src + "/data/raw/a.csv", "x");
    put(src + "/data/small.csv", "x");
    put(src + "/.git/HEAD", "ref\n");
    put(src + "/.ddl/demo/state.json", "{}");
    put(src + "/sub/.gitignore", "local.txt\n");
    put(src + "/sub/local.txt", "x");
    put(src + "/sub/kept.txt", "x");
    Command c{.argv = {"rsync", "-rlpt"}};
    for (auto& f : rsync_filters(src, src + "/.ddl"))
        c.argv.push_back(f);
    c.argv.push_back(src + "/");
    c.argv.push_back(dst + "/");
    SystemProcessRunner proc;
    auto r = proc.run(c);
    REQUIRE(r);
    INFO(r->err);
    REQUIRE(r->success());
    CHECK(fs::exists(dst + "/train.py"));
    CHECK(fs::exists(dst + "/data/small.csv"));
    CHECK(fs::exists(dst + "/sub/kept.txt"));
    CHECK(fs::exists(dst + "/.gitignore")); // the rules travel with the code
    CHECK_FALSE(fs::exists(dst + "/big.bin"));
    CHECK_FALSE(fs::exists(dst + "/checkpoints"));
    CHECK_FALSE(fs::exists(dst + "/data/raw"));
    CHECK_FALSE(fs::exists(dst + "/.git"));
    CHECK_FALSE(fs::exists(dst + "/.ddl"));
    CHECK_FALSE(fs::exists(dst + "/sub/local.txt"));
}

TEST_CASE("a state folder outside the workdir adds no rule") {
    TempDir t;
    CHECK(rsync_filters(t.path() + "/work", t.path() + "/.ddl").size() == 3);
}

TEST_CASE("setup depends on the workdir files its programs name, not on others") {
    TempDir t;
    put(t.path() + "/requirements.txt", "numpy\n");
    put(t.path() + "/scripts/get_data.sh", "echo\n");
    put(t.path() + "/train.py", "x\n");
    CHECK(files_named_by("pip install -r requirements.txt && bash ./scripts/get_data.sh /etc/passwd ../x",
                         t.path()) == std::vector<std::string>{"requirements.txt", "scripts/get_data.sh"});
    auto spec = load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: local\nworkdir: .\n"
                                 "setup: pip install -r requirements.txt\n",
                                 t.path() + "/cluster.yaml");
    REQUIRE(spec.spec);
    const auto before = setup_digest(*spec.spec, t.path(), {});
    put(t.path() + "/train.py", "changed\n");
    CHECK(setup_digest(*spec.spec, t.path(), {}) == before);
    put(t.path() + "/requirements.txt", "numpy\ntorch\n");
    const auto after = setup_digest(*spec.spec, t.path(), {});
    CHECK(after != before);
    CHECK(setup_digest(*spec.spec, t.path(), {{"A", "1"}}) != after);
}

TEST_CASE("env from the controller's environment is read at run time and a missing one is named") {
    auto spec = load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: local\n"
                                 "env: {PLAIN: x, TOKEN: '${DDL_TEST_UNSET_VAR_38}'}\n",
                                 "cluster.yaml");
    REQUIRE(spec.spec);
    unsetenv("DDL_TEST_UNSET_VAR_38");
    CHECK(
        resolve_spec_env(*spec.spec).error().message ==
        "env.TOKEN is read from $DDL_TEST_UNSET_VAR_38, which is not set here; export it before running ddl");
    setenv("DDL_TEST_UNSET_VAR_38", "s3cret", 1);
    auto env = resolve_spec_env(*spec.spec);
    REQUIRE(env);
    CHECK(env->at("TOKEN") == "s3cret");
    CHECK(env->at("PLAIN") == "x");
    unsetenv("DDL_TEST_UNSET_VAR_38");
}

TEST_CASE("the workdir lands on the shared folder with NFS, else in a folder of the cluster's own") {
    auto spec = load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: local\n", "cluster.yaml");
    REQUIRE(spec.spec);
    CHECK(remote_workdir(*spec.spec) == "/shared/work");
    spec.spec->services.nfs = false;
    CHECK(remote_workdir(*spec.spec) == "/var/lib/ddl/work/demo");
}
