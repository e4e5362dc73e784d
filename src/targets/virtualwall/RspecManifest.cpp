#include "targets/virtualwall/RspecManifest.hpp"

#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <pugixml.hpp>

namespace ddl {
namespace {

const char* k_geni_v3 = "http://www.geni.net/resources/rspec/3";

int line_of(std::string_view text, std::ptrdiff_t offset) {
    int line = 1;
    for (std::ptrdiff_t i = 0; i < offset && i < static_cast<std::ptrdiff_t>(text.size()); ++i)
        line += text[static_cast<std::size_t>(i)] == '\n';
    return line;
}

// Names in the RSpec namespace carry the root's prefix (usually none); extension elements (emulab:vnode,
// jfed:location, ...) have other prefixes and are skipped by matching the full name.
class Names {
public:
    explicit Names(std::string prefix) : m_prefix(std::move(prefix)) {}
    std::string operator()(const char* local) const {
        return m_prefix.empty() ? local : m_prefix + ":" + local;
    }

private:
    std::string m_prefix;
};

std::string attr(const pugi::xml_node& n, const char* name) {
    return trim(n.attribute(name).value());
}

std::string strip_brackets(std::string s) {
    if (s.size() > 2 && s.front() == '[' && s.back() == ']') return s.substr(1, s.size() - 2);
    return s;
}

} // namespace

Result<Manifest> parse_manifest(std::string_view xml) {
    pugi::xml_document doc;
    auto parsed = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_auto);
    if (!parsed)
        return Error{"not a readable XML document (line " + std::to_string(line_of(xml, parsed.offset)) +
                     ": " + parsed.description() + ")"};
    auto root = doc.document_element();
    std::string root_name = root.name();
    auto colon = root_name.find(':');
    std::string prefix = colon == std::string::npos ? "" : root_name.substr(0, colon);
    std::string local = colon == std::string::npos ? root_name : root_name.substr(colon + 1);
    if (local != "rspec") return Error{"not an RSpec: the document's root element is <" + root_name + ">"};
    std::string ns = root.attribute(prefix.empty() ? "xmlns" : ("xmlns:" + prefix).c_str()).value();
    if (ns != k_geni_v3)
        return Error{"not a GENI v3 RSpec (namespace \"" + ns + "\", expected " + k_geni_v3 + ")"};
    std::string type = attr(root, "type");
    if (type == "request")
        return Error{
            "this is a request RSpec, not a manifest: give the manifest jFed saves once the slice is "
            "ready (in the jFed GUI: right-click the slice, \"Save Manifest\")"};
    if (type != "manifest")
        return Error{"the RSpec's type is \"" + type + "\"; a manifest RSpec (type=\"manifest\") is needed"};

    // pugixml keeps the name pointer while iterating: the names must outlive the loops.
    Names q(prefix);
    const std::string k_node = q("node"), k_services = q("services"), k_login = q("login"),
                      k_host = q("host"), k_interface = q("interface"), k_ip = q("ip");
    Manifest m;
    int index = 0;
    for (auto n : root.children(k_node.c_str())) {
        ++index;
        ManifestNode node;
        node.client_id = attr(n, "client_id");
        if (node.client_id.empty())
            return Error{"node " + std::to_string(index) + " of the manifest has no client_id"};
        const std::string where = "node \"" + node.client_id + "\"";
        for (const auto& other : m.nodes)
            if (other.client_id == node.client_id) return Error{where + " appears twice in the manifest"};
        node.component_id = attr(n, "component_id");
        node.component_manager_id = attr(n, "component_manager_id");
        node.sliver_id = attr(n, "sliver_id");
        for (auto services : n.children(k_services.c_str())) {
            for (auto l : services.children(k_login.c_str())) {
                ManifestLogin login;
                login.authentication = attr(l, "authentication");
                login.hostname = strip_brackets(attr(l, "hostname"));
                login.username = attr(l, "username");
                if (auto p = attr(l, "port"); !p.empty()) {
                    auto port = parse_int(p);
                    if (!port || *port < 1 || *port > 65535)
                        return Error{where + ": login port \"" + p + "\" is not a port number (1-65535)"};
                    login.port = static_cast<int>(*port);
                }
                if (login.hostname.find_first_of(" \t/@") != std::string::npos)
                    return Error{where + ": login hostname \"" + login.hostname + "\" is not a host name"};
                node.logins.push_back(login);
            }
        }
        for (auto h : n.children(k_host.c_str())) {
            node.host_name = attr(h, "name");
            node.host_ipv4 = attr(h, "ipv4");
            node.host_ipv6 = strip_brackets(attr(h, "ipv6"));
            if (!node.host_ipv4.empty() && !is_ipv4(node.host_ipv4))
                return Error{where + ": host ipv4 \"" + node.host_ipv4 + "\" is not an IPv4 address"};
            if (!node.host_ipv6.empty() && !is_ipv6(node.host_ipv6))
                return Error{where + ": host ipv6 \"" + node.host_ipv6 + "\" is not an IPv6 address"};
        }
        for (auto i : n.children(k_interface.c_str())) {
            ManifestInterface iface;
            iface.client_id = attr(i, "client_id");
            iface.mac_address = attr(i, "mac_address");
            for (auto ip : i.children(k_ip.c_str())) {
                ManifestIp a{attr(ip, "address"), attr(ip, "netmask"), to_lower(attr(ip, "type"))};
                if (a.type.empty()) a.type = "ipv4"; // the schema's default
                bool ok = a.type == "ipv4" ? is_ipv4(a.address) : a.type == "ipv6" && is_ipv6(a.address);
                if (!ok)
                    return Error{where + ": interface " + iface.client_id + " has ip \"" + a.address +
                                 "\" of type \"" + a.type + "\", which is not such an address"};
                iface.ips.push_back(a);
            }
            node.interfaces.push_back(iface);
        }
        m.nodes.push_back(std::move(node));
    }
    if (m.nodes.empty()) return Error{"the manifest lists no nodes"};
    return m;
}

} // namespace ddl
