// What `ddl destroy` runs on an ssh cluster's machines, run for real by sh with stand-ins for the engine,
// rm and id first on PATH (they only log their arguments: nothing on this machine is removed).
#include "targets/ssh/SshTarget.hpp"

#include "spec/SpecLoader.hpp"
#include "support/Fakes.hpp"
#include "support/Rig.hpp"
#include "support/ScriptedProcess.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace ddl;
using ddl::test::FakeProgress;
using ddl::test::ScriptedProcess;

namespace {

Spec ssh_spec(const std::string& runtime) {
    auto r = load_spec_string("apiVersion: ddl/v1\nname: lab\ntarget: ssh\nssh: {hosts: [{name: a, "
                              "address: 192.0.2.1}]}\n" +
                                  runtime,
                              "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

struct Shell {
    TempDir dir{"ddl-ssh-cleanup"};
    std::string log() const { return dir.path() + "/log"; }

    // A logging stand-in: prints `out` and exits `rc`.
    void stub(const std::string& name, const std::string& out = "", int rc = 0) const {
        std::string body = "#!/bin/sh\necho \"" + name + " $*\" >> " + shell_quote(log()) + "\n";
        if (!out.empty()) body += "printf '%s\\n' " + shell_quote(out) + "\n";
        body += "exit " + std::to_string(rc) + "\n";
        REQUIRE(write_file_atomic(dir.path() + "/" + name, body, 0700));
    }
    // Only the stand-ins and sh on PATH: a real engine on this machine is never reached.
    int run(const std::string& script) const {
        REQUIRE(symlink("/bin/sh", (dir.path() + "/sh").c_str()) == 0);
        std::string cmd = "PATH=" + shell_quote(dir.path()) + " /bin/sh -c " + shell_quote(script);
        int status = std::system(cmd.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::string logged() const {
        std::ifstream in(log());
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
};

} // namespace

TEST_CASE("destroy on an ssh cluster removes its training containers, then what ddl installed") {
    Shell sh;
    sh.stub("id", "0");
    sh.stub("rm");
    sh.stub("docker", "c1\nc2");
    CHECK(sh.run(SshTarget::cleanup_script(
              ssh_spec("runtime: {image: nvcr.io/nvidia/pytorch:24.05-py3}\n"))) == 0);
    CHECK(sh.logged() ==
          "id -u\n"
          "docker ps --all --quiet --filter label=ddl.training=lab\n"
          "docker rm --force c1 c2\n"
          "rm -rf /opt/ddl/bin /opt/ddl/lib /opt/ddl/python /opt/ddl/cuda.json /opt/ddl/README "
          "/opt/ddl/runtime.tar /etc/ddl/hostfile /etc/ddl/hostfile.mpich /etc/ddl/cuda.json "
          "/etc/ddl/node.env\n");
}

TEST_CASE("without containers, or without the engine on the machine, only the installed files go") {
    Shell sh;
    sh.stub("id", "0");
    sh.stub("rm");
    CHECK(sh.run(SshTarget::cleanup_script(
              ssh_spec("runtime: {image: localhost/t:1, container_engine: podman}\n"))) == 0);
    CHECK(sh.logged() ==
          "id -u\nrm -rf /opt/ddl/bin /opt/ddl/lib /opt/ddl/python /opt/ddl/cuda.json /opt/ddl/README "
          "/opt/ddl/runtime.tar /etc/ddl/hostfile /etc/ddl/hostfile.mpich /etc/ddl/cuda.json "
          "/etc/ddl/node.env\n");
    Shell none;
    none.stub("id", "0");
    none.stub("rm");
    none.stub("docker", "c1");
    CHECK(none.run(SshTarget::cleanup_script(ssh_spec(""))) == 0);
    CHECK(none.logged().find("docker") == std::string::npos);
}

TEST_CASE(
    "a failing engine stops the cleanup with its status, and a user other than root goes through sudo") {
    Shell sh;
    sh.stub("id", "0");
    sh.stub("rm");
    sh.stub("docker", "", 3);
    CHECK(sh.run(SshTarget::cleanup_script(
              ssh_spec("runtime: {image: nvcr.io/nvidia/pytorch:24.05-py3}\n"))) != 0);
    CHECK(sh.logged().find("rm -rf") == std::string::npos);

    Shell user;
    user.stub("id", "1000");
    user.stub("sudo");
    CHECK(user.run(SshTarget::cleanup_script(ssh_spec(""))) == 0);
    CHECK(user.logged().rfind("id -u\nsudo -n sh -c rm -rf /opt/ddl/bin", 0) == 0);
}

// `ddl gc --spec` on the ssh target: every host of the spec is asked for /etc/ddl/node.env over OpenSSH.
namespace {

// Three hosts, b reached through a; the key is a file that exists (the loader checks it).
Spec three_hosts() {
    static const TempDir dir("ddl-gc-ssh-test");
    const std::string key = dir.path() + "/k";
    REQUIRE(write_file_atomic(key, "not a real key\n", 0600));
    auto r = load_spec_string(
        "apiVersion: ddl/v1\nname: lab\ntarget: ssh\naccess: {user: u, private_key: " + key +
            "}\n"
            "ssh: {hosts: [{name: a, address: 192.0.2.1}, {name: b, address: 10.0.0.2, jump: a},"
            " {name: c, address: 192.0.2.3, port: 2222}]}\nruntime: {image: 'ghcr.io/x/y:1'}\n",
        "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

std::string node_env(const std::string& cluster, const std::string& state, int age) {
    return "# Written by ddl at configure\nDDL_CLUSTER=" + cluster + "\nDDL_NODE=x\nDDL_STATE_DIR=" + state +
           "\nDDL_MARKER_AGE=" + std::to_string(age) + "\n";
}

} // namespace

TEST_CASE(
    "gc --spec on ssh hosts groups the node files by cluster, youngest host's age, through jump hosts") {
    ScriptedProcess proc;
    proc.when("ssh ",
              {{0, node_env("lab-7", "/st/lab-7", 100), ""},
               {0, node_env("lab-7", "/st/lab-7", 40), ""},
               {0, "# an older ddl's node file\nDDL_CLUSTER=old-1\nDDL_NODE=c\nDDL_MARKER_AGE=9\n", ""}});
    SshTarget t;
    auto found = t.find_clusters(std::make_unique<Spec>(three_hosts()).get(), proc);
    REQUIRE(found);
    REQUIRE(found->size() == 2);
    // c's cluster is found without a state folder (gc names it and leaves it alone).
    CHECK(found->back().cluster == "old-1");
    CHECK(found->back().state_dir.empty());
    const auto& f = found->front();
    CHECK(f.cluster == "lab-7");
    CHECK(f.state_dir == "/st/lab-7");
    CHECK(f.age_s == 40);
    CHECK(f.detail == "ddl's files on 2 host(s): a, b");
    REQUIRE(proc.commands.size() == 3);
    const auto& a = proc.commands[0].argv;
    CHECK(join(a, " ").find("StrictHostKeyChecking=accept-new") != std::string::npos);
    CHECK(join(a, " ").find("-p 22 -l u 192.0.2.1 ") != std::string::npos);
    CHECK(join(a, " ").find("-i " + three_hosts().access.private_key + " ") != std::string::npos);
    CHECK(a.back().find("/etc/ddl/node.env") != std::string::npos);
    const std::string b = join(proc.commands[1].argv, " ");
    CHECK(b.find("ProxyCommand=ssh ") != std::string::npos);
    CHECK(b.find("-W '[%h]:%p' -l u 192.0.2.1") != std::string::npos); // through a
    CHECK(b.find("-l u 10.0.0.2 ") != std::string::npos);
    CHECK(join(proc.commands[2].argv, " ").find("-p 2222 -l u 192.0.2.3 ") != std::string::npos);

    // Removing: the same hosts, host keys pinned now, the cleanup with the found cluster's container label.
    ScriptedProcess rm;
    rm.when("ssh ", {{0, "", ""}});
    FakeProgress progress;
    REQUIRE(t.destroy_found(f, rm, progress));
    REQUIRE(rm.commands.size() == 2);
    for (const auto& c : rm.commands) {
        CHECK(join(c.argv, " ").find("StrictHostKeyChecking=yes") != std::string::npos);
        CHECK(c.argv.back() == SshTarget::cleanup_script(three_hosts(), "lab-7"));
    }
    CHECK(rm.commands[0].argv.back().find("label=ddl.training=lab-7") != std::string::npos);
}

TEST_CASE("gc --spec on ssh hosts removes nothing when a host does not answer, and names it") {
    ScriptedProcess proc;
    proc.when("ssh ", {{0, node_env("lab-7", "/st/lab-7", 100), ""},
                       {255, "", "ssh: connect to host 10.0.0.2 port 22: No route to host"},
                       {0, "", ""}});
    SshTarget t;
    auto found = t.find_clusters(std::make_unique<Spec>(three_hosts()).get(), proc);
    REQUIRE_FALSE(found);
    CHECK(found.error().message.find("1 did not answer (nothing was removed)") != std::string::npos);
    CHECK(found.error().message.find("b (10.0.0.2)") != std::string::npos);
    CHECK(found.error().message.find("No route to host") != std::string::npos);
}

TEST_CASE(
    "the targets that make machines hand out node replacement (deploy --replace); the others refuse it") {
    for (const char* target : {"ssh"}) {
        auto driver = make_target_driver(target);
        REQUIRE(driver.ok());
        INFO(target);
        CHECK((*driver)->node_replacement() == nullptr);
    }
    for (const char* target : {"local", "openstack", "aws", "slurm", "gpulab", "virtualwall"}) {
        auto driver = make_target_driver(target);
        REQUIRE(driver.ok());
        INFO(target);
        CHECK((*driver)->node_replacement() != nullptr);
    }
}
