#include "targets/virtualwall/GeniClient.hpp"

#include <map>

namespace ddl {
namespace {

struct CodeInfo {
    const char* label;
    const char* meaning;
    const char* todo;
};

// AM API v3, Common Concepts "Error Codes" (labels and meanings of the published table).
const std::map<std::int64_t, CodeInfo>& am_codes() {
    static const std::map<std::int64_t, CodeInfo> codes = {
        {0, {"SUCCESS", "Success", ""}},
        {1, {"BADARGS", "Bad Arguments: malformed arguments", "check the spec's virtualwall section"}},
        {2, {"ERROR", "Error (other)", "read the aggregate's message; retry, or ask the testbed's support"}},
        {3,
         {"FORBIDDEN", "Operation Forbidden: the credentials do not give enough privileges",
          "check that your account is a member of virtualwall.project and that login_pem is your current "
          "login file"}},
        {4, {"BADVERSION", "Bad Version (e.g. of RSpec)", "the aggregate does not take this RSpec version"}},
        {5, {"SERVERERROR", "Server Error", "retry later, or ask the testbed's support"}},
        {6, {"TOOBIG", "Too Big (e.g. request RSpec)", "ask for fewer nodes"}},
        {7,
         {"REFUSED", "Operation Refused",
          "the testbed refused the request (often: not enough free nodes of hardware_type); ask for fewer "
          "nodes or another hardware_type"}},
        {8, {"TIMEDOUT", "Operation Timed Out", "retry"}},
        {9, {"DBERROR", "Database Error", "retry later, or ask the testbed's support"}},
        {10, {"RPCERROR", "RPC Error", "retry later"}},
        {11, {"UNAVAILABLE", "Unavailable (e.g. server in lockdown)", "retry later"}},
        {12,
         {"SEARCHFAILED", "Search Failed (e.g. for slice)",
          "the slice or its slivers are gone (expired or deleted): deploy again"}},
        {13, {"UNSUPPORTED", "Operation Unsupported", "the aggregate does not support this operation"}},
        {14, {"BUSY", "Busy (resource, slice, or server); try again later", "retry in a minute"}},
        {15, {"EXPIRED", "Expired (e.g. slice)", "the slice expired: destroy the cluster and deploy again"}},
        {16, {"INPROGRESS", "In Progress", "an earlier operation is still running: retry in a minute"}},
        {17,
         {"ALREADYEXISTS", "Already Exists (e.g. the slice)",
          "the slice already has slivers at this aggregate: `ddl destroy` it first, or set virtualwall.slice "
          "to another name"}},
        {18, {"MISSINGARGS", "Required argument(s) missing", "report this as a ddl bug"}},
        {19,
         {"OUTOFRANGE", "Requested expiration time or other argument not valid",
          "ask for fewer hours (`ddl renew --hours N`); the slice's expiry bounds its slivers'"}},
        {20, {"CREDENTIAL_INVALID", "Not authorized: Supplied credential is invalid", "deploy again"}},
        {21,
         {"CREDENTIAL_EXPIRED", "Not authorized: Supplied credential expired", "retry: ddl gets a new one"}},
        {22,
         {"CREDENTIAL_MISMATCH",
          "Not authorized: the credential does not match the client certificate or the slice",
          "check that login_pem is the login file of the account that created the slice"}},
        {23,
         {"CREDENTIAL_SIGNER_UNTRUSTED", "Not authorized: credential not signed by a trusted authority",
          "this aggregate does not trust your authority: check virtualwall.sa_url"}},
        {24, {"VLAN_UNAVAILABLE", "VLAN tag(s) requested not available", "retry later"}},
        {25,
         {"INSUFFICIENT_BANDWIDTH", "Requested capacity for link(s) not available",
          "lower virtualwall.link_capacity"}},
        {26,
         {"INSUFFICIENT_NODES", "Not enough nodes available for request",
          "ask for fewer nodes or another hardware_type"}},
    };
    return codes;
}

// Common Federation API v2, "API Error Handling".
const std::map<std::int64_t, CodeInfo>& fed_codes() {
    static const std::map<std::int64_t, CodeInfo> codes = {
        {0, {"NONE", "No error", ""}},
        {1,
         {"AUTHENTICATION_ERROR", "the caller is not known to the federation",
          "use the login file of your iLab.t account (virtualwall.login_pem)"}},
        {2,
         {"AUTHORIZATION_ERROR", "the caller may not make this call with these arguments",
          "check that your account is a member of virtualwall.project"}},
        {3,
         {"ARGUMENT_ERROR", "the arguments were malformed or inconsistent",
          "check virtualwall.project and virtualwall.slice"}},
        {4, {"DATABASE_ERROR", "the authority's database failed", "retry later"}},
        {5,
         {"DUPLICATE_ERROR", "the object already exists",
          "a slice of this name exists in the project (maybe someone else's): set virtualwall.slice"}},
        {100,
         {"NOT_IMPLEMENTED_ERROR", "the method is not implemented", "check virtualwall.sa_url and ma_url"}},
        {101, {"SERVER_ERROR", "an error in the client/server connection", "retry later"}},
    };
    return codes;
}

// ProtoGENI's own result codes (emulab-devel, protogeni/xmlrpc/GeniResponse.pm: GENIRESPONSE_*), which its
// Federation-API-style authorities (GeniStdSA at …/protogeni/xmlrpc/geni-sa/2, GeniMA at …/geni-ma: the
// Virtual Wall's) answer untranslated: AM API v3's numbers for 0–17 and 24–26, without 18–23, with 27, 28,
// 100 and 101. What to do depends on the call and on the text (pg_todo).
const std::map<std::int64_t, CodeInfo>& pg_codes() {
    static const std::map<std::int64_t, CodeInfo> codes = [] {
        std::map<std::int64_t, CodeInfo> t = am_codes();
        for (std::int64_t c = 18; c <= 23; ++c)
            t.erase(c);
        t[27] = {"INSUFFICIENT_MEMORY", "Insufficient Memory", "ask for fewer nodes"};
        t[28] = {"NO_MAPPING", "No Mapping Possible", "ask for fewer nodes or another hardware_type"};
        t[100] = {"NOT_IMPLEMENTED", "Not Implemented", "check virtualwall.sa_url and ma_url"};
        t[101] = {"STITCHER_ERROR", "Stitcher Error", "retry later"};
        return t;
    }();
    return codes;
}

// What to do about a ProtoGENI authority's refusal: by code, and for GENIRESPONSE_ERROR (2) by its text
// (GeniStdSA/GeniSA: a taken slice name, a lifetime past the authority's limit). LIMIT_TODO: the caller's
// advice for a refused expiration.
std::string pg_todo(std::int64_t code, const std::string& output, const std::string& limit_todo) {
    auto has = [&output](const char* text) { return output.find(text) != std::string::npos; };
    switch (code) {
    case 1:
        return "check virtualwall.project and virtualwall.slice";
    case 2:
        if (has("already a registered slice") || has("already has the same name"))
            return "the slice name is taken (ProtoGENI slice names are unique across projects): set "
                   "virtualwall.slice to another name";
        if (!limit_todo.empty() && (has("greater then the maximum") || has("maximum number of minutes")))
            return limit_todo;
        return "read the authority's message; retry, or ask the testbed's support";
    case 3:
        return "check that your account is a member of virtualwall.project and that login_pem is your "
               "current login file";
    case 12:
        return "the slice is gone (expired or deleted): deploy again";
    default: {
        auto it = pg_codes().find(code);
        return it == pg_codes().end() ? "read the authority's message" : it->second.todo;
    }
    }
}

std::string describe(const std::map<std::int64_t, CodeInfo>& table, std::int64_t code) {
    auto it = table.find(code);
    if (it == table.end()) return "code " + std::to_string(code);
    return std::string(it->second.label) + " (" + it->second.meaning + ")";
}

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (s.size() > 300) s = s.substr(0, 300) + "...";
    return s;
}

std::string refused(const std::string& call, const std::map<std::int64_t, CodeInfo>& table, std::int64_t code,
                    const std::string& output, const std::string& custom_todo = {}) {
    std::string line = call + " refused: " + describe(table, code);
    if (!output.empty()) line += ": " + one_line(output);
    auto it = table.find(code);
    const std::string todo = !custom_todo.empty() ? custom_todo
                             : it == table.end()  ? "read the server's message"
                                                  : it->second.todo;
    if (!todo.empty()) line += "; " + todo;
    return line;
}

std::string fault_line(const std::string& call, const XmlRpcFault& f) {
    return call + " failed: XML-RPC fault " + std::to_string(f.code) + ": " + one_line(f.message) +
           "; the server could not process the call (a credential it does not accept, or a server error): "
           "check virtualwall.login_pem and the URLs, then retry";
}

} // namespace

std::string am_code_meaning(std::int64_t code) {
    return describe(am_codes(), code);
}
std::string fed_code_meaning(std::int64_t code) {
    return describe(fed_codes(), code);
}

XmlRpcValue geni_rspec_version_option() {
    return XmlRpcValue::structure(
        {{"type", XmlRpcValue::string("GENI")}, {"version", XmlRpcValue::string("3")}});
}

const XmlRpcValue* select_sfa_credential(const XmlRpcValue& list) {
    for (const auto& c : list.items())
        if (c.text("geni_type") == "geni_sfa" && c.get("geni_value")) return &c;
    return nullptr;
}

Result<XmlRpcValue> GeniClient::fed(const XmlRpcEndpoint& at, const std::string& what,
                                    const std::string& method, const std::vector<XmlRpcValue>& params,
                                    GeniFailure* failure, const std::string& todo) {
    const std::string call = what + " " + method + " at " + at.url;
    auto r = m_transport.call(at, method, params);
    if (!r) return Error{call + " failed: " + r.error().message};
    if (r->is_fault) return Error{fault_line(call, r->fault)};
    const XmlRpcValue* code = r->value.get("code");
    if (!code || !code->is(XmlRpcValue::Kind::integer))
        return Error{call + ": the answer is not a Federation API {code, value, output} struct"};
    if (code->as_int() != 0) {
        const std::string output = r->value.text("output");
        if (failure) *failure = {call, code->as_int(), output};
        // ProtoGENI's wrapper adds protogeni_error_url/_log to every answer; its paths are /protogeni/….
        const bool protogeni = r->value.get("protogeni_error_url") || r->value.get("protogeni_error_log") ||
                               at.url.find("/protogeni/") != std::string::npos;
        if (protogeni)
            return Error{
                refused(call, pg_codes(), code->as_int(), output, pg_todo(code->as_int(), output, todo))};
        return Error{
            refused(call, fed_codes(), code->as_int(), output, code->as_int() == 3 ? todo : std::string())};
    }
    const XmlRpcValue* value = r->value.get("value");
    return value ? *value : XmlRpcValue();
}

Result<XmlRpcValue> GeniClient::am(const std::string& method, const std::vector<XmlRpcValue>& params,
                                   GeniFailure* failure) {
    const std::string call = "aggregate " + method + " at " + m_endpoints.am.url;
    auto r = m_transport.call(m_endpoints.am, method, params);
    if (!r) return Error{call + " failed: " + r.error().message};
    if (r->is_fault) return Error{fault_line(call, r->fault)};
    const XmlRpcValue* code = r->value.get("code");
    const XmlRpcValue* geni = code ? code->get("geni_code") : nullptr;
    if (!geni || !geni->is(XmlRpcValue::Kind::integer))
        return Error{call + ": the answer is not an AM API v3 {code: {geni_code}, value, output} struct"};
    if (geni->as_int() != 0) {
        if (failure) *failure = {call, geni->as_int(), r->value.text("output")};
        return Error{refused(call, am_codes(), geni->as_int(), r->value.text("output"))};
    }
    const XmlRpcValue* value = r->value.get("value");
    return value ? *value : XmlRpcValue();
}

Result<XmlRpcValue> GeniClient::user_credential(const std::string& user_urn) {
    auto v = fed(m_endpoints.ma, "member authority", "get_credentials",
                 {XmlRpcValue::string(user_urn), XmlRpcValue::array(), XmlRpcValue::structure()});
    if (!v) return v.error();
    const XmlRpcValue* cred = select_sfa_credential(*v);
    if (!cred)
        return Error{"member authority get_credentials at " + m_endpoints.ma.url +
                     " returned no geni_sfa user credential for " + user_urn};
    return *cred;
}

Result<std::optional<SliceRecord>> GeniClient::lookup_slice(const std::string& slice_urn,
                                                            const XmlRpcValue& user_cred) {
    auto options = XmlRpcValue::structure(
        {{"match", XmlRpcValue::structure({{"SLICE_URN", XmlRpcValue::string(slice_urn)},
                                           {"SLICE_EXPIRED", XmlRpcValue::boolean(false)}})}});
    auto v = fed(m_endpoints.sa, "slice authority", "lookup",
                 {XmlRpcValue::string("SLICE"), XmlRpcValue::array({user_cred}), options});
    if (!v) return v.error();
    const XmlRpcValue* rec = v->get(slice_urn);
    if (!rec) return std::optional<SliceRecord>();
    return std::optional<SliceRecord>(SliceRecord{slice_urn, rec->text("SLICE_EXPIRATION")});
}

Result<SliceRecord> GeniClient::create_slice(const std::string& name, const std::string& project_urn,
                                             const std::string& expiration, const XmlRpcValue& user_cred) {
    auto options = XmlRpcValue::structure(
        {{"fields", XmlRpcValue::structure({{"SLICE_NAME", XmlRpcValue::string(name)},
                                            {"SLICE_PROJECT_URN", XmlRpcValue::string(project_urn)},
                                            {"SLICE_EXPIRATION", XmlRpcValue::string(expiration)}})}});
    auto v = fed(m_endpoints.sa, "slice authority", "create",
                 {XmlRpcValue::string("SLICE"), XmlRpcValue::array({user_cred}), options});
    if (!v) return v.error();
    if (v->text("SLICE_URN").empty())
        return Error{"slice authority create at " + m_endpoints.sa.url + " returned no SLICE_URN"};
    return SliceRecord{v->text("SLICE_URN"), v->text("SLICE_EXPIRATION")};
}

Status GeniClient::update_slice_expiration(const std::string& slice_urn, const std::string& expiration,
                                           const XmlRpcValue& slice_cred) {
    auto options = XmlRpcValue::structure(
        {{"fields", XmlRpcValue::structure({{"SLICE_EXPIRATION", XmlRpcValue::string(expiration)}})}});
    auto v = fed(m_endpoints.sa, "slice authority", "update",
                 {XmlRpcValue::string("SLICE"), XmlRpcValue::string(slice_urn),
                  XmlRpcValue::array({slice_cred}), options},
                 nullptr, "the slice authority limits how far a slice is extended: ask for fewer hours");
    if (!v) return v.error();
    return {};
}

Result<XmlRpcValue> GeniClient::slice_credential(const std::string& slice_urn, const XmlRpcValue& user_cred) {
    auto v = fed(m_endpoints.sa, "slice authority", "get_credentials",
                 {XmlRpcValue::string(slice_urn), XmlRpcValue::array({user_cred}), XmlRpcValue::structure()});
    if (!v) return v.error();
    const XmlRpcValue* cred = select_sfa_credential(*v);
    if (!cred)
        return Error{"slice authority get_credentials at " + m_endpoints.sa.url +
                     " returned no geni_sfa slice credential for " + slice_urn};
    return *cred;
}

Status GeniClient::am_get_version() {
    auto v = am("GetVersion", {XmlRpcValue::structure()});
    if (!v) return v.error();
    const XmlRpcValue* api = v->get("geni_api");
    if (!api || !api->is(XmlRpcValue::Kind::integer) || api->as_int() != 3)
        return Error{"the aggregate at " + m_endpoints.am.url + " does not speak AM API v3 (geni_api " +
                     (api ? api->summary() : std::string("missing")) +
                     "); set virtualwall.am_url to its AM API v3 URL"};
    bool geni3 = false;
    if (const XmlRpcValue* versions = v->get("geni_request_rspec_versions"))
        for (const auto& rv : versions->items())
            geni3 = geni3 || (rv.text("type") == "GENI" && rv.text("version") == "3");
    if (!geni3)
        return Error{"the aggregate at " + m_endpoints.am.url + " does not list GENI 3 request RSpecs"};
    return {};
}

} // namespace ddl
