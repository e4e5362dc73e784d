#include "provision/NodeFiles.hpp"

#include "provision/RuntimeArchive.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>

using namespace ddl;

namespace {

// Runs the script with this machine's sh, as a node's root shell would (script on standard input).
std::string run_script(const std::string& script) {
    SystemProcessRunner proc;
    auto r = proc.run(Command{.argv = {"sh", "-s"}, .stdin_data = script});
    REQUIRE(r.ok());
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
    return r->out;
}

struct stat stat_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st;
}

} // namespace

TEST_CASE("the node files script writes each file whole, in a folder it makes, and only when it differs") {
    TempDir dir;
    const std::string env = dir.path() + "/etc/ddl/node.env", hosts = dir.path() + "/hosts";
    const std::string awkward = "A='x y' $HOME `id` \\ \"q\"\nno newline at the end";
    std::vector<NodeFile> files{{env, "DDL_NODE=master\n"}, {hosts, awkward}};

    CHECK(run_script(write_files_script(files)) == env + "\n" + hosts + "\n");
    CHECK(read_file(env).value_or("") == "DDL_NODE=master\n");
    CHECK(read_file(hosts).value_or("") == awkward);
    CHECK((stat_of(env).st_mode & 07777) == 0644);
    CHECK((stat_of(dir.path() + "/etc/ddl").st_mode & 07777) == 0755);
    CHECK_FALSE(path_exists(env + ".ddl-tmp"));

    // The same files again: nothing replaced, so the identity file keeps its time (gc ages a cluster by it).
    struct timespec old_time[2] = {{1000000000, 0}, {1000000000, 0}};
    REQUIRE(::utimensat(AT_FDCWD, env.c_str(), old_time, 0) == 0);
    CHECK(run_script(write_files_script(files)).empty());
    CHECK(stat_of(env).st_mtim.tv_sec == 1000000000);

    // A file edited on the node, or one whose mode was changed, is put back; the other is left alone.
    REQUIRE(write_file_atomic(hosts, "edited", 0644).ok());
    CHECK(run_script(write_files_script(files)) == hosts + "\n");
    REQUIRE(::chmod(env.c_str(), 0600) == 0);
    CHECK(run_script(write_files_script(files)) == env + "\n");
    CHECK((stat_of(env).st_mode & 07777) == 0644);
    CHECK(read_file(hosts).value_or("") == awkward);
}

TEST_CASE("the node files command runs its script as root, through sudo -n for another login") {
    const std::string cmd = root_shell_command();
    CHECK(cmd.find("exec sh -s") != std::string::npos);
    CHECK(cmd.find("exec sudo -n sh -s") != std::string::npos);
    if (::geteuid() != 0) return; // what follows switches users
    SystemProcessRunner proc;
    // As root, the command runs the script it is given.
    auto r = proc.run(Command{.argv = {"sh", "-c", cmd}, .stdin_data = "echo ran as $(id -u)\n"});
    REQUIRE(r.ok());
    CHECK(r->out == "ran as 0\n");
    // As another user (nobody), it never runs the script as that user: it asks sudo -n, which refuses
    // without a rule for the user (or is not installed): a non-zero exit that names sudo.
    auto other = proc.run(
        Command{.argv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", cmd},
                .stdin_data = "echo ran as $(id -u)\n"});
    REQUIRE(other.ok());
    CHECK(other->exit_code != 0);
    CHECK(other->out.empty());
    CHECK(other->err.find("sudo") != std::string::npos);
}

TEST_CASE("the runtime is unpacked from the archive on standard input only when a file differs") {
    TempDir dir;
    const std::string dist = dir.path() + "/dist", node = dir.path() + "/opt/ddl";
    REQUIRE(make_dirs(dist + "/bin").ok());
    REQUIRE(write_file_atomic(dist + "/bin/prog", "#!/bin/sh\necho hi\n", 0755).ok());
    auto archive = pack_runtime(dist);
    REQUIRE(archive.ok());
    SystemProcessRunner proc;
    // The node files and the runtime in one command: the script in it, the archive on its input.
    const std::string script = write_files_script({{dir.path() + "/etc/ddl/node.env", "DDL_NODE=w\n"}}) +
                               unpack_runtime_script(node);
    auto unpack = [&] {
        auto r = proc.run(Command{.argv = {"sh", "-c", script}, .stdin_data = *archive});
        REQUIRE(r.ok());
        INFO(r->err);
        REQUIRE(r->exit_code == 0);
        return r->out;
    };
    REQUIRE(make_dirs(node).ok());
    REQUIRE(write_file_atomic(node + "/runtime.tar", "left by an earlier ddl").ok());
    CHECK(unpack() == dir.path() + "/etc/ddl/node.env\n" + node + "\n");
    CHECK(read_file(node + "/bin/prog").value_or("") == "#!/bin/sh\necho hi\n");
    CHECK((stat_of(node + "/bin/prog").st_mode & 07777) == 0755);
    CHECK_FALSE(path_exists(node + "/runtime.tar"));
    CHECK_FALSE(path_exists(node + "/.runtime.tar.ddl-tmp"));
    CHECK(unpack().empty()); // nothing differs
    REQUIRE(write_file_atomic(node + "/bin/prog", "edited on the node", 0755).ok());
    CHECK(unpack() == node + "\n");
    CHECK(read_file(node + "/bin/prog").value_or("") == "#!/bin/sh\necho hi\n");
}
