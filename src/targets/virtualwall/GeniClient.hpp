#pragma once
// A client of the two GENI interfaces the Virtual Wall speaks, over XML-RPC with the user's certificate:
// - the Common Federation API v2 member and slice authorities (GENI-NSF/CommonFederationAPI,
//   CommonFederationAPIv2.adoc: "API Error Handling", "Slice Service Methods", "Member Service"):
//   MA get_credentials (the user credential), SA lookup/create/update("SLICE") and get_credentials (the
//   slice credential). Every call returns {code, value, output}. The codes are the Federation API's, except
//   from ProtoGENI's authorities (the Virtual Wall's, …/protogeni/xmlrpc/geni-sa/2 and geni-ma), which
//   answer with ProtoGENI's GENIRESPONSE table (GeniResponse.pm) and add protogeni_error_url/_log: read so.
// - the GENI Aggregate Manager API v3 (https://groups.geni.net/geni/wiki/GAPI_AM_API_V3, its "Common
//   Concepts" and "Details" pages): GetVersion, Allocate, Provision, PerformOperationalAction, Status,
//   Describe, Renew, Delete. Every call returns {code: {geni_code, ...}, value, output}.
// A non-zero code or an XML-RPC fault becomes one Error line: the call, the code, its meaning from the
// API's table, the server's output, and what to do.
#include "net/XmlRpcClient.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddl {

// AM API v3 error codes (Common Concepts, "Error Codes"; the table geni-error-codes.xml).
namespace geni_code {
inline constexpr int k_success = 0;
inline constexpr int k_badargs = 1;
inline constexpr int k_forbidden = 3;
inline constexpr int k_searchfailed = 12;
inline constexpr int k_expired = 15;
inline constexpr int k_alreadyexists = 17;
inline constexpr int k_outofrange = 19;
} // namespace geni_code

// "REFUSED (Operation Refused)"; "code N" for a code the table does not have.
std::string am_code_meaning(std::int64_t code);
// "DUPLICATE_ERROR (...)" for the Federation API's codes.
std::string fed_code_meaning(std::int64_t code);

// A call that returned a non-zero code (the Error of GeniClient's calls carries the same text).
struct GeniFailure {
    std::string call;
    std::int64_t code = 0;
    std::string output;
};

struct GeniEndpoints {
    XmlRpcEndpoint ma; // member authority (user credential)
    XmlRpcEndpoint sa; // slice authority
    XmlRpcEndpoint am; // the testbed's aggregate manager
};

struct SliceRecord {
    std::string urn;
    std::string expiration; // RFC 3339, as the SA gives it
};

class GeniClient {
public:
    GeniClient(XmlRpcTransport& transport, GeniEndpoints endpoints)
        : m_transport(transport), m_endpoints(std::move(endpoints)) {}

    // The user's SFA credential struct ({geni_type: geni_sfa, geni_version, geni_value}) from the MA.
    Result<XmlRpcValue> user_credential(const std::string& user_urn);
    // The live slice with this URN, or nullopt when the SA has none (never created, or expired).
    Result<std::optional<SliceRecord>> lookup_slice(const std::string& slice_urn,
                                                    const XmlRpcValue& user_cred);
    Result<SliceRecord> create_slice(const std::string& name, const std::string& project_urn,
                                     const std::string& expiration, const XmlRpcValue& user_cred);
    // With the slice's own credential (a user credential is refused by ProtoGENI's slice authority).
    Status update_slice_expiration(const std::string& slice_urn, const std::string& expiration,
                                   const XmlRpcValue& slice_cred);
    // The slice credential struct from the SA.
    Result<XmlRpcValue> slice_credential(const std::string& slice_urn, const XmlRpcValue& user_cred);

    // GetVersion: an Error unless the aggregate speaks AM API v3 and takes GENI 3 request RSpecs.
    Status am_get_version();
    // One AM API call; `failure` (when given) receives the code of a refused call, whose Error is returned.
    Result<XmlRpcValue> am(const std::string& method, const std::vector<XmlRpcValue>& params,
                           GeniFailure* failure = nullptr);

private:
    Result<XmlRpcValue> fed(const XmlRpcEndpoint& at, const std::string& what, const std::string& method,
                            const std::vector<XmlRpcValue>& params, GeniFailure* failure = nullptr,
                            const std::string& todo = {}); // for an argument or limit refusal

    XmlRpcTransport& m_transport;
    GeniEndpoints m_endpoints;
};

// {geni_rspec_version: {type: GENI, version: 3}}, the option Provision and Describe require.
XmlRpcValue geni_rspec_version_option();
// The first credential of type geni_sfa in a Federation API CREDENTIALS list, or nullptr.
const XmlRpcValue* select_sfa_credential(const XmlRpcValue& list);

} // namespace ddl
