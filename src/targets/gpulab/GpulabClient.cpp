#include "targets/gpulab/GpulabClient.hpp"

#include "core/Log.hpp"
#include "net/Curl.hpp"
#include "util/LoginPem.hpp"
#include "util/Url.hpp"

#include <set>

namespace ddl {

namespace {

// GPULab answers errors as JSON ({"detail": ...} or {"message": ...}) or plain text.
std::string reason(const std::string& body) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_object()) {
        for (const char* k : {"detail", "message", "error"})
            if (j.contains(k)) return j[k].is_string() ? j[k].get<std::string>() : j[k].dump();
    }
    std::string t = body.substr(0, 300);
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
        t.pop_back();
    return t;
}

} // namespace

std::string gpulab_http_error(const std::string& what, long status, const std::string& body) {
    std::string msg = what + ": GPULab answered HTTP " + std::to_string(status);
    if (auto r = reason(body); !r.empty()) msg += " (" + r + ")";
    if (status == 401 || status == 403)
        msg +=
            "; the client certificate was not accepted for this: use your current iLab.t login certificate "
            "(PEM with its key, from GPULAB_CERT or gpulab.cert) and check that your account is a member of "
            "the spec's gpulab.project";
    return msg;
}

GpulabClient::GpulabClient(std::string api_url, std::string cert, std::string ca_bundle)
    : m_api(std::move(api_url)), m_cert(std::move(cert)), m_ca(std::move(ca_bundle)) {
    while (!m_api.empty() && m_api.back() == '/')
        m_api.pop_back();
}

Result<GpulabClient::Reply> GpulabClient::call(const std::string& method, const std::string& path,
                                               const std::string& body, const std::string& content_type) {
    HttpRequest req;
    req.method = method;
    req.url = m_api + path;
    req.body = body;
    req.headers = {"Accept: application/json"};
    if (!content_type.empty()) req.headers.push_back("Content-Type: " + content_type);
    req.client_cert = m_cert;
    req.ca_file = m_ca;
    log::debug("gpulab: " + method + " " + req.url);
    auto r = http_request(req);
    if (!r) {
        std::string m = r.error().message;
        // A refused client certificate shows up as a failed handshake, not as an HTTP status.
        if (m.find("SSL") != std::string::npos || m.find("certificate") != std::string::npos ||
            m.find("peer") != std::string::npos || m.find("handshake") != std::string::npos)
            m +=
                "; the TLS connection failed: check that the client certificate (GPULAB_CERT or gpulab.cert) "
                "is your current iLab.t certificate with its key, and that gpulab.api_url is right";
        return Error{"GPULab " + method + " " + path + ": " + m};
    }
    return Reply{r->status, r->body};
}

Result<std::string> GpulabClient::submit(const nlohmann::json& job) {
    auto r = call("POST", "/jobs", job.dump());
    if (!r) return r.error();
    if (r->status < 200 || r->status >= 300)
        return Error{
            gpulab_http_error("submitting job " + job.value("name", std::string("?")), r->status, r->body)};
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_object()) {
        for (const char* k : {"uuid", "id"})
            if (j.contains(k) && j[k].is_string() && !j[k].get<std::string>().empty())
                return j[k].get<std::string>();
    }
    // v4.0: the id itself as the body (the CLI uses r.text as it is), or as a JSON string.
    std::string text = j.is_string() ? j.get<std::string>() : r->body;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
        text.pop_back();
    if (!text.empty() && text.size() <= 64 &&
        text.find_first_not_of("0123456789abcdefABCDEF-") == std::string::npos)
        return text;
    return Error{"submitting job " + job.value("name", std::string("?")) +
                 ": GPULab's answer names no job id: " + r->body.substr(0, 200)};
}

Result<nlohmann::json> GpulabClient::get(const std::string& id) {
    auto r = call("GET", "/jobs/" + id);
    if (!r) return r.error();
    if (r->status != 200) return Error{gpulab_http_error("reading job " + id, r->status, r->body)};
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (!j.is_object()) return Error{"reading job " + id + ": GPULab's answer is not a job object"};
    return j;
}

Result<nlohmann::json> GpulabClient::list() {
    if (m_api.find("/v3.") != std::string::npos) {
        // "GPULab API", "Get all jobs": the page's example names these parameters; the server's defaults
        // for absent ones are not documented, so every one is sent (queued and running jobs of the last
        // 30 days; finished ones are not ddl's to cancel). The answer is one list.
        auto r = call("GET", "/jobs?max_hours=720&max_count=500&pending=true&running=true&finished=false");
        if (!r) return r.error();
        if (r->status != 200) return Error{gpulab_http_error("listing jobs", r->status, r->body)};
        auto j = nlohmann::json::parse(r->body, nullptr, false);
        if (j.is_object() && j.contains("items")) j = j["items"];
        if (!j.is_array()) return Error{"listing jobs: GPULab's answer is not a list of jobs"};
        return j;
    }
    // v4.0 (`gpulab-cli jobs -u`): the user's jobs by the certificate's URN.
    if (m_cert.empty())
        return Error{"listing jobs needs your iLab.t client certificate: set GPULAB_CERT (or gpulab.cert)"};
    auto who = login_pem_identity(m_cert);
    if (!who) return Error{"listing jobs: " + who.error().message};
    return pages("user_urn=" + percent_encode(who->urn));
}

Result<nlohmann::json> GpulabClient::list_project(const std::string& project_urn) {
    if (m_api.find("/v3.") != std::string::npos) return nlohmann::json::array();
    return pages("project_urn=" + percent_encode(project_urn));
}

Result<nlohmann::json> GpulabClient::pages(const std::string& filter) {
    // 200 a page, the most `gpulab-cli jobs -c` takes; a server may give fewer, so the end is an empty
    // page (or one of jobs already seen, should it not page at all), not a short one.
    constexpr int k_page_size = 200, k_max_pages = 50;
    nlohmann::json all = nlohmann::json::array();
    std::set<std::string> seen;
    for (int page = 1; page <= k_max_pages; ++page) {
        auto r = call("GET", "/jobs?" + filter + "&page_size=" + std::to_string(k_page_size) +
                                 "&page=" + std::to_string(page));
        if (!r) return r.error();
        if (r->status != 200) return Error{gpulab_http_error("listing jobs", r->status, r->body)};
        auto j = nlohmann::json::parse(r->body, nullptr, false);
        if (j.is_object() && j.contains("items")) j = j["items"];
        if (!j.is_array()) return Error{"listing jobs: GPULab's answer is not a list of jobs"};
        // Jobs without a uuid cannot be told apart from one page to the next: such a page is the last.
        std::size_t fresh = 0, named = 0;
        for (auto& job : j) {
            const bool has_id = job.is_object() && job.contains("uuid") && job["uuid"].is_string();
            if (has_id) {
                ++named;
                if (!seen.insert(job["uuid"].get<std::string>()).second) continue;
            }
            all.push_back(std::move(job));
            ++fresh;
        }
        if (fresh == 0 || named == 0) break;
    }
    return all;
}

// "GPULab API" (https://doc.ilabt.imec.be/ilabt/gpulab/api.html), section "API Details", "Cancel job":
// `curl -X PUT -H "Content-Type: text/plain" --data 'CANCELLED' …/jobs/<id>/state/status` (the v2 API used
// …/jobs/<id>/state). The page shows no DELETE on jobs, and says nothing of the answer's body or of what a
// job that already ended answers: 2xx is taken as accepted, 404 as gone, and anything else is reported
// with its status and body (the caller may then read the job to see whether it had ended anyway).
Result<CancelOutcome> GpulabClient::cancel(const std::string& id) {
    auto r = call("PUT", "/jobs/" + id + "/state/status", "CANCELLED", "text/plain");
    if (!r) return r.error();
    if (r->status >= 200 && r->status < 300) return CancelOutcome::Requested;
    if (r->status == 404) return CancelOutcome::Gone;
    return Error{gpulab_http_error("cancelling job " + id, r->status, r->body)};
}

// imecilabt-gpulab-cli 3.11 (PyPI), `gpulab-cli log JOB`: GET …/jobs/<id>/log answers the log as text
// (200, or 206 for a Range), 204 when there is none yet.
Result<std::string> GpulabClient::log(const std::string& id) {
    auto r = call("GET", "/jobs/" + id + "/log");
    if (!r) return r.error();
    if (r->status == 204) return std::string();
    if (r->status != 200 && r->status != 206)
        return Error{gpulab_http_error("reading the log of job " + id, r->status, r->body)};
    return r->body;
}

} // namespace ddl
