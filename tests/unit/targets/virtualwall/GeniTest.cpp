#include "targets/virtualwall/GeniClient.hpp"
#include "targets/virtualwall/GeniIdentity.hpp"
#include "targets/virtualwall/VirtualwallGeni.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <deque>

using namespace ddl;

namespace {

// Test certificates (no keys): one with a GENI user URN in subjectAltName, one without.
const char* const k_cert_with_urn = R"(-----BEGIN CERTIFICATE-----
MIICRTCCAa6gAwIBAgIUYTVv80fKtiymaPZ5i4MHqokDupcwDQYJKoZIhvcNAQEL
BQAwDzENMAsGA1UEAwwEamRvZTAgFw0yNjExMjcwNzA0MTdaGA8yMTI2MTEwMzA3
MDQxN1owDzENMAsGA1UEAwwEamRvZTCBnzANBgkqhkiG9w0BAQEFAAOBjQAwgYkC
gYEA8ix0b5mswCGqGnuc0aMQXKV8ivTPfupe3lVgjNvyAeEdzZ9mArCh5WRB+bF2
aLnP+kXtkfzotGshACbfWtDCUuU379C00TXQ61p3SzJBI12xIZiWBwiAwIsaK1tH
iG2nYBE9hspT7smO/sjzsxV2r3rp/1u1pXm2rq8SWvVv268CAwEAAaOBmzCBmDAd
BgNVHQ4EFgQUQ3n05w6nk3p0W5nDXkmNlgSUS8cwHwYDVR0jBBgwFoAUQ3n05w6n
k3p0W5nDXkmNlgSUS8cwDwYDVR0TAQH/BAUwAwEB/zBFBgNVHREEPjA8hih1cm46
cHVibGljaWQ6SUROK2lsYWJ0LmltZWMuYmUrdXNlcitqZG9lgRBqZG9lQGV4YW1w
bGUub3JnMA0GCSqGSIb3DQEBCwUAA4GBANZoMHtq1LE5O+WIQxSFQAhcI9sgiqQT
oeOfaz/Fd+/2yZLDDvVI+IOLlRp3O4e7MYMypp5bLR2kTXhU4I79IEuL3JUwPllV
M/ggzOQ3f18sf+ycJUxxzkNUnJL90HkF4MSuKIJ5GQOFJZ/V21bIXLGGuiY5jO4r
xUlUmA3W4iM+
-----END CERTIFICATE-----
)";
const char* const k_cert_without_urn = R"(-----BEGIN CERTIFICATE-----
MIICADCCAWmgAwIBAgIUePTqknExXSZn1ARf8qnHg9V4sGowDQYJKoZIhvcNAQEL
BQAwETEPMA0GA1UEAwwGbm9ib2R5MCAXDTI2MTEyNzA3MDQxN1oYDzIxMjYxMTAz
MDcwNDE3WjARMQ8wDQYDVQQDDAZub2JvZHkwgZ8wDQYJKoZIhvcNAQEBBQADgY0A
MIGJAoGBANvjOVDxL/spWix7EMC4mjDTVEIom03bBqrFsFSh1mSVRB9UCHMejEfA
ddNNvKmt6ehDmv5agmHs3ElXku0HBD5Cf6hP/RGSeTeU+cMiw8ZBZo9zouEileuT
580eQCBt5SNd9Pa+DJQE4/MSyy5nilD/Ms2B3s3l3Tr/nzB3csz5AgMBAAGjUzBR
MB0GA1UdDgQWBBTU0WkNFlBx0KdExzPs8MhI1HgidDAfBgNVHSMEGDAWgBTU0WkN
FlBx0KdExzPs8MhI1HgidDAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3DQEBCwUA
A4GBAK1ipiWt8VTa3NyQK9O0w5fFDcgCKF8Zdrpfgq5lOIDxuoOJsCjYQXdV7hne
ffdfIjOs41r8Xf2rT+obz6vhlIZoqcMlQKczxTjSim0oHakNlZ6/UyUo/IvuIsPN
EtYOFOMU//gDE63OrS73WeJ7uLdC8AKujUtBwarGoH630e+/
-----END CERTIFICATE-----
)";

// Answers each call with the next scripted response and records what was called.
class ScriptedXmlRpc : public XmlRpcTransport {
public:
    std::deque<Result<XmlRpcResponse>> answers;
    std::vector<std::string> calls;
    Result<XmlRpcResponse> call(const XmlRpcEndpoint& endpoint, const std::string& method,
                                const std::vector<XmlRpcValue>& params) override {
        (void)params;
        calls.push_back(endpoint.url + " " + method);
        auto a = answers.front();
        answers.pop_front();
        return a;
    }
};

XmlRpcResponse am_reply(int code, XmlRpcValue value, const std::string& output = "") {
    XmlRpcResponse r;
    r.value =
        XmlRpcValue::structure({{"code", XmlRpcValue::structure({{"geni_code", XmlRpcValue::integer(code)}})},
                                {"value", std::move(value)},
                                {"output", XmlRpcValue::string(output)}});
    return r;
}
XmlRpcResponse fed_reply(int code, XmlRpcValue value, const std::string& output = "") {
    XmlRpcResponse r;
    r.value = XmlRpcValue::structure({{"code", XmlRpcValue::integer(code)},
                                      {"value", std::move(value)},
                                      {"output", XmlRpcValue::string(output)}});
    return r;
}
GeniEndpoints endpoints() {
    return {{.url = "https://ma/2"}, {.url = "https://sa/2"}, {.url = "https://am/3.0"}};
}

} // namespace

TEST_CASE("the user's URN and authority come from the login certificate's subjectAltName") {
    TempDir dir;
    const std::string pem = dir.path() + "/login.pem";
    REQUIRE(write_file_atomic(pem, k_cert_with_urn, 0600).ok());
    auto id = geni_identity_from_pem(pem);
    REQUIRE(id.ok());
    CHECK(id->user_urn == "urn:publicid:IDN+ilabt.imec.be+user+jdoe");
    CHECK(id->authority == "ilabt.imec.be");
    CHECK(id->user == "jdoe");
    CHECK(geni_slice_urn(id->authority, "proj", "s1") == "urn:publicid:IDN+ilabt.imec.be:proj+slice+s1");
    CHECK(geni_project_urn(id->authority, "proj") == "urn:publicid:IDN+ilabt.imec.be+project+proj");

    REQUIRE(write_file_atomic(pem, k_cert_without_urn, 0600).ok());
    auto none = geni_identity_from_pem(pem);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.find("no GENI URN in its subjectAltName") != std::string::npos);
    REQUIRE(write_file_atomic(pem, "-----BEGIN PRIVATE KEY-----\n", 0600).ok());
    CHECK(geni_identity_from_pem(pem).error().message.find("holds no certificate") != std::string::npos);
}

TEST_CASE("user URNs of either iLab.t authority are read; other URNs are refused") {
    auto legacy = parse_user_urn("urn:publicid:IDN+wall2.ilabt.iminds.be+user+bob");
    REQUIRE(legacy.ok());
    CHECK(legacy->authority == "wall2.ilabt.iminds.be");
    CHECK_FALSE(parse_user_urn("urn:publicid:IDN+ilabt.imec.be+slice+x").ok());
    CHECK_FALSE(parse_user_urn("jdoe@ilabt.imec.be").ok());
    CHECK(virtualwall_default_sa_url("wall2.ilabt.iminds.be").find("wall2.ilabt.iminds.be") !=
          std::string::npos);
    CHECK(virtualwall_default_sa_url("ilabt.imec.be").empty());
}

TEST_CASE("RFC 3339 times as aggregates write them are read as UTC") {
    auto z = parse_rfc3339("2026-11-27T06:30:00Z");
    REQUIRE(z.ok());
    CHECK(format_rfc3339(*z) == "2026-11-27T06:30:00Z");
    CHECK(format_rfc3339(*parse_rfc3339("2026-11-27T07:30:00+01:00")) == "2026-11-27T06:30:00Z");
    CHECK(format_rfc3339(*parse_rfc3339("2026-11-27T06:30:00.250Z")) == "2026-11-27T06:30:00Z");
    CHECK(format_rfc3339(*parse_rfc3339("20261127T06:30:00")) == "2026-11-27T06:30:00Z");
    CHECK_FALSE(parse_rfc3339("tomorrow").ok());
    CHECK_FALSE(parse_rfc3339("2026-13-01T00:00:00Z").ok());
}

TEST_CASE("a refused AM call is one line: call, code, meaning, output, what to do") {
    ScriptedXmlRpc t;
    GeniClient c(t, endpoints());
    t.answers.push_back(am_reply(7, XmlRpcValue::string(""), "no free gpunode\nin wall2"));
    GeniFailure f;
    auto r = c.am("Allocate", {}, &f);
    REQUIRE_FALSE(r.ok());
    const std::string& m = r.error().message;
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.find(
              "aggregate Allocate at https://am/3.0 refused: REFUSED (Operation Refused): no free gpunode in "
              "wall2; ") == 0);
    CHECK(m.find("hardware_type") != std::string::npos);
    CHECK(f.code == 7);

    t.answers.push_back(am_reply(42, XmlRpcValue::string("")));
    CHECK(c.am("Status", {}).error().message.find("refused: code 42") != std::string::npos);

    XmlRpcResponse fault;
    fault.is_fault = true;
    fault.fault = {102, "Insufficient privileges"};
    t.answers.push_back(fault);
    auto fr = c.am("Delete", {});
    REQUIRE_FALSE(fr.ok());
    CHECK(
        fr.error().message.find("aggregate Delete at https://am/3.0 failed: XML-RPC fault 102: Insufficient "
                                "privileges; ") == 0);

    t.answers.push_back(Error{"Delete: POST https://am/3.0: Couldn't connect to server"});
    CHECK(c.am("Delete", {}).error().message.find("Couldn't connect") != std::string::npos);

    XmlRpcResponse not_am;
    not_am.value = XmlRpcValue::string("hello");
    t.answers.push_back(not_am);
    CHECK(c.am("Status", {}).error().message.find("not an AM API v3") != std::string::npos);
}

TEST_CASE("slice authority answers: a duplicate slice, no slice, a slice record") {
    ScriptedXmlRpc t;
    GeniClient c(t, endpoints());
    auto user = XmlRpcValue::structure({{"geni_type", XmlRpcValue::string("geni_sfa")},
                                        {"geni_version", XmlRpcValue::string("3")},
                                        {"geni_value", XmlRpcValue::string("<signed-credential/>")}});
    t.answers.push_back(fed_reply(5, XmlRpcValue(), "slice exists"));
    auto dup = c.create_slice("s", "urn:publicid:IDN+ilabt.imec.be+project+p", "2026-11-27T06:30:00Z", user);
    REQUIRE_FALSE(dup.ok());
    CHECK(dup.error().message.find("slice authority create at https://sa/2 refused: DUPLICATE_ERROR") == 0);
    CHECK(dup.error().message.find("set virtualwall.slice") != std::string::npos);

    t.answers.push_back(fed_reply(3, XmlRpcValue(), "at most 14 days"));
    auto late = c.update_slice_expiration("urn:x", "2027-01-01T00:00:00Z", user);
    REQUIRE_FALSE(late.ok());
    CHECK(late.error().message ==
          "slice authority update at https://sa/2 refused: ARGUMENT_ERROR (the arguments were malformed or "
          "inconsistent): at most 14 days; the slice authority limits how far a slice is extended: ask for "
          "fewer "
          "hours");

    t.answers.push_back(fed_reply(0, XmlRpcValue::structure()));
    auto none = c.lookup_slice("urn:x", user);
    REQUIRE(none.ok());
    CHECK_FALSE(none->has_value());
    t.answers.push_back(fed_reply(
        0, XmlRpcValue::structure(
               {{"urn:x", XmlRpcValue::structure(
                              {{"SLICE_EXPIRATION", XmlRpcValue::string("2026-11-27T09:00:00Z")}})}})));
    auto found = c.lookup_slice("urn:x", user);
    REQUIRE(found.ok());
    REQUIRE(found->has_value());
    CHECK((*found)->expiration == "2026-11-27T09:00:00Z");

    t.answers.push_back(fed_reply(
        0, XmlRpcValue::array({XmlRpcValue::structure({{"geni_type", XmlRpcValue::string("geni_abac")},
                                                       {"geni_value", XmlRpcValue::string("x")}})})));
    CHECK(c.user_credential("urn:u").error().message.find("no geni_sfa user credential") !=
          std::string::npos);
    CHECK(t.calls.back() == "https://ma/2 get_credentials");
}

TEST_CASE("a ProtoGENI slice authority's codes are read with ProtoGENI's table, its texts give the advice") {
    ScriptedXmlRpc t;
    // The Virtual Wall's own URLs: GeniStdSA and GeniMA under /protogeni/xmlrpc/.
    GeniClient c(t, {{.url = "https://www.wall2.ilabt.iminds.be:12369/protogeni/xmlrpc/geni-ma"},
                     {.url = "https://www.wall2.ilabt.iminds.be:12369/protogeni/xmlrpc/geni-sa/2"},
                     {.url = "https://am/3.0"}});
    auto user = XmlRpcValue::structure({{"geni_type", XmlRpcValue::string("geni_sfa")},
                                        {"geni_version", XmlRpcValue::string("3")},
                                        {"geni_value", XmlRpcValue::string("<signed-credential/>")}});
    // GeniSA::RegisterInternal's answer to a taken name: GENIRESPONSE_ERROR (2), not a Federation API code.
    t.answers.push_back(fed_reply(
        2, XmlRpcValue(), "urn:publicid:IDN+wall2.ilabt.iminds.be:p+slice+s already a registered slice"));
    auto dup =
        c.create_slice("s", "urn:publicid:IDN+wall2.ilabt.iminds.be+project+p", "2026-11-27T06:30:00Z", user);
    REQUIRE_FALSE(dup.ok());
    CHECK(dup.error().message.find("refused: ERROR (Error (other)): urn:") != std::string::npos);
    CHECK(dup.error().message.find(
              "the slice name is taken (ProtoGENI slice names are unique across projects): "
              "set virtualwall.slice") != std::string::npos);
    CHECK(dup.error().message.find("AUTHORIZATION") == std::string::npos);

    // Not a member: GENIRESPONSE_FORBIDDEN (3), not the Federation API's ARGUMENT_ERROR.
    t.answers.push_back(fed_reply(3, XmlRpcValue(), "No privilege for project p"));
    auto member =
        c.create_slice("s", "urn:publicid:IDN+wall2.ilabt.iminds.be+project+p", "2026-11-27T06:30:00Z", user);
    REQUIRE_FALSE(member.ok());
    CHECK(member.error().message.find("refused: FORBIDDEN (Operation Forbidden") != std::string::npos);
    CHECK(member.error().message.find("a member of virtualwall.project") != std::string::npos);

    // A renewal past the authority's limit: GENIRESPONSE_ERROR with its text; the wrapper's keys say
    // ProtoGENI even where the URL would not.
    XmlRpcResponse late =
        fed_reply(2, XmlRpcValue(), "expiration is greater then the maximum number of minutes 129600");
    late.value.members()["protogeni_error_url"] =
        XmlRpcValue::string("https://www.wall2.ilabt.iminds.be/spewlogfile.php3?x");
    t.answers.push_back(late);
    GeniClient plain_urls(t, endpoints());
    auto renew = plain_urls.update_slice_expiration("urn:x", "2027-01-01T00:00:00Z", user);
    REQUIRE_FALSE(renew.ok());
    CHECK(renew.error().message.find("refused: ERROR (Error (other)): expiration is greater") !=
          std::string::npos);
    CHECK(renew.error().message.find("ask for fewer hours") != std::string::npos);

    t.answers.push_back(fed_reply(12, XmlRpcValue(), "No such Slice"));
    auto gone = c.slice_credential("urn:x", user);
    REQUIRE_FALSE(gone.ok());
    CHECK(gone.error().message.find(
              "refused: SEARCHFAILED (Search Failed (e.g. for slice)): No such Slice; the "
              "slice is gone (expired or deleted): deploy again") != std::string::npos);
    t.answers.push_back(fed_reply(1, XmlRpcValue(), "SLICE_NAME \"-x\" is not a valid slice name"));
    CHECK(c.create_slice("-x", "urn:p", "2026-11-27T06:30:00Z", user)
              .error()
              .message.find("refused: BADARGS") != std::string::npos);
}

TEST_CASE("GetVersion: only an AM API v3 aggregate with GENI 3 request RSpecs is used") {
    ScriptedXmlRpc t;
    GeniClient c(t, endpoints());
    t.answers.push_back(am_reply(0, XmlRpcValue::structure({{"geni_api", XmlRpcValue::integer(2)}})));
    CHECK(c.am_get_version().error().message.find("does not speak AM API v3") != std::string::npos);
    auto v3 = XmlRpcValue::structure(
        {{"geni_api", XmlRpcValue::integer(3)},
         {"geni_request_rspec_versions",
          XmlRpcValue::array({XmlRpcValue::structure(
              {{"type", XmlRpcValue::string("GENI")}, {"version", XmlRpcValue::string("3")}})})}});
    t.answers.push_back(am_reply(0, v3));
    CHECK(c.am_get_version().ok());
}

TEST_CASE("the lease ends with the earlier of the slivers' and the slice's expiry") {
    nlohmann::json td = {{"slivers_expire", "2026-11-27T08:00:00Z"},
                         {"slice_expires", "2026-11-27T09:00:00Z"}};
    REQUIRE(geni_lease_end(td));
    CHECK(format_rfc3339(*geni_lease_end(td)) == "2026-11-27T08:00:00Z");
    td["slice_expires"] = "2026-11-27T07:00:00Z";
    CHECK(format_rfc3339(*geni_lease_end(td)) == "2026-11-27T07:00:00Z");
    CHECK_FALSE(geni_lease_end(nlohmann::json::object()));
}
