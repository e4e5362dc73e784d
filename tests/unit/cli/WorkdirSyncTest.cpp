#include "cli/WorkdirSync.hpp"

#include "spec/WorkSection.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

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
    const auto before = *setup_digest(*spec.spec, t.path(), {});
    put(t.path() + "/train.py", "changed\n");
    CHECK(*setup_digest(*spec.spec, t.path(), {}) == before);
    put(t.path() + "/requirements.txt", "numpy\ntorch\n");
    const auto after = *setup_digest(*spec.spec, t.path(), {});
    CHECK(after != before);
    CHECK(*setup_digest(*spec.spec, t.path(), {{"A", "1"}}) != after);
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

namespace {
SpecLoadResult setup_spec(const TempDir& t, const std::string& setup) {
    return load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: local\nworkdir: .\nsetup: " + setup +
                                "\n",
                            t.path() + "/cluster.yaml");
}
} // namespace

TEST_CASE("a file setup names that links out of the workdir counts by its link, and is not read") {
    TempDir t;
    // /proc/kmsg blocks a reader until the kernel logs; a sparse 2 GB file would be read whole.
    fs::create_symlink("/proc/kmsg", t.path() + "/kmsg.txt");
    TempDir other;
    const std::string sparse = other.path() + "/big.bin";
    put(sparse, "");
    fs::resize_file(sparse, std::uintmax_t{2} << 30);
    fs::create_symlink(sparse, t.path() + "/big.bin");
    auto spec = setup_spec(t, "cat kmsg.txt big.bin");
    REQUIRE(spec.spec);
    CHECK(files_named_by("cat kmsg.txt big.bin", t.path()) ==
          std::vector<std::string>{"kmsg.txt", "big.bin"});
    auto digest = setup_digest(*spec.spec, t.path(), {});
    INFO((digest ? "" : digest.error().message));
    REQUIRE(digest);
    fs::remove(t.path() + "/kmsg.txt");
    fs::create_symlink("/proc/version", t.path() + "/kmsg.txt");
    CHECK(*setup_digest(*spec.spec, t.path(), {}) != *digest);
}

TEST_CASE("a FIFO or a file over the limit that setup names is refused naming the setup key and the file") {
    TempDir t;
    REQUIRE(mkfifo((t.path() + "/pipe").c_str(), 0600) == 0);
    auto fifo = setup_spec(t, "cat pipe");
    REQUIRE(fifo.spec);
    auto r = setup_digest(*fifo.spec, t.path(), {});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("line 5 of the spec, setup[0] names pipe: " + t.path() +
                                 "/pipe is a FIFO, not a regular file") == 0);
    put(t.path() + "/weights.tar", "");
    fs::resize_file(t.path() + "/weights.tar", k_setup_file_limit + 1);
    auto big = setup_spec(t, "tar xf weights.tar");
    REQUIRE(big.spec);
    auto b = setup_digest(*big.spec, t.path(), {});
    REQUIRE_FALSE(b);
    CHECK(b.error().message.find("setup[0] names weights.tar: " + t.path() +
                                 "/weights.tar is larger than 64 MiB") != std::string::npos);
    CHECK(b.error().message.find("run a script that uses it instead") != std::string::npos);
}

TEST_CASE("a stored spec's workdir that holds the folder sync copies it to is refused too") {
    TempDir t;
    auto spec = load_spec_string("apiVersion: ddl/v1\nname: demo\ntarget: local\n"
                                 "services: {nfs: {enabled: true, mount: " +
                                     t.path() + "/shared}}\n",
                                 "demo (stored spec)", SpecOrigin::stored);
    REQUIRE(spec.spec);
    auto why = refuse_workdir(*spec.spec, t.path());
    CHECK(why.message ==
          "workdir " + t.path() + " holds " + t.path() +
              "/shared/work, where sync copies it (the nodes share this machine's folders): each "
              "sync would copy the workdir into itself");
}
