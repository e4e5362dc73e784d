#include "targets/openstack/OpenstackClient.hpp"

#include "util/Strings.hpp"

namespace ddl {
namespace {

std::string without_trailing_slash(std::string s) {
    while (!s.empty() && s.back() == '/')
        s.pop_back();
    return s;
}

// clouds.yaml's auth_url may be the Keystone root or its /v3 endpoint.
std::string tokens_url(const std::string& auth_url) {
    std::string base = without_trailing_slash(auth_url);
    if (base.size() < 3 || base.compare(base.size() - 3, 3, "/v3") != 0) base += "/v3";
    return base + "/auth/tokens";
}

nlohmann::json domain(const std::string& id, const std::string& name) {
    if (!id.empty()) return {{"id", id}};
    return {{"name", name.empty() ? "Default" : name}};
}

} // namespace

OpenstackClient::OpenstackClient(HttpClient& http, CloudAuth auth, std::chrono::milliseconds timeout)
    : m_http(http), m_auth(std::move(auth)), m_timeout(timeout) {}

nlohmann::json OpenstackClient::auth_body(const CloudAuth& a) {
    nlohmann::json identity;
    if (a.auth_type == "v3applicationcredential") {
        nlohmann::json cred{{"secret", a.application_credential_secret}};
        if (!a.application_credential_id.empty()) {
            cred["id"] = a.application_credential_id;
        } else {
            cred["name"] = a.application_credential_name;
            nlohmann::json user =
                a.user_id.empty() ? nlohmann::json{{"name", a.username}} : nlohmann::json{{"id", a.user_id}};
            if (a.user_id.empty()) user["domain"] = domain(a.user_domain_id, a.user_domain_name);
            cred["user"] = user;
        }
        identity = {{"methods", {"application_credential"}}, {"application_credential", cred}};
        // An application credential is bound to its project: no scope may be requested.
        return {{"auth", {{"identity", identity}}}};
    }
    nlohmann::json user{{"password", a.password}};
    if (!a.user_id.empty()) {
        user["id"] = a.user_id;
    } else {
        user["name"] = a.username;
        user["domain"] = domain(a.user_domain_id, a.user_domain_name);
    }
    identity = {{"methods", {"password"}}, {"password", {{"user", user}}}};
    // No project given: no scope, as keystoneauth does. Keystone then scopes the token to the user's
    // default project, or issues an unscoped token, which authenticate() explains.
    if (a.project_id.empty() && a.project_name.empty()) return {{"auth", {{"identity", identity}}}};
    nlohmann::json project;
    if (!a.project_id.empty()) {
        project = {{"id", a.project_id}};
    } else {
        // As keystoneauth does: the project's domain defaults to the user's, then to "Default".
        std::string id = a.project_domain_id, name = a.project_domain_name;
        if (id.empty() && name.empty()) {
            id = a.user_domain_id;
            name = a.user_domain_name;
        }
        project = {{"name", a.project_name}, {"domain", domain(id, name)}};
    }
    return {{"auth", {{"identity", identity}, {"scope", {{"project", project}}}}}};
}

HttpRequest OpenstackClient::request(const std::string& method, const std::string& url) const {
    HttpRequest r;
    r.method = method;
    r.url = url;
    r.timeout = m_timeout;
    r.ca_file = m_auth.cacert;
    r.verify = m_auth.verify;
    r.headers = {"Accept: application/json"};
    if (!m_token.empty()) r.headers.push_back("X-Auth-Token: " + m_token);
    return r;
}

Status OpenstackClient::authenticate() {
    HttpRequest r = request("POST", tokens_url(m_auth.auth_url));
    r.headers.push_back("Content-Type: application/json");
    r.body = auth_body(m_auth).dump();
    auto resp = m_http.send(r);
    if (!resp) {
        std::string m = resp.error().message;
        if (m.find("TLS") != std::string::npos)
            m += "; a private CA goes in clouds.yaml `cacert` (or OS_CACERT)";
        return Error{"Keystone: " + m};
    }
    auto body = nlohmann::json::parse(resp->body, nullptr, false);
    std::string why = body.is_discarded() ? "" : api_error_message(body);
    std::string tail = why.empty() ? "" : " (" + why + ")";
    if (resp->status == 401)
        return Error{"Keystone at " + m_auth.auth_url + " refused the credentials (401 Unauthorized" +
                     (why.empty() ? "" : ": " + why) +
                     "); check the password or application credential of this cloud in clouds.yaml"};
    if (resp->status == 404)
        return Error{"Keystone: " + r.url + " not found (404)" + tail +
                     "; auth_url in clouds.yaml must be the Identity v3 endpoint, e.g. "
                     "https://keystone.example.org:5000/v3"};
    if (resp->status != 201 && resp->status != 200)
        return Error{"Keystone at " + m_auth.auth_url + " answered " + std::to_string(resp->status) + tail};
    auto token = resp->headers.find("x-subject-token");
    if (token == resp->headers.end() || token->second.empty())
        return Error{"Keystone at " + m_auth.auth_url + " issued no token (no X-Subject-Token header)"};
    if (!body.is_object() || !body.contains("token") || !body["token"].is_object())
        return Error{"Keystone at " + m_auth.auth_url + " answered without a token body"};
    const auto& t = body["token"];
    m_token = token->second;
    if (t.contains("project") && t["project"].is_object() && t["project"].contains("id") &&
        t["project"]["id"].is_string())
        m_project_id = t["project"]["id"].get<std::string>();
    if (m_project_id.empty())
        return Error{"Keystone issued an unscoped token: set project_name or project_id for this cloud in "
                     "clouds.yaml"};
    m_catalog = t.contains("catalog") && t["catalog"].is_array() ? t["catalog"] : nlohmann::json::array();
    return {};
}

std::optional<std::string> OpenstackClient::endpoint(const std::string& service_type) const {
    for (const auto& svc : m_catalog) {
        if (!svc.is_object() || svc.value("type", "") != service_type) continue;
        if (!svc.contains("endpoints") || !svc["endpoints"].is_array()) continue;
        for (const auto& ep : svc["endpoints"]) {
            if (!ep.is_object() || ep.value("interface", "") != m_auth.interface) continue;
            std::string region = ep.value("region", ep.value("region_id", ""));
            if (!m_auth.region_name.empty() && region != m_auth.region_name) continue;
            std::string url = ep.value("url", "");
            if (!url.empty()) return without_trailing_slash(url);
        }
    }
    return std::nullopt;
}

Result<ApiResponse> OpenstackClient::get(const std::string& url) {
    return send("GET", url);
}

Result<ApiResponse> OpenstackClient::send(const std::string& method, const std::string& url,
                                          const nlohmann::json& body) {
    HttpRequest r = request(method, url);
    if (!body.is_null()) {
        r.headers.push_back("Content-Type: application/json");
        r.body = body.dump();
    }
    auto resp = m_http.send(r);
    if (!resp) return resp.error();
    ApiResponse out;
    out.status = resp->status;
    out.body = nlohmann::json::parse(resp->body, nullptr, false);
    if (out.body.is_discarded()) out.body = nullptr;
    return out;
}

std::string versioned_endpoint(const std::string& url, const std::string& version) {
    if (ends_with(url, "/" + version)) return url;
    return url + "/" + version;
}

std::string nova_next_link(const nlohmann::json& body, const std::string& key) {
    if (!body.is_object() || !body.contains(key) || !body[key].is_array()) return "";
    for (const auto& link : body[key])
        if (link.is_object() && link.value("rel", "") == "next" && link.contains("href") &&
            link["href"].is_string())
            return link["href"].get<std::string>();
    return "";
}

std::string url_origin(const std::string& url) {
    auto scheme = url.find("://");
    if (scheme == std::string::npos) return "";
    return url.substr(0, url.find('/', scheme + 3));
}

std::string api_error_message(const nlohmann::json& body) {
    if (!body.is_object()) return "";
    // Nova: {"itemNotFound": {"message": ...}}; Keystone: {"error": {"message": ...}};
    // Neutron: {"NeutronError": {"message": ...}}; Glance: plain text or {"message": ...}.
    if (body.contains("message") && body["message"].is_string()) return body["message"].get<std::string>();
    for (auto it = body.begin(); it != body.end(); ++it) {
        if (it->is_object() && it->contains("message") && (*it)["message"].is_string())
            return (*it)["message"].get<std::string>();
    }
    return "";
}

} // namespace ddl
