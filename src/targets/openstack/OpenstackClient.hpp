#pragma once
// A small OpenStack API client over libcurl: Keystone v3 authentication (password or application
// credential) with the service catalog, then authenticated requests on catalog endpoints. Enough for
// ddl's pre-flight checks and for `ddl gc --spec` (listing and deleting what ddl created); the token and
// secrets live only in memory and in request headers/bodies.
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
    // Any method with the token (DELETE, PUT with a JSON body unless `body` is null); an Error when no
    // response came.
    Result<ApiResponse> send(const std::string& method, const std::string& url,
                             const nlohmann::json& body = nullptr);
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

// The catalog URL with the API version appended unless it already ends in it (Glance and Neutron list
// their service root: "/v2", "/v2.0").
std::string versioned_endpoint(const std::string& url, const std::string& version);
// Nova's next page: the href of the "next" entry of `key` ("flavors_links", "servers_links"), "" on the last.
std::string nova_next_link(const nlohmann::json& body, const std::string& key);
// "https://host:port" of a URL: a token goes only where the first page came from.
std::string url_origin(const std::string& url);

// The first few words of an API error body ({"badRequest": {"message": ...}}, {"error": {...}},
// {"NeutronError": {...}}), for messages; empty when there is none.
std::string api_error_message(const nlohmann::json& body);

} // namespace ddl
