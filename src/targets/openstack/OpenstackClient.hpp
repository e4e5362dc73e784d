#pragma once
// A small OpenStack API client over libcurl: Keystone v3 authentication (password or application
// credential) with the service catalog, then authenticated GETs on catalog endpoints. Enough for
// ddl's pre-flight checks; the token and secrets live only in memory and in request headers/bodies.
#include "net/Curl.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddl {

// One cloud's connection settings, as clouds.yaml gives them (keys named as there).
struct CloudAuth {
    std::string auth_type = "password"; // password | v3applicationcredential
    std::string auth_url;
    std::string username, user_id, password;
    std::string user_domain_name, user_domain_id;
    std::string project_name, project_id;
    std::string project_domain_name, project_domain_id;
    std::string application_credential_id, application_credential_name, application_credential_secret;
    std::string region_name;
    std::string interface = "public";
    std::string cacert; // PEM file
    bool verify = true;
};

struct ApiResponse {
    long status = 0;
    nlohmann::json body; // null when the body is not JSON
};

class OpenstackClient {
public:
    OpenstackClient(HttpClient& http, CloudAuth auth, std::chrono::milliseconds timeout);

    // POST /v3/auth/tokens. The Error explains 401 (credentials), 404 (wrong auth_url) and others.
    Status authenticate();
    // The catalog's URL of a service type for the cloud's interface and region; nullopt when absent.
    std::optional<std::string> endpoint(const std::string& service_type) const;
    // GET endpoint + path with the token; an Error when no response came.
    Result<ApiResponse> get(const std::string& url);
    const std::string& project_id() const { return m_project_id; }

    // The JSON body Keystone expects for these settings (exposed for tests; holds the secret).
    static nlohmann::json auth_body(const CloudAuth& auth);

private:
    HttpRequest request(const std::string& method, const std::string& url) const;

    HttpClient& m_http;
    CloudAuth m_auth;
    std::chrono::milliseconds m_timeout;
    std::string m_token;
    std::string m_project_id;
    nlohmann::json m_catalog = nlohmann::json::array();
};

// The first few words of an API error body ({"badRequest": {"message": ...}}, {"error": {...}},
// {"NeutronError": {...}}), for messages; empty when there is none.
std::string api_error_message(const nlohmann::json& body);

} // namespace ddl
