#include "net/XmlRpc.hpp"

#include <catch2/catch.hpp>

using namespace ddl;
using K = XmlRpcValue::Kind;

namespace {
std::string response_with(const std::string& value_xml) {
    return "<?xml version=\"1.0\"?><methodResponse><params><param><value>" + value_xml +
           "</value></param></params></methodResponse>";
}
XmlRpcValue decode(const std::string& value_xml) {
    auto r = parse_xmlrpc_response(response_with(value_xml));
    REQUIRE(r.ok());
    REQUIRE_FALSE(r->is_fault);
    return r->value;
}
std::string decode_error(const std::string& value_xml) {
    auto r = parse_xmlrpc_response(response_with(value_xml));
    REQUIRE_FALSE(r.ok());
    return r.error().message;
}
} // namespace

TEST_CASE("XML-RPC scalars decode as the specification types them") {
    CHECK(decode("<int>42</int>").as_int() == 42);
    CHECK(decode("<i4>-7</i4>").as_int() == -7);
    CHECK(decode("<i8>8589934592</i8>").as_int() == 8589934592LL);
    CHECK(decode("<boolean>1</boolean>").as_bool());
    CHECK_FALSE(decode("<boolean>0</boolean>").as_bool());
    CHECK(decode("<string>a &lt;b&gt; &amp; c</string>").as_string() == "a <b> & c");
    CHECK(decode("no type element").as_string() == "no type element");
    CHECK(decode("<double>-1.5</double>").as_real() == -1.5);
    auto dt = decode("<dateTime.iso8601>20261127T06:30:00</dateTime.iso8601>");
    CHECK(dt.is(K::datetime));
    CHECK(dt.as_string() == "20261127T06:30:00");
    CHECK(decode("<base64>aGVsbG8gd29ybGQ=</base64>").as_string() == "hello world");
    CHECK(decode("<nil/>").is(K::nil));
}

TEST_CASE("XML-RPC structs and arrays nest") {
    auto v = decode("<struct><member><name>code</name><value><struct><member><name>geni_code</name>"
                    "<value><int>0</int></value></member></struct></value></member>"
                    "<member><name>value</name><value><array><data><value><string>a</string></value>"
                    "<value><int>2</int></value></data></array></value></member></struct>");
    REQUIRE(v.is(K::structure));
    REQUIRE(v.get("code"));
    CHECK(v.get("code")->get("geni_code")->as_int() == 0);
    REQUIRE(v.get("value")->items().size() == 2);
    CHECK(v.get("value")->items()[0].as_string() == "a");
    CHECK(v.get("value")->items()[1].as_int() == 2);
    CHECK(v.get("missing") == nullptr);
    CHECK(v.text("missing", "fb") == "fb");
}

TEST_CASE("malformed XML-RPC values are refused with what is wrong") {
    CHECK(decode_error("<int>4x</int>").find("not an integer") != std::string::npos);
    CHECK(decode_error("<int>4294967296</int>").find("outside 32 bits") != std::string::npos);
    CHECK(decode_error("<boolean>true</boolean>").find("not 0 or 1") != std::string::npos);
    CHECK(decode_error("<double>abc</double>").find("not a number") != std::string::npos);
    CHECK(decode_error("<base64>a*b=</base64>").find("base64") != std::string::npos);
    CHECK(decode_error("<float>1</float>").find("unknown value type <float>") != std::string::npos);
    CHECK(decode_error("<array><value/></array>").find("without <data>") != std::string::npos);
    CHECK_FALSE(parse_xmlrpc_response("<html>502 Bad Gateway</html>").ok());
    CHECK_FALSE(parse_xmlrpc_response("not xml <").ok());
    CHECK_FALSE(parse_xmlrpc_response("<methodResponse><params/></methodResponse>").ok());
}

TEST_CASE("an XML-RPC fault is read as code and message") {
    auto r = parse_xmlrpc_response(
        "<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>1</int></value>"
        "</member><member><name>faultString</name><value><string>no such method</string></value></member>"
        "</struct></value></fault></methodResponse>");
    REQUIRE(r.ok());
    CHECK(r->is_fault);
    CHECK(r->fault.code == 1);
    CHECK(r->fault.message == "no such method");
    CHECK_FALSE(
        parse_xmlrpc_response("<methodResponse><fault><value><struct/></value></fault></methodResponse>")
            .ok());
}

TEST_CASE("a call round-trips through the encoder and the decoder") {
    std::string bytes("\x00\xff\x10 binary", 10);
    auto params = std::vector<XmlRpcValue>{
        XmlRpcValue::string("urn:publicid:IDN+ilabt.imec.be:p+slice+s & <x>"),
        XmlRpcValue::array({XmlRpcValue::structure(
            {{"geni_type", XmlRpcValue::string("geni_sfa")}, {"geni_version", XmlRpcValue::string("3")}})}),
        XmlRpcValue::integer(-3),
        XmlRpcValue::integer(1LL << 40),
        XmlRpcValue::boolean(true),
        XmlRpcValue::real(0.25),
        XmlRpcValue::datetime("20261127T06:30:00"),
        XmlRpcValue::base64(bytes)};
    std::string call = xmlrpc_call("Allocate", params);
    CHECK(call.find("<methodName>Allocate</methodName>") != std::string::npos);
    CHECK(call.find("&amp; &lt;x&gt;") != std::string::npos);
    CHECK(call.find("<i8>1099511627776</i8>") != std::string::npos);
    // Re-read the params as a response array: the same values come back.
    auto at = call.find("<params>");
    auto end = call.find("</params>");
    REQUIRE(at != std::string::npos);
    std::string values;
    for (std::size_t p = call.find("<param>", at); p != std::string::npos && p < end;
         p = call.find("<param>", p + 1)) {
        auto q = call.find("</param>", p);
        values += call.substr(p + 7, q - p - 7);
    }
    auto v = decode("<array><data>" + values + "</data></array>");
    REQUIRE(v.items().size() == params.size());
    CHECK(v.items()[0].as_string() == "urn:publicid:IDN+ilabt.imec.be:p+slice+s & <x>");
    CHECK(v.items()[1].items()[0].text("geni_type") == "geni_sfa");
    CHECK(v.items()[2].as_int() == -3);
    CHECK(v.items()[3].as_int() == (1LL << 40));
    CHECK(v.items()[4].as_bool());
    CHECK(v.items()[5].as_real() == 0.25);
    CHECK(v.items()[6].as_string() == "20261127T06:30:00");
    CHECK(v.items()[7].as_string() == bytes);
}

TEST_CASE("base64 encodes and decodes every padding length") {
    for (std::string s : {"", "a", "ab", "abc", "abcd"}) {
        auto back = base64_decode(base64_encode(s));
        REQUIRE(back.ok());
        CHECK(*back == s);
    }
    CHECK(base64_encode("ab") == "YWI=");
    CHECK_FALSE(base64_decode("YW=I").ok());
}
