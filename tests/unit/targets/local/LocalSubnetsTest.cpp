#include "targets/local/LocalSubnets.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <unistd.h>

using namespace ddl;

namespace {

LocalPlan plan_on(const std::string& subnet) {
    LocalPlan p;
    p.cluster = "mine";
    p.subnet = subnet;
    p.bridge = "ddlbr-aaaaaa";
    return p;
}

HostNetwork host_net(const std::string& ifname, const std::string& address) {
    auto c = parse_cidr(address);
    REQUIRE(c);
    return {ifname, address, cidr_network(*c)};
}

} // namespace

TEST_CASE("networks overlap when they share the bits of the shorter prefix, within one family") {
    auto a = *parse_cidr("10.0.0.0/16");
    CHECK(cidr_overlap(a, *parse_cidr("10.0.5.0/24")));
    CHECK(cidr_overlap(*parse_cidr("10.0.5.0/24"), a));
    CHECK_FALSE(cidr_overlap(a, *parse_cidr("10.1.0.0/24")));
    CHECK_FALSE(cidr_overlap(*parse_cidr("10.0.0.0/25"), *parse_cidr("10.0.0.128/25")));
    CHECK_FALSE(cidr_overlap(a, *parse_cidr("::/0")));
    CHECK(cidr_overlap(*parse_cidr("fd00::/8"), *parse_cidr("fdd1:1:2::/64")));
    CHECK(cidr_network(*parse_cidr("10.0.2.15/24")).text() == "10.0.2.0/24");
    CHECK(cidr_network(*parse_cidr("10.0.2.15/32")).text() == "10.0.2.15/32");
}

TEST_CASE("a subnet on this machine's own network is refused, naming the interface and address") {
    const std::vector<HostNetwork> host{host_net("lo", "127.0.0.1/8"), host_net("eth0", "10.0.2.15/24")};
    auto clash = subnet_clash(plan_on("10.0.2.0/24"), host, {});
    REQUIRE(clash);
    CHECK(clash->find("overlaps this machine's network 10.0.2.0/24 (10.0.2.15/24 on eth0)") !=
          std::string::npos);
    CHECK(clash->find("hint: pick another local.subnet") != std::string::npos);
    CHECK_FALSE(subnet_clash(plan_on("10.231.0.0/24"), host, {}));
    // A wider subnet that contains the machine's network clashes too.
    CHECK(subnet_clash(plan_on("10.0.0.0/16"), host, {}));
}

TEST_CASE("the cluster's own bridge is not a clash, another cluster's subnet is, by its name") {
    const std::vector<HostNetwork> host{host_net("ddlbr-aaaaaa", "10.231.0.1/24"),
                                        host_net("ddlbr-bbbbbb", "10.232.0.1/24")};
    CHECK_FALSE(subnet_clash(plan_on("10.231.0.0/24"), host, {}));
    const std::vector<RegisteredSubnets> others{{"ux-b", "/tmp/b", {"10.232.0.0/24"}, {"ddlbr-bbbbbb"}}};
    auto clash = subnet_clash(plan_on("10.232.0.0/25"), host, others);
    REQUIRE(clash);
    CHECK(clash->find("overlaps 10.232.0.0/24 of the local cluster ux-b (deployed from /tmp/b)") !=
          std::string::npos);
    // A ddl bridge with no record left (its registry was lost) is named with the way to remove it.
    auto stale = subnet_clash(plan_on("10.232.0.0/24"), host, {});
    REQUIRE(stale);
    CHECK(stale->find("ddl gc --older-than 0s") != std::string::npos);
}

TEST_CASE("registered subnets are read from the registry records of other clusters only") {
    char tmpl[] = "/tmp/ddl-subnets-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    REQUIRE(write_file_atomic(
        dir + "/a.1",
        R"({"cluster":"a","cluster_dir":"/s1/a","plan":{"subnet":"10.1.0.0/24","bridge":"ddlbr-1"}})"));
    REQUIRE(write_file_atomic(
        dir + "/b.2",
        R"({"cluster":"b","cluster_dir":"/s2/b","plan":{"subnet":"10.2.0.0/24","bridge":"ddlbr-2",)"
        R"("private_subnet":"172.16.1.0/24","private_bridge":"ddlpb-2"}})"));
    REQUIRE(write_file_atomic(dir + "/junk", "not json"));
    auto r = registered_subnets(dir, "a");
    REQUIRE(r.size() == 1);
    CHECK(r[0].cluster == "b");
    CHECK(r[0].state_dir == "/s2");
    CHECK(r[0].subnets == std::vector<std::string>{"10.2.0.0/24", "172.16.1.0/24"});
    CHECK(r[0].bridges == std::vector<std::string>{"ddlbr-2", "ddlpb-2"});
    std::filesystem::remove_all(dir);
}

TEST_CASE("this machine's networks include loopback, without link-local IPv6") {
    auto nets = host_networks();
    bool lo = false;
    for (const auto& n : nets) {
        if (n.interface == "lo" && !n.network.v6) lo = n.network.text() == "127.0.0.0/8";
        CHECK_FALSE((n.network.v6 && n.network.addr[0] == 0xfe && (n.network.addr[1] & 0xc0) == 0x80));
    }
    CHECK(lo);
}
