#pragma once
// XML-RPC (the specification at http://xmlrpc.com/spec.md): the values a call carries, the methodCall
// document a client sends and the methodResponse it reads back (a value, or a fault). Pure functions of
// their input; the transport is XmlRpcClient's job.
#include "util/Result.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

class XmlRpcValue {
public:
    enum class Kind { nil, integer, boolean, string, real, datetime, base64, array, structure };

    XmlRpcValue() = default;
    static XmlRpcValue integer(std::int64_t v);
    static XmlRpcValue boolean(bool v);
    static XmlRpcValue string(std::string v);
    static XmlRpcValue real(double v);
    // The text of a dateTime.iso8601 value as sent (e.g. "20260101T10:00:00"); not reinterpreted.
    static XmlRpcValue datetime(std::string iso8601);
    // Raw bytes, sent base64-encoded.
    static XmlRpcValue base64(std::string bytes);
    static XmlRpcValue array(std::vector<XmlRpcValue> items = {});
    static XmlRpcValue structure(std::map<std::string, XmlRpcValue> members = {});

    Kind kind() const { return m_kind; }
    bool is(Kind k) const { return m_kind == k; }
    std::int64_t as_int() const { return m_int; }
    bool as_bool() const { return m_int != 0; }
    double as_real() const { return m_real; }
    // string, datetime text, or base64's decoded bytes
    const std::string& as_string() const { return m_text; }
    const std::vector<XmlRpcValue>& items() const { return m_items; }
    const std::map<std::string, XmlRpcValue>& members() const { return m_members; }
    std::vector<XmlRpcValue>& items() { return m_items; }
    std::map<std::string, XmlRpcValue>& members() { return m_members; }
    // A struct member, or nullptr (also when this is not a struct).
    const XmlRpcValue* get(const std::string& name) const;
    // A struct member that is a string (or an integer, printed), or `fallback`.
    std::string text(const std::string& name, const std::string& fallback = {}) const;

    // One line for messages: strings as they are, numbers printed, containers summarised.
    std::string summary() const;

private:
    Kind m_kind = Kind::nil;
    std::int64_t m_int = 0;
    double m_real = 0;
    std::string m_text;
    std::vector<XmlRpcValue> m_items;
    std::map<std::string, XmlRpcValue> m_members;
};

struct XmlRpcFault {
    std::int64_t code = 0;
    std::string message;
};

struct XmlRpcResponse {
    bool is_fault = false;
    XmlRpcFault fault;
    XmlRpcValue value;
};

// The methodCall document for `method` with `params`.
std::string xmlrpc_call(const std::string& method, const std::vector<XmlRpcValue>& params);
// Reads a methodResponse: its one value, or its fault. An Error names what is malformed (not XML, no
// methodResponse, an unknown value type, an integer out of range, bad base64).
Result<XmlRpcResponse> parse_xmlrpc_response(std::string_view xml);

std::string base64_encode(std::string_view bytes);
Result<std::string> base64_decode(std::string_view text);

} // namespace ddl
