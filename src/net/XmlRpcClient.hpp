#pragma once
// XML-RPC over HTTP(S) on the libcurl layer: one POST of a methodCall (Content-Type text/xml), the
// methodResponse read back. The TLS client certificate is the user's login PEM (certificate and key in
// one file), passed to libcurl by path: its contents never pass through ddl or its logs.
#include "net/XmlRpc.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace ddl {

struct XmlRpcEndpoint {
    std::string url;
    std::string login_pem; // TLS client certificate + key (PEM); empty: none
    std::string ca_file;   // CA bundle to verify the server with; empty: the system's
    std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

class XmlRpcTransport {
public:
    virtual ~XmlRpcTransport() = default;
    // The response (a value or a fault); an Error when none came: no connection, TLS refused, an HTTP
    // status other than 200, a body that is not a methodResponse. The Error names the method and URL.
    virtual Result<XmlRpcResponse> call(const XmlRpcEndpoint& endpoint, const std::string& method,
                                        const std::vector<XmlRpcValue>& params) = 0;
};

class CurlXmlRpcTransport : public XmlRpcTransport {
public:
    Result<XmlRpcResponse> call(const XmlRpcEndpoint& endpoint, const std::string& method,
                                const std::vector<XmlRpcValue>& params) override;
};

} // namespace ddl
