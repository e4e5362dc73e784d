// The CLI through the real binary: exit codes and output formats users and scripts rely on.
#include "remote/SshKeys.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace ddl;

namespace {
const std::string k_ddl = std::string(DDL_BINARY_DIR) + "/src/ddl";

ProcessResult ddl_cli(std::vector<std::string> args, const std::string& cwd) {
    args.insert(args.begin(), k_ddl);
    SystemProcessRunner runner;
    auto r = runner.run({.argv = args, .cwd = cwd});
    REQUIRE(r.ok());
    return *r;
}
} // namespace

TEST_CASE("ddl --version and every command's --help succeed") {
    TempDir dir;
    CHECK(ddl_cli({"--version"}, dir.path()).out.find("ddl 0.") == 0);
    for (const auto* cmd : {"init", "validate", "render", "plan", "deploy", "destroy", "list", "status",
                            "hostfile", "exec", "ssh", "run", "bench", "smoke-test", "gc", "completion"}) {
        auto r = ddl_cli({cmd, "--help"}, dir.path());
        INFO(cmd << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("Usage:") != std::string::npos);
    }
}

TEST_CASE("ddl init writes a spec that ddl validate accepts, and refuses to overwrite it") {
    TempDir dir;
    CHECK(ddl_cli({"init", "--target", "openstack"}, dir.path()).exit_code == 0);
    auto v = ddl_cli({"validate", "cluster.yaml"}, dir.path());
    CHECK(v.exit_code == 0);
    CHECK(v.out.find("valid") != std::string::npos);
    auto again = ddl_cli({"init"}, dir.path());
    CHECK(again.exit_code == 2);
    CHECK(again.err.find("exists already") != std::string::npos);
}

TEST_CASE("ddl validate exits 2 and prints positioned diagnostics, or JSON with --output json") {
    TempDir dir;
    REQUIRE(write_file_atomic(dir.path() + "/bad.yaml", "apiVersion: ddl/v1\nname: x\ntarget: lokal\n").ok());
    auto text = ddl_cli({"validate", "bad.yaml"}, dir.path());
    CHECK(text.exit_code == 2);
    CHECK(text.err.find("bad.yaml:3:9: error: target must be one of") == 0);
    CHECK(text.err.find("hint: did you mean \"local\"?") != std::string::npos);
    auto json = ddl_cli({"--output", "json", "validate", "bad.yaml"}, dir.path());
    CHECK(json.exit_code == 2);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["valid"] == false);
    CHECK(j["diagnostics"][0]["line"] == 3);
    CHECK(j["diagnostics"][0]["column"] == 9);
}

TEST_CASE("ddl render writes the same bytes twice") {
    TempDir dir;
    REQUIRE(ddl_cli({"init", "--name", "render-me"}, dir.path()).exit_code == 0);
    REQUIRE(ddl_cli({"render", "cluster.yaml", "--out", "a"}, dir.path()).exit_code == 0);
    REQUIRE(ddl_cli({"render", "cluster.yaml", "--out", "b"}, dir.path()).exit_code == 0);
    for (const auto* f : {"spec.json", "local/plan.json", "ansible/vars.json"})
        CHECK(read_file(dir.path() + "/a/" + f).value() == read_file(dir.path() + "/b/" + f).value());
}

TEST_CASE("ddl smoke-test refuses a notify target that is neither mail nor https before deploying") {
    TempDir dir;
    REQUIRE(ddl_cli({"init", "--name", "nt"}, dir.path()).exit_code == 0);
    auto r = ddl_cli({"smoke-test", "cluster.yaml", "--notify", "http://chat.example.org/hook"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("plain http only to loopback") != std::string::npos);
    CHECK_FALSE(path_exists(dir.path() + "/.ddl/nt"));
    // A loopback-looking prefix with the real host after '@' is not loopback.
    auto smuggled =
        ddl_cli({"smoke-test", "cluster.yaml", "--notify", "http://localhost:80@evil.example/"}, dir.path());
    CHECK(smuggled.exit_code == 2);
    CHECK(smuggled.err.find("evil.example") != std::string::npos);
    CHECK_FALSE(path_exists(dir.path() + "/.ddl/nt"));
}

TEST_CASE(
    "ddl smoke-test --notify mailto: without SMTP settings fails before deploying and names the variable") {
    TempDir dir;
    REQUIRE(ddl_cli({"init", "--name", "nm"}, dir.path()).exit_code == 0);
    SystemProcessRunner runner;
    auto r = runner.run({.argv = {k_ddl, "smoke-test", "cluster.yaml", "--notify", "mailto:ops@example.org"},
                         .cwd = dir.path(),
                         .env_unset = {"DDL_SMTP_URL", "DDL_SMTP_FROM"}});
    REQUIRE(r.ok());
    CHECK(r->exit_code == 2);
    CHECK(r->err.find("DDL_SMTP_URL") != std::string::npos);
    CHECK_FALSE(path_exists(dir.path() + "/.ddl/nm"));
}

TEST_CASE("mpirun's -np spelling is accepted by ddl run") {
    TempDir dir;
    auto r = ddl_cli({"run", "-np", "2", "--cluster", "none", "--", "true"}, dir.path());
    CHECK(r.err.find("no cluster \"none\"") != std::string::npos);
}

TEST_CASE("ddl render of an OpenStack spec writes the module, its inputs with the given public key, and the "
          "backend") {
    TempDir dir;
    REQUIRE(ddl_cli({"init", "--target", "openstack", "--name", "os-render"}, dir.path()).exit_code == 0);
    auto keyless = ddl_cli({"render", "cluster.yaml", "--out", "a"}, dir.path());
    REQUIRE(keyless.exit_code == 0);
    CHECK(keyless.err.find("no public key yet") != std::string::npos);
    CHECK(keyless.err.find("no ansible/inventory.yml: cluster os-render has no nodes") != std::string::npos);
    CHECK(read_file(dir.path() + "/a/openstack/terraform/terraform.tfvars.json")->find("public_key") ==
          std::string::npos);
    auto pub = ensure_keypair(dir.path() + "/k", "me@host");
    REQUIRE(pub.ok());
    // Key data that does not decode is refused: only a real OpenSSH public key reaches the tfvars.
    REQUIRE(
        write_file_atomic(dir.path() + "/bad.pub", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIRender me@host\n")
            .ok());
    CHECK(
        ddl_cli({"render", "cluster.yaml", "--out", "x", "--public-key", "bad.pub"}, dir.path()).exit_code ==
        2);
    auto r = ddl_cli({"render", "cluster.yaml", "--out", "b", "--public-key", "k.pub"}, dir.path());
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("no public key yet") == std::string::npos);
    auto tfvars =
        nlohmann::json::parse(read_file(dir.path() + "/b/openstack/terraform/terraform.tfvars.json").value());
    CHECK(tfvars["public_key"] == *pub);
    CHECK(tfvars["cluster_name"] == "os-render");
    CHECK(path_exists(dir.path() + "/b/openstack/terraform/main.tf"));
    auto backend =
        nlohmann::json::parse(read_file(dir.path() + "/b/openstack/terraform/backend.tf.json").value());
    CHECK(backend["terraform"]["backend"].contains("local"));
    auto missing = ddl_cli({"render", "cluster.yaml", "--out", "c", "--public-key", "nope.pub"}, dir.path());
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("--public-key nope.pub") != std::string::npos);
}

TEST_CASE("a cluster reference that names no cluster is bad input") {
    TempDir dir;
    for (const std::vector<std::string>& args : {std::vector<std::string>{"status", "none"},
                                                 {"status", "../../etc"},
                                                 {"exec", "--cluster", "NO", "--", "true"}}) {
        auto r = ddl_cli(args, dir.path());
        INFO(args[0] << " " << args[1]);
        CHECK(r.exit_code == 2);
        CHECK_FALSE(r.err.empty());
    }
}

TEST_CASE(
    "a cluster not found names the next step: did you mean, or ddl deploy FILE for an undeployed spec") {
    TempDir dir;
    REQUIRE(make_dirs(dir.path() + "/.ddl/daily", 0700).ok());
    REQUIRE(write_file_atomic(dir.path() + "/.ddl/daily/state.json",
                              R"({"schema_version": 1, "cluster": "daily", "target": "local", "phases": {},
                                  "nodes": []})")
                .ok());
    auto typo = ddl_cli({"status", "dialy"}, dir.path());
    CHECK(typo.exit_code == 2);
    CHECK(typo.err.find("no cluster \"dialy\"") != std::string::npos);
    CHECK(typo.err.find("did you mean daily?") != std::string::npos);
    REQUIRE(ddl_cli({"init", "--name", "nx-other"}, dir.path()).exit_code == 0);
    auto undeployed = ddl_cli({"hostfile", "--cluster", "cluster.yaml"}, dir.path());
    CHECK(undeployed.exit_code == 2);
    CHECK(
        undeployed.err.find("cluster.yaml is not deployed from here: `ddl deploy cluster.yaml` creates it") !=
        std::string::npos);
    // --cluster is taken where the cluster is also a positional word.
    CHECK(ddl_cli({"status", "--cluster", "dialy"}, dir.path()).err.find("did you mean daily?") !=
          std::string::npos);
}

TEST_CASE("garbage in numeric and path flags is refused while parsing, before anything is written") {
    TempDir dir;
    REQUIRE(ddl_cli({"init", "--name", "gb"}, dir.path()).exit_code == 0);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"deploy", "cluster.yaml", "--ssh-timeout", "-1"},
          {"deploy", "cluster.yaml", "--ssh-timeout", "0"},
          {"render", "cluster.yaml", "--out", ""},
          {"--state-dir", "", "status"},
          {"gc", "--older-than", "99999999999999999d"}}) {
        auto r = ddl_cli(args, dir.path());
        INFO(args[0] << " " << args[1]);
        CHECK(r.exit_code == 2);
    }
    CHECK_FALSE(path_exists(dir.path() + "/.ddl"));
}
