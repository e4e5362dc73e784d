#include "net/XmlRpcClient.hpp"

#include "net/Curl.hpp"

namespace ddl {

Result<XmlRpcResponse> CurlXmlRpcTransport::call(const XmlRpcEndpoint& endpoint, const std::string& method,
                                                 const std::vector<XmlRpcValue>& params) {
    HttpRequest req;
    req.method = "POST";
    req.url = endpoint.url;
    req.headers = {"Content-Type: text/xml", "Accept: text/xml"};
    req.body = xmlrpc_call(method, params);
    req.timeout = endpoint.timeout;
    req.ca_file = endpoint.ca_file;
    req.client_cert = endpoint.login_pem;
    auto resp = http_request(req);
    if (!resp) return Error{method + ": " + resp.error().message};
    if (resp->status != 200) {
        std::string body = resp->body.substr(0, 200);
        for (char& c : body)
            if (c == '\n' || c == '\r') c = ' ';
        return Error{method + " at " + endpoint.url + ": HTTP " + std::to_string(resp->status) +
                     (body.empty() ? std::string() : " (" + body + ")")};
    }
    auto parsed = parse_xmlrpc_response(resp->body);
    if (!parsed)
        return Error{method + " at " + endpoint.url +
                     ": the answer is not XML-RPC: " + parsed.error().message};
    return parsed;
}

} // namespace ddl
