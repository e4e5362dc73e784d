// What `ddl destroy` runs on an ssh cluster's machines, run for real by sh with stand-ins for the engine,
// rm and id first on PATH (they only log their arguments: nothing on this machine is removed).
#include "targets/ssh/SshTarget.hpp"

#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace ddl;

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
    CHECK(sh.logged() == "id -u\n"
                         "docker ps --all --quiet --filter label=ddl.training=lab\n"
                         "docker rm --force c1 c2\n"
                         "rm -rf /opt/ddl/bin /opt/ddl/lib /opt/ddl/README /etc/ddl/hostfile "
                         "/etc/ddl/hostfile.mpich /etc/ddl/node.env\n");
}

TEST_CASE("without containers, or without the engine on the machine, only the installed files go") {
    Shell sh;
    sh.stub("id", "0");
    sh.stub("rm");
    CHECK(sh.run(SshTarget::cleanup_script(
              ssh_spec("runtime: {image: localhost/t:1, container_engine: podman}\n"))) == 0);
    CHECK(sh.logged() == "id -u\nrm -rf /opt/ddl/bin /opt/ddl/lib /opt/ddl/README /etc/ddl/hostfile "
                         "/etc/ddl/hostfile.mpich /etc/ddl/node.env\n");
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
