#include "net/XmlRpc.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <pugixml.hpp>
#include <sstream>

namespace ddl {

XmlRpcValue XmlRpcValue::integer(std::int64_t v) {
    XmlRpcValue x;
    x.m_kind = Kind::integer;
    x.m_int = v;
    return x;
}
XmlRpcValue XmlRpcValue::boolean(bool v) {
    XmlRpcValue x;
    x.m_kind = Kind::boolean;
    x.m_int = v ? 1 : 0;
    return x;
}
XmlRpcValue XmlRpcValue::string(std::string v) {
    XmlRpcValue x;
    x.m_kind = Kind::string;
    x.m_text = std::move(v);
    return x;
}
XmlRpcValue XmlRpcValue::real(double v) {
    XmlRpcValue x;
    x.m_kind = Kind::real;
    x.m_real = v;
    return x;
}
XmlRpcValue XmlRpcValue::datetime(std::string iso8601) {
    XmlRpcValue x;
    x.m_kind = Kind::datetime;
    x.m_text = std::move(iso8601);
    return x;
}
XmlRpcValue XmlRpcValue::base64(std::string bytes) {
    XmlRpcValue x;
    x.m_kind = Kind::base64;
    x.m_text = std::move(bytes);
    return x;
}
XmlRpcValue XmlRpcValue::array(std::vector<XmlRpcValue> items) {
    XmlRpcValue x;
    x.m_kind = Kind::array;
    x.m_items = std::move(items);
    return x;
}
XmlRpcValue XmlRpcValue::structure(std::map<std::string, XmlRpcValue> members) {
    XmlRpcValue x;
    x.m_kind = Kind::structure;
    x.m_members = std::move(members);
    return x;
}

const XmlRpcValue* XmlRpcValue::get(const std::string& name) const {
    if (m_kind != Kind::structure) return nullptr;
    auto it = m_members.find(name);
    return it == m_members.end() ? nullptr : &it->second;
}

std::string XmlRpcValue::text(const std::string& name, const std::string& fallback) const {
    const XmlRpcValue* v = get(name);
    if (!v) return fallback;
    if (v->is(Kind::string) || v->is(Kind::datetime)) return v->as_string();
    if (v->is(Kind::integer)) return std::to_string(v->as_int());
    return fallback;
}

std::string XmlRpcValue::summary() const {
    switch (m_kind) {
    case Kind::nil:
        return "nil";
    case Kind::integer:
        return std::to_string(m_int);
    case Kind::boolean:
        return m_int ? "true" : "false";
    case Kind::real: {
        std::ostringstream o;
        o << m_real;
        return o.str();
    }
    case Kind::string:
    case Kind::datetime:
        return m_text;
    case Kind::base64:
        return std::to_string(m_text.size()) + " bytes";
    case Kind::array:
        return "array of " + std::to_string(m_items.size());
    case Kind::structure:
        return "struct of " + std::to_string(m_members.size());
    }
    return {};
}

namespace {

constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void encode_value(pugi::xml_node parent, const XmlRpcValue& v) {
    pugi::xml_node value = parent.append_child("value");
    using K = XmlRpcValue::Kind;
    switch (v.kind()) {
    case K::nil:
        value.append_child("nil");
        break;
    case K::integer: {
        // i4 holds 32 bits; larger integers use the common i8 extension.
        const bool small = v.as_int() >= INT32_MIN && v.as_int() <= INT32_MAX;
        value.append_child(small ? "int" : "i8").text().set(std::to_string(v.as_int()).c_str());
        break;
    }
    case K::boolean:
        value.append_child("boolean").text().set(v.as_bool() ? "1" : "0");
        break;
    case K::real: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v.as_real());
        value.append_child("double").text().set(buf);
        break;
    }
    case K::string:
        value.append_child("string").text().set(v.as_string().c_str());
        break;
    case K::datetime:
        value.append_child("dateTime.iso8601").text().set(v.as_string().c_str());
        break;
    case K::base64:
        value.append_child("base64").text().set(base64_encode(v.as_string()).c_str());
        break;
    case K::array: {
        pugi::xml_node data = value.append_child("array").append_child("data");
        for (const auto& item : v.items())
            encode_value(data, item);
        break;
    }
    case K::structure: {
        pugi::xml_node st = value.append_child("struct");
        for (const auto& [name, member] : v.members()) {
            pugi::xml_node m = st.append_child("member");
            m.append_child("name").text().set(name.c_str());
            encode_value(m, member);
        }
        break;
    }
    }
}

std::string strip_spaces(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

// The element children of `n`, skipping whitespace text.
std::vector<pugi::xml_node> elements(pugi::xml_node n) {
    std::vector<pugi::xml_node> out;
    for (pugi::xml_node c : n.children())
        if (c.type() == pugi::node_element) out.push_back(c);
    return out;
}

Result<XmlRpcValue> decode_value(pugi::xml_node value, int depth) {
    if (depth > 64) return Error{"values nested more than 64 deep"};
    auto kids = elements(value);
    // A value without a type element is a string (the specification's default).
    if (kids.empty()) return XmlRpcValue::string(value.child_value());
    if (kids.size() != 1) return Error{"a <value> with more than one type element"};
    pugi::xml_node t = kids[0];
    const std::string type = t.name();
    const std::string text = t.child_value();
    if (type == "int" || type == "i4" || type == "i8") {
        std::string s = strip_spaces(text);
        std::int64_t v = 0;
        const char* first = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
        auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
            return Error{"<" + type + "> \"" + s + "\" is not an integer"};
        if (type != "i8" && (v < INT32_MIN || v > INT32_MAX))
            return Error{"<" + type + "> " + s + " is outside 32 bits"};
        return XmlRpcValue::integer(v);
    }
    if (type == "boolean") {
        std::string s = strip_spaces(text);
        if (s != "0" && s != "1") return Error{"<boolean> \"" + s + "\" is not 0 or 1"};
        return XmlRpcValue::boolean(s == "1");
    }
    if (type == "string") return XmlRpcValue::string(text);
    if (type == "double") {
        std::string s = strip_spaces(text);
        char* end = nullptr;
        errno = 0;
        double d = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(d))
            return Error{"<double> \"" + s + "\" is not a number"};
        return XmlRpcValue::real(d);
    }
    if (type == "dateTime.iso8601") return XmlRpcValue::datetime(strip_spaces(text));
    if (type == "base64") {
        auto bytes = base64_decode(text);
        if (!bytes) return Error{"<base64>: " + bytes.error().message};
        return XmlRpcValue::base64(std::move(*bytes));
    }
    if (type == "nil") return XmlRpcValue();
    if (type == "array") {
        pugi::xml_node data = t.child("data");
        if (!data) return Error{"<array> without <data>"};
        std::vector<XmlRpcValue> items;
        for (pugi::xml_node v : elements(data)) {
            if (std::string(v.name()) != "value")
                return Error{"<data> holds <" + std::string(v.name()) + ">"};
            auto item = decode_value(v, depth + 1);
            if (!item) return item.error();
            items.push_back(std::move(*item));
        }
        return XmlRpcValue::array(std::move(items));
    }
    if (type == "struct") {
        std::map<std::string, XmlRpcValue> members;
        for (pugi::xml_node m : elements(t)) {
            if (std::string(m.name()) != "member")
                return Error{"<struct> holds <" + std::string(m.name()) + ">"};
            pugi::xml_node name = m.child("name");
            pugi::xml_node v = m.child("value");
            if (!name || !v) return Error{"a struct <member> without <name> or <value>"};
            auto member = decode_value(v, depth + 1);
            if (!member)
                return Error{"member " + std::string(name.child_value()) + ": " + member.error().message};
            members[name.child_value()] = std::move(*member);
        }
        return XmlRpcValue::structure(std::move(members));
    }
    return Error{"unknown value type <" + type + ">"};
}

} // namespace

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        unsigned n = (static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U) |
                     (static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U) |
                     static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
        out += k_alphabet[(n >> 18) & 63];
        out += k_alphabet[(n >> 12) & 63];
        out += k_alphabet[(n >> 6) & 63];
        out += k_alphabet[n & 63];
    }
    if (i < bytes.size()) {
        unsigned n = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U;
        if (i + 1 < bytes.size()) n |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
        out += k_alphabet[(n >> 18) & 63];
        out += k_alphabet[(n >> 12) & 63];
        out += i + 1 < bytes.size() ? k_alphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

Result<std::string> base64_decode(std::string_view text) {
    std::string out;
    unsigned acc = 0;
    int bits = 0;
    int pad = 0;
    for (char c : text) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        if (c == '=') {
            ++pad;
            continue;
        }
        if (pad) return Error{"data after '=' padding"};
        const char* p = nullptr;
        for (const char* a = k_alphabet; *a; ++a)
            if (*a == c) p = a;
        if (!p) return Error{std::string("'") + c + "' is not a base64 character"};
        acc = (acc << 6) | static_cast<unsigned>(p - k_alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    if (pad > 2 || bits >= 6) return Error{"truncated base64"};
    return out;
}

std::string xmlrpc_call(const std::string& method, const std::vector<XmlRpcValue>& params) {
    pugi::xml_document doc;
    pugi::xml_node decl = doc.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    pugi::xml_node call = doc.append_child("methodCall");
    call.append_child("methodName").text().set(method.c_str());
    pugi::xml_node ps = call.append_child("params");
    for (const auto& p : params)
        encode_value(ps.append_child("param"), p);
    std::ostringstream out;
    doc.save(out, "", pugi::format_raw);
    return out.str();
}

Result<XmlRpcResponse> parse_xmlrpc_response(std::string_view xml) {
    pugi::xml_document doc;
    auto parsed = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) return Error{std::string("not XML: ") + parsed.description()};
    pugi::xml_node resp = doc.child("methodResponse");
    if (!resp) return Error{"not an XML-RPC methodResponse"};
    XmlRpcResponse r;
    if (pugi::xml_node fault = resp.child("fault")) {
        auto v = decode_value(fault.child("value"), 0);
        if (!v) return Error{"fault: " + v.error().message};
        const XmlRpcValue* code = v->get("faultCode");
        const XmlRpcValue* text = v->get("faultString");
        if (!code || !code->is(XmlRpcValue::Kind::integer) || !text)
            return Error{"a fault without faultCode and faultString"};
        r.is_fault = true;
        r.fault.code = code->as_int();
        r.fault.message = text->as_string();
        return r;
    }
    pugi::xml_node param = resp.child("params").child("param");
    if (!param || !param.child("value")) return Error{"a methodResponse without a value"};
    auto v = decode_value(param.child("value"), 0);
    if (!v) return v.error();
    r.value = std::move(*v);
    return r;
}

} // namespace ddl
