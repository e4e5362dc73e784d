#include "provision/Configure.hpp"
#include "provision/HostfileWriter.hpp"
#include "runtime/Hostfile.hpp"
#include "spec/SpecLoader.hpp"
#include "support/Rig.hpp"
#include "targets/Registry.hpp"
#include "targets/virtualwall/RspecManifest.hpp"
#include "targets/virtualwall/VirtualwallTarget.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

std::string data(const std::string& name) {
    auto t = read_file(std::string(DDL_SOURCE_DIR) + "/tests/data/manifests/" + name);
    REQUIRE(t.ok());
    return *t;
}

Spec wall(int workers, const std::string& extra = "", const std::string& user = "ubuntu") {
    auto r = load_spec_string("apiVersion: ddl/v1\nname: ddl-wall\ntarget: virtualwall\nnodes:\n  master: "
                              "{gpus: 1}\n  workers: {count: " +
                                  std::to_string(workers) + "}\naccess:\n  user: " + user +
                                  "\nvirtualwall:\n  client: geni\n  project: ddlproject\n" + extra,
                              "c.yaml");
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

std::string manifest_with(const std::string& node_body) {
    return "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"manifest\"><node "
           "client_id=\"master\">" +
           node_body + "</node></rspec>";
}

} // namespace

TEST_CASE("a jFed manifest of four wall2 nodes gives logins and host addresses and LAN IPs") {
    auto m = parse_manifest(data("wall2-4nodes.xml"));
    REQUIRE(m.ok());
    REQUIRE(m->nodes.size() == 4);
    const auto& master = m->nodes[0];
    CHECK(master.client_id == "master");
    CHECK(master.component_id == "urn:publicid:IDN+wall2.ilabt.iminds.be+node+n083-05");
    REQUIRE(master.logins.size() == 2); // the emulab:console next to them is skipped
    CHECK(master.logins[1].username == "ubuntu");
    CHECK(master.logins[1].hostname == "n083-05.wall2.ilabt.iminds.be");
    CHECK(master.logins[1].port == 22);
    CHECK(master.host_ipv4 == "10.2.35.133");
    CHECK(master.host_ipv6 == "2001:6a8:1d80:2031:225:90ff:fe5c:dfec");
    REQUIRE(master.interfaces.size() == 1);
    REQUIRE(master.interfaces[0].ips.size() == 2);
    CHECK(master.interfaces[0].ips[1].type == "ipv6");
    CHECK(m->nodes[1].interfaces[0].ips[0].type == "ipv4"); // absent type means ipv4
    CHECK(m->nodes[3].host_ipv6 == "2001:6a8:1d80:2032::2");
}

TEST_CASE("a manifest with a prefixed namespace and custom ports and bracketed IPv6 logins is read") {
    auto m = parse_manifest(data("proxied-custom-ports.xml"));
    REQUIRE(m.ok());
    REQUIRE(m->nodes.size() == 2); // the node in a foreign namespace is not ours
    CHECK(m->nodes[0].logins[0].hostname == "2001:6a8:1d80:23::10");
    CHECK(m->nodes[0].logins[0].port == 2201);
    CHECK(m->nodes[1].logins[0].port == 2202);
    CHECK(m->nodes[1].host_ipv6.empty());
}

TEST_CASE("nodes from a manifest use the login's host name by default, or the public IPv6 address, and the "
          "spec's user") {
    auto m = parse_manifest(data("wall2-4nodes.xml"));
    REQUIRE(m.ok());
    auto nodes = VirtualwallTarget::nodes_from_manifest(*m, wall(3, "  connect_via: ipv6\n"), "/k/id");
    INFO((nodes.ok() ? "" : nodes.error().message));
    REQUIRE(nodes.ok());
    REQUIRE(nodes->size() == 4);
    CHECK((*nodes)[0].name == "master");
    CHECK((*nodes)[0].group == "master");
    CHECK((*nodes)[0].address == "2001:6a8:1d80:2031:225:90ff:fe5c:dfec");
    CHECK((*nodes)[0].user == "ubuntu");
    CHECK((*nodes)[0].key == "/k/id");
    CHECK((*nodes)[0].private_address == "192.168.0.1"); // the experiment LAN, for hostfiles and ranks
    CHECK((*nodes)[3].private_address == "192.168.0.4");
    CHECK((*nodes)[3].group == "workers");
    auto by_name = VirtualwallTarget::nodes_from_manifest(*m, wall(3), "k");
    REQUIRE(by_name.ok());
    CHECK((*by_name)[2].address == "n084-01.wall2.ilabt.iminds.be");
    auto v4 = VirtualwallTarget::nodes_from_manifest(*m, wall(3, "  connect_via: ipv4\n", "alice"), "k");
    REQUIRE(v4.ok());
    CHECK((*v4)[1].address == "10.2.35.134");
    CHECK((*v4)[1].user == "alice");
}

TEST_CASE("custom login ports reach the node state and a lone login name is used whatever access.user is") {
    auto m = parse_manifest(data("proxied-custom-ports.xml"));
    REQUIRE(m.ok());
    auto nodes = VirtualwallTarget::nodes_from_manifest(*m, wall(1, "  connect_via: hostname\n"), "k");
    REQUIRE(nodes.ok());
    CHECK((*nodes)[0].address == "2001:6a8:1d80:23::10");
    CHECK((*nodes)[0].port == 2201);
    CHECK((*nodes)[0].user == "bob");
    CHECK((*nodes)[1].address == "193.190.127.10");
    CHECK((*nodes)[1].port == 2202);
}

TEST_CASE("a manifest that does not fit the spec names the missing node or login or address") {
    auto m = parse_manifest(data("wall2-4nodes.xml"));
    REQUIRE(m.ok());
    auto more = VirtualwallTarget::nodes_from_manifest(*m, wall(5), "k");
    REQUIRE_FALSE(more.ok());
    CHECK(more.error().message.find("node worker4 is not in the manifest") != std::string::npos);
    CHECK(more.error().message.find("worker5") != std::string::npos);
    auto who = VirtualwallTarget::nodes_from_manifest(*m, wall(3, "", "carol"), "k");
    REQUIRE_FALSE(who.ok());
    CHECK(who.error().message.find("has logins for alice, ubuntu; set access.user to yours") !=
          std::string::npos);
    auto p = parse_manifest(data("proxied-custom-ports.xml"));
    REQUIRE(p.ok());
    auto v6 = VirtualwallTarget::nodes_from_manifest(*p, wall(1, "  connect_via: ipv6\n"), "k");
    REQUIRE_FALSE(v6.ok());
    CHECK(v6.error().message.find("node worker1 has no ipv6 address in the manifest; set "
                                  "virtualwall.connect_via to hostname or ipv4") != std::string::npos);
}

TEST_CASE("broken manifests are refused with the reason") {
    auto err = [](const std::string& xml) {
        auto r = parse_manifest(xml);
        REQUIRE_FALSE(r.ok());
        return r.error().message;
    };
    CHECK(err("<rspec").find("not a readable XML document (line 1") != std::string::npos);
    CHECK(err("<html/>") == "not an RSpec: the document's root element is <html>");
    CHECK(err("<rspec xmlns=\"http://www.protogeni.net/resources/rspec/2\" type=\"manifest\"/>")
              .find("not a GENI v3 RSpec") != std::string::npos);
    CHECK(err("<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\"><node "
              "client_id=\"a\"/></rspec>")
              .find("this is a request RSpec, not a manifest") != std::string::npos);
    CHECK(err("<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"manifest\"/>") ==
          "the manifest lists no nodes");
    CHECK(err(manifest_with("<services><login authentication=\"ssh-keys\" hostname=\"h\" port=\"70000\" "
                            "username=\"u\"/></services>")) ==
          "node \"master\": login port \"70000\" is not a port number (1-65535)");
    CHECK(err(manifest_with("<host name=\"h\" ipv6=\"2001:zz::1\"/>")) ==
          "node \"master\": host ipv6 \"2001:zz::1\" is not an IPv6 address");
    CHECK(err(manifest_with(
                  "<interface client_id=\"master:if0\"><ip address=\"10.0.0.1\" type=\"ipv6\"/></interface>"))
              .find("has ip \"10.0.0.1\" of type \"ipv6\"") != std::string::npos);
    CHECK(
        err("<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"manifest\"><node client_id=\"a\"/>"
            "<node client_id=\"a\"/></rspec>") == "node \"a\" appears twice in the manifest");
}

TEST_CASE("jFed is called as its CLI documents: command, RSpec, slice URN, login PEM") {
    VirtualwallTarget::JfedCall c;
    c.command = "create";
    c.slice_urn = VirtualwallTarget::slice_urn("ddlproject", "ddl-wall");
    CHECK(c.slice_urn == "urn:publicid:IDN+wall2.ilabt.iminds.be:ddlproject+slice+ddl-wall");
    c.rspec = "/s/rendered/virtualwall/request.rspec";
    c.login_pem = "/home/u/login.pem";
    c.manifest = "/s/virtualwall/manifest.rspec";
    c.expiration_hours = 12;
    CHECK(VirtualwallTarget::jfed_argv("/opt/jfed/jfed_cli.jar", c) ==
          std::vector<std::string>{
              "java", "-jar", "/opt/jfed/jfed_cli.jar", "create", "--create-slice", "--ssh-keys", "usercert",
              "--manifest", "/s/virtualwall/manifest.rspec", "--expiration-hours", "12", "--rspec",
              "/s/rendered/virtualwall/request.rspec", "-s", c.slice_urn, "-p", "/home/u/login.pem"});
    c.command = "delete";
    CHECK(VirtualwallTarget::jfed_argv("/usr/local/bin/jfed-cli", c) ==
          std::vector<std::string>{"/usr/local/bin/jfed-cli", "delete", "--rspec",
                                   "/s/rendered/virtualwall/request.rspec", "-s", c.slice_urn, "-p",
                                   "/home/u/login.pem"});
}

TEST_CASE("IPv6 nodes from a manifest reach hostfiles and the inventory and SSH labels intact") {
    auto m = parse_manifest(data("wall2-4nodes.xml"));
    REQUIRE(m.ok());
    auto nodes = VirtualwallTarget::nodes_from_manifest(*m, wall(3, "  connect_via: ipv6\n"), "/k/id");
    REQUIRE(nodes.ok());
    const std::string v6 = "2001:6a8:1d80:2031:225:90ff:fe5c:dfec";
    for (auto& n : *nodes)
        n.private_address.clear(); // as when the manifest has no LAN addresses: IPv6 all the way
    // Horovod and MPICH's Hydra cannot take an IPv6 address, nor can Open MPI's mpirun route to one: the
    // node's name, which the nodes resolve.
    const std::string name = (*nodes)[0].name;
    CHECK(format_hostfile(*nodes, HostfileFormat::openmpi).find("\n" + name + " slots=1\n") !=
          std::string::npos);
    CHECK(format_hostfile(*nodes, HostfileFormat::openmpi).find(v6) == std::string::npos);
    CHECK(format_hostfile(*nodes, HostfileFormat::horovod).rfind(name + " slots=1\n", 0) == 0);
    CHECK(format_hostfile(*nodes, HostfileFormat::mpich).rfind(name + ":1\n", 0) == 0);
    // Every format reads back to the node (ddl run --hostfile takes names and addresses).
    for (auto f : {HostfileFormat::openmpi, HostfileFormat::horovod, HostfileFormat::mpich}) {
        auto back = runtime::parse_hostfile(format_hostfile(*nodes, f));
        REQUIRE(back.ok());
        CHECK((*back)[0].host == name);
    }
    SshEndpoint ep;
    ep.host = v6;
    ep.port = 2222;
    ep.user = "ubuntu";
    CHECK(ep.label() == "ubuntu@[" + v6 + "]:2222");
    TempDir dir;
    StateStore store(dir.path());
    ClusterState state;
    state.cluster = "ddl-wall";
    state.nodes = *nodes;
    test::ScriptedProcess proc;
    proc.unmatched_ok = true;
    test::FakeRemote remote;
    test::FakeProgress progress;
    Context ctx{wall(3), state, store, proc, remote, progress, {}, nullptr};
    CHECK(render_inventory(ctx).find("ansible_host: \"" + v6 + "\"") != std::string::npos);
}

TEST_CASE("a configure failure that looks like a blocked download gets the Virtual Wall's NAT hint") {
    test::ClusterRig rig("apiVersion: ddl/v1\nname: vw\ntarget: virtualwall\nnodes:\n  master: {gpus: 1}\n"
                         "virtualwall:\n  client: geni\n  project: p\n");
    auto ctx = rig.ctx();
    const VirtualwallTarget t;
    const auto pull = t.configure_failure_hint(
        ctx, "configure failed:\n      master: Training image is present: Error: initializing source "
             "docker://nvcr.io/x: pinging container registry nvcr.io: dial tcp: Network is unreachable");
    CHECK(pull.find("only through NAT") != std::string::npos);
    CHECK(pull.find("https://www.wall2.ilabt.iminds.be/enable-nat.sh") != std::string::npos);
    CHECK(pull.find("ddl exec --cluster vw -- ip -4 route show default") != std::string::npos);
    // A failure with nothing to do with the network gets no hint.
    CHECK(t.configure_failure_hint(ctx, "configure failed:\n      master: Runtime files: capture failed")
              .empty());
    rig.spec.target_section<VirtualwallSpec>().enable_nat = false;
    auto ctx2 = rig.ctx();
    CHECK(t.configure_failure_hint(ctx2, "master: apt-get update: Failed to fetch http://deb.debian.org")
              .find("virtualwall.enable_nat is off") != std::string::npos);
}
