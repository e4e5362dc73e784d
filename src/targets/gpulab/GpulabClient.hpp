#pragma once
// The GPULab REST API as ddl uses it: submit a job, get one, list the user's jobs, cancel one and read its
// log. API v4.0 as imec's current client calls it (imecilabt-gpulab-cli 3.11, apiclient.py and __main__.py:
// POST jobs answers the new id as text; GET jobs?user_urn=URN&page_size=N answers {"items": [...]}; the
// page number, `page` from 1, and the `project_urn` filter are imecilabt-gpulab-common's job query,
// `Master.find_jobs3(job_filter, page, page_size)` and `JobFilter3`), and
// v3.0 where api_url names it (the older page below: the id in a JSON object, a bare list). Authentication is
// the user's iLab.t client certificate (PEM with the key); its path is the only thing ddl handles, the key
// never passes through ddl's memory or logs. GpulabApi is the seam that tests replace. Followed: iLab.t
// documentation, "GPULab API" (https://doc.ilabt.imec.be/ilabt/gpulab/api.html), sections "Endpoint and
// authentication" (base https://gpulab.ilabt.imec.be/api/gpulab/v3.0/, TLS client certificate) and "API
// Details" (get all jobs, get one job, create job, cancel job). The page documents no DELETE on jobs: cancel
// is `PUT …/jobs/<id>/state/status`, Content-Type text/plain, body CANCELLED. The page documents no log call;
// imec's own client does (imecilabt-gpulab-cli 3.11, `gpulab-cli log`: GET …/jobs/<id>/log, the log as text,
// 204 when there is none yet).
#include "util/Result.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace ddl {

// What a cancel request found: GPULab took the request, or it knows no such job (404: gone already).
enum class CancelOutcome { Requested, Gone };

class GpulabApi {
public:
    virtual ~GpulabApi() = default;
    // Submits a job request; returns the new job's id.
    virtual Result<std::string> submit(const nlohmann::json& job) = 0;
    // The job as GPULab describes it (uuid, name, request, state{status, resources{...}, ...}).
    virtual Result<nlohmann::json> get(const std::string& id) = 0;
    // The user's jobs (GPULab's job objects), every page.
    virtual Result<nlohmann::json> list() = 0;
    // The jobs of the project with this URN, every member's (others' shown in part), every page; API
    // v3.0 lists only the caller's own jobs: an empty list there.
    virtual Result<nlohmann::json> list_project(const std::string& project_urn) = 0;
    // Asks GPULab to cancel a job (the job may take a while to leave RUNNING); a job GPULab no longer
    // knows (404) is Gone. Any other refusal is an Error with the HTTP status and GPULab's reason.
    virtual Result<CancelOutcome> cancel(const std::string& id) = 0;
    // The job's log (its container's output) as text; "" when GPULab has none (yet).
    virtual Result<std::string> log(const std::string& id) = 0;
};

class GpulabClient : public GpulabApi {
public:
    // api_url: e.g. https://gpulab.ilabt.imec.be/api/gpulab/v3.0; cert: PEM with certificate and key;
    // ca_bundle: CAs to trust instead of the system's (empty: the system's).
    GpulabClient(std::string api_url, std::string cert, std::string ca_bundle = "");
    Result<std::string> submit(const nlohmann::json& job) override;
    Result<nlohmann::json> get(const std::string& id) override;
    Result<nlohmann::json> list() override;
    Result<nlohmann::json> list_project(const std::string& project_urn) override;
    Result<CancelOutcome> cancel(const std::string& id) override;
    Result<std::string> log(const std::string& id) override;

private:
    struct Reply {
        long status = 0;
        std::string body;
    };
    // content_type: of the body; empty: JSON (http_request's default when a body is sent).
    Result<Reply> call(const std::string& method, const std::string& path, const std::string& body = "",
                       const std::string& content_type = "");
    // v4.0's GET jobs?FILTER, page after page until one is empty or brings no job not seen yet.
    Result<nlohmann::json> pages(const std::string& filter);
    std::string m_api, m_cert, m_ca;
};

// The message for a refused request: names the status, the server's reason and the fix (401/403: the
// certificate or the project membership).
std::string gpulab_http_error(const std::string& what, long status, const std::string& body);

} // namespace ddl
