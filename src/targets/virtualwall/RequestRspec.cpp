#include "targets/virtualwall/RequestRspec.hpp"

#include "util/Net.hpp"

#include <pugixml.hpp>
#include <sstream>

namespace ddl {
namespace {

const char* k_rspec_ns = "http://www.geni.net/resources/rspec/3";

std::string interface_id(const std::string& node) {
    return node + ":if0";
}

} // namespace

std::string virtualwall_authority(const std::string& testbed) {
    return testbed + ".ilabt.iminds.be";
}

std::string virtualwall_cm_urn(const std::string& testbed) {
    return "urn:publicid:IDN+" + virtualwall_authority(testbed) + "+authority+cm";
}

const char* rspec_lan_netmask() {
    return "255.255.252.0";
}

std::vector<RspecNode> rspec_nodes(const Spec& spec) {
    std::vector<RspecNode> out;
    auto hw = [&](const NodeGroup& g) {
        return g.flavor.empty() ? spec.target_section<VirtualwallSpec>().hardware_type : g.flavor;
    };
    int total = spec.master.count + spec.workers.count;
    for (int i = 0; i < total; ++i) {
        RspecNode n;
        n.client_id = i == 0 ? "master" : "worker" + std::to_string(i);
        n.hardware_type = hw(i == 0 ? spec.master : spec.workers);
        // 192.168.0.1 upwards inside 192.168.0.0/22: the experiment LAN, apart from the control network.
        int host = i + 1;
        n.lan_address = "192.168." + std::to_string(host / 256) + "." + std::to_string(host % 256);
        out.push_back(n);
    }
    return out;
}

std::string render_request_rspec(const Spec& spec) {
    const auto& vw = spec.target_section<VirtualwallSpec>();
    const std::string cm = virtualwall_cm_urn(vw.testbed);
    const auto nodes = rspec_nodes(spec);

    pugi::xml_document doc;
    auto decl = doc.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    decl.append_attribute("encoding") = "UTF-8";
    doc.append_child(pugi::node_comment)
        .set_value((" Written by ddl for cluster " + spec.name + ": " + std::to_string(nodes.size()) +
                    " bare-metal node(s) on " + vw.testbed + ", one LAN of " +
                    format_rate(vw.link_capacity_bps) + ". Slice " + vw.slice_name(spec.name) + ", project " +
                    vw.project + ". ")
                       .c_str());
    auto rspec = doc.append_child("rspec");
    rspec.append_attribute("xmlns") = k_rspec_ns;
    rspec.append_attribute("xmlns:xsi") = "http://www.w3.org/2001/XMLSchema-instance";
    rspec.append_attribute("xsi:schemaLocation") =
        "http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/request.xsd";
    rspec.append_attribute("type") = "request";
    rspec.append_attribute("generated_by") = "ddl";

    for (const auto& n : nodes) {
        auto node = rspec.append_child("node");
        node.append_attribute("client_id") = n.client_id.c_str();
        node.append_attribute("exclusive") = "true";
        node.append_attribute("component_manager_id") = cm.c_str();
        auto sliver = node.append_child("sliver_type");
        sliver.append_attribute("name") = "raw-pc";
        // No disk_image: the testbed's default image.
        if (!vw.disk_image.empty())
            sliver.append_child("disk_image").append_attribute("name") = vw.disk_image.c_str();
        node.append_child("hardware_type").append_attribute("name") = n.hardware_type.c_str();
        auto iface = node.append_child("interface");
        iface.append_attribute("client_id") = interface_id(n.client_id).c_str();
        auto ip = iface.append_child("ip");
        ip.append_attribute("address") = n.lan_address.c_str();
        ip.append_attribute("netmask") = rspec_lan_netmask();
        ip.append_attribute("type") = "ipv4";
    }

    // A LAN needs two ends; a single node gets none.
    if (nodes.size() >= 2) {
        auto link = rspec.append_child("link");
        link.append_attribute("client_id") = "lan0";
        link.append_child("component_manager").append_attribute("name") = cm.c_str();
        link.append_child("link_type").append_attribute("name") = "lan";
        for (const auto& n : nodes)
            link.append_child("interface_ref").append_attribute("client_id") =
                interface_id(n.client_id).c_str();
        // Capacity is per direction (source -> dest) in kbit/s: every ordered pair of interfaces.
        const std::string kbps = std::to_string(vw.link_capacity_bps / 1000);
        for (const auto& a : nodes) {
            for (const auto& b : nodes) {
                if (a.client_id == b.client_id) continue;
                auto prop = link.append_child("property");
                prop.append_attribute("source_id") = interface_id(a.client_id).c_str();
                prop.append_attribute("dest_id") = interface_id(b.client_id).c_str();
                prop.append_attribute("capacity") = kbps.c_str();
            }
        }
    }

    std::ostringstream out;
    doc.save(out, "  ", pugi::format_indent, pugi::encoding_utf8);
    return out.str();
}

} // namespace ddl
