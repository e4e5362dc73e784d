#include "targets/local/LocalTarget.hpp"

#include "support/Rig.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("the shaped link's bucket is two milliseconds of line rate and never under 128 KiB") {
    CHECK(LocalTarget::tbf_burst_bytes(1'000'000'000) == 250'000);
    CHECK(LocalTarget::tbf_burst_bytes(10'000'000'000) == 2'500'000);
    CHECK(LocalTarget::tbf_burst_bytes(100'000'000) == 128 * 1024);
}

TEST_CASE("a node's sshd starts with PATH as its whole environment, none of ddl's") {
    const auto argv = LocalTarget::sshd_argv("ddl-c-master", "/state/c/nodes/master");
    REQUIRE(argv.size() > 4);
    CHECK(argv[0] == "env");
    CHECK(argv[1] == "-i");
    CHECK(argv[2] == "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
    CHECK(argv[3] == "nsenter");
    CHECK(argv.back() == "/state/c/nodes/master/init.sh");
    // No other NAME=VALUE reaches it on the way (nsenter's and unshare's options are --name=value).
    for (std::size_t i = 3; i < argv.size(); ++i) {
        const bool assignment = argv[i].find('=') != std::string::npos && argv[i].rfind("--", 0) != 0;
        CHECK_FALSE(assignment);
    }
}

TEST_CASE("destroy fails, naming the node, while a node's namespace is still listed after its removal") {
    test::ClusterRig rig(
        "apiVersion: ddl/v1\nname: unit-destroy-verify\ntarget: local\nlocal:\n  nodes: 2\n");
    const auto plan = LocalPlan::from_spec(rig.spec);
    rig.state.target_data["plan"] = plan.to_json();
    // `ip netns del` answers success, yet the namespaces stay: something still holds them.
    rig.proc.when("ip netns list",
                  {{0, "ddl-unit-destroy-verify-master (id: 1)\nddl-unit-destroy-verify-worker1\n", ""}});
    rig.proc.when("ip link show", {{1, "", "Device does not exist"}});
    auto ctx = rig.ctx();
    auto s = LocalTarget().destroy(ctx);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("node master: its namespace ddl-unit-destroy-verify-master "
                                                  "still exists"));
    CHECK_THAT(s.error().message, Catch::Contains("node worker1"));
    // The node folders (their sshd pidfiles) stay for the next try.
    CHECK(rig.proc.count("ip netns del ddl-unit-destroy-verify-master") == 1);
}

TEST_CASE("destroy of a state that recorded no plan touches no link: the spec's names may be another's") {
    test::ClusterRig rig(
        "apiVersion: ddl/v1\nname: unit-destroy-noplan\ntarget: local\nlocal:\n  nodes: 2\n");
    rig.proc.when("ip link show", {{0, "", ""}}); // every link "exists"
    auto ctx = rig.ctx();
    REQUIRE(LocalTarget().destroy(ctx));
    CHECK(rig.proc.count("ip link del") == 0);
    CHECK(rig.proc.count("ip netns del") == 0);
}
