#pragma once
// The GPULab REST API (v3.0) as ddl uses it: submit a job, get one, list the user's jobs, cancel one and
// read its log. Authentication is the user's iLab.t client certificate (PEM with the key); its path is
// the only thing ddl handles, the key never passes through ddl's memory or logs. GpulabApi is the seam
// that tests replace.
#include "util/Result.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace ddl {

class GpulabApi {
public:
    virtual ~GpulabApi() = default;
    // Submits a job request; returns the new job's id.
    virtual Result<std::string> submit(const nlohmann::json& job) = 0;
    // The job as GPULab describes it (uuid, name, request, state{status, resources{...}, ...}).
    virtual Result<nlohmann::json> get(const std::string& id) = 0;
    // The user's jobs (GPULab's job objects).
    virtual Result<nlohmann::json> list() = 0;
    // Cancels a job; a job that is gone already counts as cancelled.
    virtual Status cancel(const std::string& id) = 0;
    // The job's log (stdout and stderr of its command), possibly empty.
    virtual Result<std::string> logs(const std::string& id) = 0;
};

class GpulabClient : public GpulabApi {
public:
    // api_url: e.g. https://gpulab.ilabt.imec.be/api/gpulab/v3.0; cert: PEM with certificate and key;
    // ca_bundle: CAs to trust instead of the system's (empty: the system's).
    GpulabClient(std::string api_url, std::string cert, std::string ca_bundle = "");
    Result<std::string> submit(const nlohmann::json& job) override;
    Result<nlohmann::json> get(const std::string& id) override;
    Result<nlohmann::json> list() override;
    Status cancel(const std::string& id) override;
    Result<std::string> logs(const std::string& id) override;

private:
    struct Reply {
        long status = 0;
        std::string body;
    };
    Result<Reply> call(const std::string& method, const std::string& path, const std::string& body = "");
    std::string m_api, m_cert, m_ca;
};

// The message for a refused request: names the status, the server's reason and the fix (401/403: the
// certificate or the project membership).
std::string gpulab_http_error(const std::string& what, long status, const std::string& body);

} // namespace ddl
