// `ddl gc --spec FILE` on GPULab from the service's side: every job ddl submits is named
// ddl-<cluster>-<node> and its description starts "ddl cluster <cluster>," and ends with the cluster's state
// folder, so the user's job list ("GPULab API", "Get all jobs") finds a cluster whose state folder is gone;
// its age comes from the job's own event times (state.eventTimes), its end (`gc --expired`) from when GPULab
// stops the first of its jobs (request.scheduling.maxDuration after eventTimes.RUNNING); the documented
// cancel removes it.
#include "provision/FoundClusters.hpp"
#include "targets/gpulab/GpulabClient.hpp"
#include "targets/gpulab/GpulabStatus.hpp"
#include "targets/gpulab/GpulabTarget.hpp"
#include "util/Strings.hpp"
#include "util/UtcTime.hpp"

#include <cstdlib>
#include <ctime>
#include <map>

namespace ddl {
namespace {

// The job's earliest event time (when GPULab first queued it); nullopt when it reports none.
std::optional<std::time_t> created_at(const nlohmann::json& job) {
    const auto times =
        job.value("state", nlohmann::json::object()).value("eventTimes", nlohmann::json::object());
    std::optional<std::time_t> first;
    for (const auto& item : times.items()) {
        const auto& when = item.value();
        if (!when.is_string()) continue;
        if (auto t = utc_seconds(when.get<std::string>()); t && (!first || *t < *first)) first = t;
    }
    return first;
}

std::unique_ptr<GpulabClient> client(const std::string& api_url, const std::string& cert) {
    const char* ca = std::getenv("GPULAB_CA_BUNDLE");
    return std::make_unique<GpulabClient>(api_url, cert, ca ? ca : "");
}

} // namespace

std::optional<std::time_t> GpulabTarget::job_end(const nlohmann::json& job) {
    if (!job.is_object()) return std::nullopt;
    const auto request = job.value("request", nlohmann::json::object());
    const auto scheduling = request.is_object() ? request.value("scheduling", nlohmann::json::object())
                                                : nlohmann::json::object();
    const auto state = job.value("state", nlohmann::json::object());
    const auto times =
        state.is_object() ? state.value("eventTimes", nlohmann::json::object()) : nlohmann::json::object();
    if (!scheduling.is_object() || !scheduling.contains("maxDuration") ||
        !scheduling["maxDuration"].is_string() || !times.is_object() || !times.contains("RUNNING") ||
        !times["RUNNING"].is_string())
        return std::nullopt;
    auto began = utc_seconds(times["RUNNING"].get<std::string>());
    auto max = duration_seconds(scheduling["maxDuration"].get<std::string>());
    if (!began || !max) return std::nullopt;
    return *began + static_cast<std::time_t>(*max);
}

Result<std::vector<FoundCluster>> GpulabTarget::find_clusters(const Spec* given,
                                                              ProcessRunner& /*proc*/) const {
    const Spec& spec = *given;
    const std::string cert = cert_path(spec);
    if (cert.empty())
        return Error{"GPULab needs your iLab.t client certificate: set GPULAB_CERT (or gpulab.cert in " +
                     spec.source_file + ")"};
    const std::string api_url = spec.target_section<GpulabSpec>().api_url;
    auto jobs = client(api_url, cert)->list();
    if (!jobs) return jobs.error();
    const std::string lead = "ddl cluster ";
    const std::string marker = state_marker("");
    std::map<std::string, FoundCluster> by_cluster;
    const std::time_t now = std::time(nullptr);
    for (const auto& job : *jobs) {
        if (!job.is_object() || !gpulab::active(gpulab::status_of(job))) continue;
        const std::string description = job.value("description", std::string());
        const auto comma = description.find(',');
        const auto at = description.rfind(marker);
        if (!starts_with(description, lead) || comma == std::string::npos || at == std::string::npos)
            continue;
        const std::string cluster = description.substr(lead.size(), comma - lead.size());
        if (!starts_with(job.value("name", std::string()), "ddl-" + cluster + "-")) continue;
        std::string id = job.value("uuid", std::string());
        if (id.empty()) id = job.value("id", std::string());
        if (id.empty()) continue;
        auto& found = by_cluster[cluster];
        found.cluster = cluster;
        found.state_dir = description.substr(at + marker.size());
        const auto created = created_at(job);
        const long long age = created ? static_cast<long long>(now - *created) : 0;
        found.age_s = found.record.contains("jobs") ? std::min(found.age_s, age) : age;
        // The cluster ends with the first of its jobs that GPULab stops.
        if (auto end = job_end(job)) {
            const std::string ends = utc_text(*end);
            if (found.expires.empty() || ends < found.expires) found.expires = ends;
        }
        found.record["api_url"] = api_url;
        found.record["cert"] = cert;
        found.record["jobs"].push_back(id);
        found.detail = "GPULab job(s) " + join(found.record["jobs"].get<std::vector<std::string>>(), ", ") +
                       " " + gpulab::status_of(job);
    }
    std::vector<FoundCluster> out;
    out.reserve(by_cluster.size());
    for (auto& [name, f] : by_cluster)
        out.push_back(std::move(f));
    return out;
}

Status GpulabTarget::destroy_found(const FoundCluster& found, ProcessRunner& /*proc*/, Progress& progress) {
    const std::string api_url = found.record.value("api_url", std::string());
    const std::string cert = found.record.value("cert", std::string());
    if (api_url.empty() || cert.empty() || !found.record.contains("jobs"))
        return Error{"the record of " + found.cluster + " names no GPULab endpoint, certificate or jobs"};
    auto api = client(api_url, cert);
    std::vector<std::string> failed;
    for (const auto& j : found.record["jobs"]) {
        const std::string id = j.get<std::string>();
        auto r = api->cancel(id);
        if (!r) {
            failed.push_back(r.error().message);
            continue;
        }
        progress.note("cancelled GPULab job " + id + " of cluster " + found.cluster);
    }
    if (!failed.empty()) return Error{join(failed, "; ")};
    return {};
}

} // namespace ddl
