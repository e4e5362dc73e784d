#include "targets/gpulab/GpulabTarget.hpp"

#include "remote/SshKeys.hpp"
#include "targets/gpulab/GpulabJobs.hpp"
#include "targets/gpulab/GpulabStatus.hpp"
#include "util/Files.hpp"
#include "util/LoginPem.hpp"
#include "util/Strings.hpp"
#include "util/UtcTime.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>

namespace ddl {
namespace {

using gpulab::active;
using gpulab::status_of;
using gpulab::waiting;

Result<std::unique_ptr<GpulabApi>> rest_client(const Context& ctx) {
    std::string cert = GpulabTarget::cert_path(ctx.spec);
    const char* ca = std::getenv("GPULAB_CA_BUNDLE");
    return std::unique_ptr<GpulabApi>(
        std::make_unique<GpulabClient>(ctx.spec.target_section<GpulabSpec>().api_url, cert, ca ? ca : ""));
}

// "2026-11-25T20:00:00Z", "…T20:00:00.123456+01:00", "…T20:00:00" (UTC) -> seconds since the epoch.
std::optional<std::time_t> utc_time(const std::string& text) {
    std::tm tm{};
    const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest) return std::nullopt;
    if (*rest == '.')
        for (++rest; *rest >= '0' && *rest <= '9';)
            ++rest;
    std::time_t t = timegm(&tm);
    const std::string zone = rest;
    if (zone.empty() || zone == "Z") return t;
    int h = 0, m = 0;
    if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' &&
        std::sscanf(zone.c_str() + 1, "%2d:%2d", &h, &m) == 2) {
        const std::time_t offset = (static_cast<std::time_t>(h) * 60 + m) * 60;
        return zone[0] == '+' ? t - offset : t + offset;
    }
    return std::nullopt;
}

// Lines of a job's log shown when it ended before it was ready.
constexpr std::size_t k_log_tail_lines = 20;

// One line saying which job ended and how, then the tail of the log GPULab kept for it.
std::string ended_early(GpulabApi& api, const std::string& id, const std::string& node,
                        const std::string& st) {
    std::string msg = "GPULab job " + id + " for node " + node + " ended before it was ready (status " +
                      (st.empty() ? "unknown" : st) + ")";
    auto log = api.log(id);
    if (!log)
        return msg + "; its log could not be read (" + log.error().message + "): `gpulab-cli log " + id + "`";
    auto lines = split(*log, '\n');
    while (!lines.empty() && trim(lines.back()).empty())
        lines.pop_back();
    if (lines.empty()) return msg + "; GPULab kept no log for it";
    const std::size_t from = lines.size() > k_log_tail_lines ? lines.size() - k_log_tail_lines : 0;
    msg += "; the last " + std::to_string(lines.size() - from) + " line(s) of its log:";
    for (std::size_t i = from; i < lines.size(); ++i)
        msg += "\n      | " + lines[i];
    return msg;
}

// The earliest end of the running jobs (each `max_s` after GPULab says it started RUNNING; now where it
// does not say).
std::optional<std::time_t> earliest_end(const std::map<std::string, nlohmann::json>& running,
                                        long long max_s) {
    std::optional<std::time_t> end;
    for (const auto& [node, job] : running) {
        const auto times = job.contains("state") ? job["state"].value("eventTimes", nlohmann::json::object())
                                                 : nlohmann::json::object();
        std::optional<std::time_t> began;
        if (times.contains("RUNNING") && times["RUNNING"].is_string())
            began = utc_time(times["RUNNING"].get<std::string>());
        const std::time_t e = began.value_or(std::time(nullptr)) + static_cast<std::time_t>(max_s);
        if (!end || e < *end) end = e;
    }
    return end;
}

} // namespace

GpulabTarget::GpulabTarget() : GpulabTarget(rest_client, std::chrono::seconds(3)) {}

GpulabTarget::GpulabTarget(ApiFactory factory, std::chrono::milliseconds poll_interval,
                           std::chrono::milliseconds cancel_deadline)
    : m_factory(std::move(factory)), m_poll(poll_interval), m_cancel_deadline(cancel_deadline) {}

std::string GpulabTarget::cert_path(const Spec& spec) {
    const char* env = std::getenv("GPULAB_CERT");
    std::string p = env && *env ? env : spec.target_section<GpulabSpec>().cert;
    if (starts_with(p, "~/")) {
        const char* home = std::getenv("HOME");
        if (home) p = std::string(home) + p.substr(1);
    }
    return p;
}

Result<GpulabTarget::SshRoute> GpulabTarget::ssh_endpoint(const nlohmann::json& job, int container_port,
                                                          const std::string& ssh_via) {
    const auto& res = job["state"].value("resources", nlohmann::json::object());
    SshRoute route;
    for (const auto& pm : res.value("portMappings", nlohmann::json::array())) {
        if (!pm.is_object() || pm.value("containerPort", -1) != container_port) continue;
        int host_port = pm.value("hostPort", 0);
        if (host_port < 1 || host_port > 65535) break;
        std::string host = pm.is_object() && pm.contains("hostIp") && pm["hostIp"].is_string()
                               ? pm["hostIp"].get<std::string>()
                               : std::string();
        // Docker reports a wildcard bind; the job is then reached at the host GPULab names for SSH to it,
        // else at its worker's name.
        auto text = [&](const char* key) {
            return res.contains(key) && res[key].is_string() ? res[key].get<std::string>() : std::string();
        };
        if (host.empty() || host == "0.0.0.0" || host == "::") host = text("sshHost");
        if (host.empty()) host = text("slaveHost");
        if (host.empty()) break;
        route.host = host;
        route.port = host_port;
        break;
    }
    if (route.host.empty())
        return Error{"GPULab reports no host port for the job's sshd (container port " +
                     std::to_string(container_port) + ")"};
    if (ssh_via == "direct") return route;
    const bool named = res.contains("sshProxyHost") && res["sshProxyHost"].is_string() &&
                       !res["sshProxyHost"].get<std::string>().empty();
    if (!named) {
        if (ssh_via == "proxy")
            return Error{"gpulab.ssh_via is proxy, but GPULab's state of the job names no SSH proxy "
                         "(state.resources.sshProxyHost); use ssh_via: direct or auto"};
        return route;
    }
    const std::string user = res.contains("sshProxyUsername") && res["sshProxyUsername"].is_string()
                                 ? res["sshProxyUsername"].get<std::string>()
                                 : std::string();
    const int port = res.contains("sshProxyPort") && res["sshProxyPort"].is_number_integer()
                         ? res["sshProxyPort"].get<int>()
                         : 22;
    if (user.empty() || port < 1 || port > 65535)
        return Error{"GPULab's state of the job names an SSH proxy without a user or with a bad port "
                     "(sshProxyUsername, sshProxyPort)"};
    const std::string proxy_host = res["sshProxyHost"].get<std::string>();
    route.jump = user + "@" +
                 (proxy_host.find(':') != std::string::npos ? "[" + proxy_host + "]" : proxy_host) + ":" +
                 std::to_string(port);
    return route;
}

// One job request per file, in submit order; the cluster's public key is filled in at deploy.
Result<RenderedFiles> GpulabTarget::render(const Spec& s, const RenderInputs&) const {
    RenderedFiles f;
    auto jobs = render_gpulab_jobs(s, k_gpulab_key_placeholder);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        f["gpulab/" + jobs[i].node + ".json"] = json_file(jobs[i].request);
    return f;
}

Status GpulabTarget::preflight(const Context& ctx) {
    std::string cert = cert_path(ctx.spec);
    if (cert.empty())
        return Error{
            "GPULab needs your iLab.t client certificate: set GPULAB_CERT (or gpulab.cert) to the PEM file "
            "holding the certificate and its decrypted key"};
    if (auto ok = check_login_pem(cert, "the GPULab client certificate"); !ok) return ok;
    // What imec's CLI checks before any call (cert_processor.py, apiclient.py): the URN and e-mail in the
    // certificate, its validity, and that it is not of the legacy wall2 authority.
    auto who = login_pem_identity(cert);
    if (!who) return Error{"the GPULab client certificate: " + who.error().message};
    if (auto legacy = gpulab_legacy_login(who->urn, cert); !legacy.empty()) return Error{legacy};
    const std::time_t now = std::time(nullptr);
    if (who->not_after != 0 && who->not_after < now)
        return Error{"the certificate in your login PEM " + cert + " expired at " + utc_text(who->not_after) +
                     ": download a current one from your account page (https://account.ilabt.imec.be/)"};
    if (who->not_before > now)
        return Error{"the certificate in your login PEM " + cert + " is not valid before " +
                     utc_text(who->not_before) + ": check this machine's clock"};
    return fair_use(ctx);
}

Status GpulabTarget::fair_use(const Context& ctx) {
    const auto& g = ctx.spec.target_section<GpulabSpec>();
    if (g.project_share && ctx.spec.services.nfs)
        return Error{"gpulab.project_share mounts the project's storage at services.nfs_mount (" +
                     ctx.spec.services.nfs_mount +
                     "), where the NFS service would mount over it: set "
                     "services: {nfs: {enabled: false}} (the project share is the cluster's shared folder)"};
    // The jobs as provision submits them: the owner's project URN takes the certificate's authority.
    GpulabOwner me;
    if (auto who = login_pem_identity(cert_path(ctx.spec))) me = {who->urn, who->email};
    const auto rendered = render_gpulab_jobs(ctx.spec, k_gpulab_key_placeholder, me);
    const auto needed = static_cast<int>(rendered.size());
    std::set<std::string> own;
    for (const auto& job : rendered)
        own.insert(job.request.value("name", std::string()));
    // A string field of a listed job ("" when absent or not a string: others' jobs are shown in part).
    auto text = [](const nlohmann::json& j, const char* key) {
        return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                                      : std::string();
    };
    if (needed > k_jobs_per_user)
        return Error{"this cluster needs " + std::to_string(needed) +
                     " GPULab jobs, more than SLICES AI's "
                     "fair-use limit of " +
                     std::to_string(k_jobs_per_user) +
                     " simultaneous jobs per user: ask for fewer nodes, or use layout: one-job"};
    auto api = m_factory(ctx);
    if (!api) return api.error();
    auto jobs = (*api)->list();
    if (!jobs) return Error{"GPULab's fair-use check could not list your jobs: " + jobs.error().message};
    std::vector<std::string> others;
    for (const auto& job : *jobs)
        if (job.is_object() && active(status_of(job)) && own.count(text(job, "name")) == 0)
            others.push_back(text(job, "name"));
    if (static_cast<int>(others.size()) + needed > k_jobs_per_user)
        return Error{"SLICES AI's fair use allows " + std::to_string(k_jobs_per_user) +
                     " simultaneous jobs per user (\"Maximum simultaneous jobs\", "
                     "https://doc.slices-ri.eu/BasicServices/AI/fair-use-policy.html); you have " +
                     std::to_string(others.size()) + " queued or running and this cluster needs " +
                     std::to_string(needed) +
                     ": end some first (`gpulab-cli jobs`, `ddl destroy`), or ask SLICES "
                     "for a higher limit"};
    // The project's: every member's live jobs but this cluster's own (the caller's jobs of its names;
    // another member may have a cluster of the same name).
    const std::string project =
        text(rendered.front().request.value("owner", nlohmann::json::object()), "projectUrn");
    auto in_project = (*api)->list_project(project);
    if (!in_project)
        return Error{"GPULab's fair-use check could not list project " + g.project +
                     "'s jobs: " + in_project.error().message};
    int project_jobs = 0;
    for (const auto& job : *in_project) {
        if (!job.is_object() || !active(status_of(job))) continue;
        const auto owner = job.value("owner", nlohmann::json::object());
        const std::string user = text(owner, "userUrn");
        if (own.count(text(job, "name")) != 0 && (user.empty() || user == me.user_urn)) continue;
        const std::string of_project = text(owner, "projectUrn");
        if (of_project.empty() || of_project == project) ++project_jobs;
    }
    if (project_jobs + needed <= k_jobs_per_project) return {};
    return Error{
        "SLICES AI's fair use allows " + std::to_string(k_jobs_per_project) +
        " simultaneous jobs per project (\"Maximum simultaneous jobs\", "
        "https://doc.slices-ri.eu/BasicServices/AI/fair-use-policy.html); project " +
        g.project + " has " + std::to_string(project_jobs) +
        " queued or running (its members' together) and this cluster needs " + std::to_string(needed) +
        ": wait for some to end, ask for fewer nodes (or layout: one-job), or ask SLICES for a higher "
        "limit"};
}

Status GpulabTarget::plan(const PlanRequest& req, DeployPlan& out) {
    // Without a certificate the plan is the node diff alone (deploy's pre-flight asks for one).
    if (!cert_path(req.ctx.spec).empty())
        if (auto s = fair_use(req.ctx); !s) return s;
    return TargetDriver::plan(req, out);
}

Status GpulabTarget::provision(Context& ctx) {
    const auto& g = ctx.spec.target_section<GpulabSpec>();
    auto api = m_factory(ctx);
    if (!api) return api.error();
    auto pub = ensure_keypair(ctx.key_path(), "ddl-" + ctx.spec.name);
    if (!pub) return pub.error();
    auto key = read_file(ctx.key_path() + ".pub");
    if (!key) return key.error();
    GpulabOwner owner;
    if (auto who = login_pem_identity(cert_path(ctx.spec))) owner = {who->urn, who->email};
    auto jobs = render_gpulab_jobs(ctx.spec, trim(*key), owner);
    auto& td = ctx.state.target_data;
    if (!td.contains("jobs") || !td["jobs"].is_object()) td["jobs"] = nlohmann::json::object();

    // Submit what has no job yet; each id is saved at once so destroy can cancel it whatever happens next.
    for (const auto& job : jobs) {
        if (td["jobs"].contains(job.node)) {
            auto existing = (*api)->get(td["jobs"][job.node].get<std::string>());
            if (existing && waiting(status_of(*existing))) continue;
            if (existing && status_of(*existing) == "RUNNING") continue;
            // Ended or unknown: a fresh job replaces it.
        }
        nlohmann::json request = job.request;
        request["description"] =
            request.value("description", std::string()) + state_marker(ctx.cluster_dir());
        auto id = (*api)->submit(request);
        if (!id) return id.error();
        td["jobs"][job.node] = *id;
        if (auto s = ctx.save(); !s) return s;
        ctx.progress.node(job.node, "job " + *id + " submitted (" + std::to_string(job.gpus) + " GPU(s))");
    }

    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(g.wait_minutes);
    std::map<std::string, nlohmann::json> running;
    while (true) {
        std::vector<std::string> pending;
        for (const auto& job : jobs) {
            if (running.count(job.node)) continue;
            const std::string id = td["jobs"][job.node];
            auto j = (*api)->get(id);
            if (!j) return j.error();
            std::string st = status_of(*j);
            if (st == "RUNNING") {
                running[job.node] = *j;
                ctx.progress.node(job.node, "job " + id + " running");
            } else if (waiting(st)) {
                std::string why;
                auto expl = (*j)["state"]
                                .value("scheduling", nlohmann::json::object())
                                .value("queuedExplanations", nlohmann::json::array());
                if (!expl.empty() && expl[0].is_string()) why = ": " + expl[0].get<std::string>();
                pending.push_back(job.node + " (job " + id + ", " + (st.empty() ? "no status" : st) + why +
                                  ")");
            } else {
                return Error{ended_early(**api, id, job.node, st) + "\n      `ddl destroy " + ctx.spec.name +
                             "` cancels the cluster's other jobs"};
            }
        }
        if (pending.empty()) break;
        if (std::chrono::steady_clock::now() >= deadline)
            return Error{
                "after " + std::to_string(g.wait_minutes) +
                " minute(s) these GPULab jobs are still not running: " + join(pending, "; ") +
                "\n      GPULab has no free GPUs of this kind or your project's quota is used up: raise "
                "gpulab.wait_minutes, ask for fewer GPUs, or try later (`ddl destroy " +
                ctx.spec.name + "` cancels the queued jobs)"};
        if (ctx.stop_requested()) return Error{"interrupted while waiting for GPULab jobs"};
        std::this_thread::sleep_for(m_poll);
    }

    // The jobs' lease: GPULab stops each one maxDuration after it started running.
    if (auto max = duration_seconds(gpulab_max_duration(ctx.spec)))
        if (auto end = earliest_end(running, *max)) td["lease_end"] = utc_text(*end);
    ctx.state.nodes.clear();
    for (const auto& job : jobs) {
        auto ep = ssh_endpoint(running[job.node], g.ssh_port, g.ssh_via);
        if (!ep)
            return Error{"job " + td["jobs"][job.node].get<std::string>() + " (" + job.node +
                         "): " + ep.error().message};
        NodeState n;
        n.name = job.node;
        n.group = job.node == "master" ? "master" : "workers";
        n.address = ep->host;
        n.port = ep->port;
        n.user = "root";
        if (!ep->jump.empty()) {
            // GPULab's proxy takes the user's login key (gpulab-cli writes IdentityFile <login PEM> for it).
            n.jump = ep->jump;
            n.jump_key = cert_path(ctx.spec);
            ctx.progress.node(job.node, "reached through GPULab's SSH proxy " + ep->jump);
        }
        ctx.state.nodes.push_back(n);
    }
    return {};
}

std::optional<long long> GpulabTarget::duration_seconds(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
        ++i;
    if (i == 0 || i > 6) return std::nullopt;
    const long long n = std::stoll(text.substr(0, i));
    std::string unit = trim(text.substr(i));
    static const std::map<std::string, long long> k_units{
        {"m", 60},    {"minute", 60}, {"minutes", 60}, {"h", 3600},   {"hour", 3600},   {"hours", 3600},
        {"d", 86400}, {"day", 86400}, {"days", 86400}, {"w", 604800}, {"week", 604800}, {"weeks", 604800}};
    auto u = k_units.find(unit);
    if (u == k_units.end()) return std::nullopt;
    return n * u->second;
}

std::optional<std::chrono::system_clock::time_point>
GpulabTarget::lease_end(const ClusterState& state) const {
    const auto& td = state.target_data;
    if (!td.is_object() || !td.contains("lease_end") || !td["lease_end"].is_string() || state.nodes.empty())
        return std::nullopt;
    auto t = utc_time(td["lease_end"].get<std::string>());
    if (!t) return std::nullopt;
    return std::chrono::system_clock::from_time_t(*t);
}

Status GpulabTarget::destroy(Context& ctx) {
    auto api = m_factory(ctx);
    if (!api) return api.error();
    auto& td = ctx.state.target_data;
    std::vector<std::string> ids;
    if (td.contains("jobs") && td["jobs"].is_object())
        for (const auto& [node, id] : td["jobs"].items())
            ids.push_back(id.get<std::string>());
    // Jobs named for the cluster whose id never reached the state (ddl stopped right after submitting).
    const std::string prefix = "ddl-" + ctx.spec.name + "-";
    if (auto all = (*api)->list(); all) {
        for (const auto& j : *all) {
            if (!j.is_object() || !starts_with(j.value("name", std::string()), prefix)) continue;
            std::string id = j.value("uuid", j.value("id", std::string()));
            std::string st = status_of(j);
            if (!id.empty() && (waiting(st) || st == "RUNNING") &&
                std::find(ids.begin(), ids.end(), id) == ids.end())
                ids.push_back(id);
        }
    } else if (ids.empty()) {
        return all.error();
    }
    // GPULab's documentation ("GPULab API", https://doc.ilabt.imec.be/ilabt/gpulab/api.html, "Cancel job")
    // does not say what cancelling a job that has ended answers; a refused cancel is therefore checked
    // against the job's own state (GET …/jobs/<id>) rather than read from the refusal's wording.
    std::vector<std::string> failed, requested;
    for (const auto& id : ids) {
        auto c = (*api)->cancel(id);
        if (c && *c == CancelOutcome::Gone) {
            ctx.progress.note("    GPULab job " + id + " is gone already");
        } else if (c) {
            requested.push_back(id);
            ctx.progress.note("    GPULab job " + id + ": cancel requested");
        } else if (auto j = (*api)->get(id); j && !active(status_of(*j))) {
            ctx.progress.note("    GPULab job " + id + " had ended already (" + status_of(*j) + ")");
        } else {
            failed.push_back(c.error().message);
        }
    }
    if (!failed.empty()) return Error{join(failed, "; ")};
    if (auto s = wait_until_stopped(ctx, **api, requested); !s) return s;
    td.erase("jobs");
    td.erase("lease_end");
    return {};
}

Status GpulabTarget::wait_until_stopped(Context& ctx, GpulabApi& api,
                                        const std::vector<std::string>& ids) const {
    using std::chrono::milliseconds;
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + m_cancel_deadline;
    // Short pauses first (a cancelled job usually stops within seconds), doubling up to the poll interval.
    milliseconds pause = std::min(m_poll, milliseconds(250));
    std::vector<std::string> left = ids;
    std::map<std::string, std::string> seen; // id -> last status, or why it could not be read
    while (true) {
        std::vector<std::string> still;
        for (const auto& id : left) {
            auto j = api.get(id);
            if (!j) {
                // Read again next round: one failed read says nothing about the job.
                seen[id] = "its state could not be read: " + j.error().message;
                still.push_back(id);
                continue;
            }
            std::string st = status_of(*j);
            if (active(st)) {
                seen[id] = st.empty() ? "no status" : st;
                still.push_back(id);
            } else {
                ctx.progress.note("    GPULab job " + id + " " + st);
            }
        }
        left = std::move(still);
        if (left.empty()) return {};
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            std::vector<std::string> named;
            named.reserve(left.size());
            for (const auto& id : left)
                named.push_back(id + " (" + seen[id] + ")");
            auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
            return Error{"after " + std::to_string(secs) +
                         " s these cancelled GPULab jobs are still running: " + join(named, "; ") +
                         "\n      they stay in the cluster's state: run `ddl destroy " + ctx.spec.name +
                         "` again later to cancel and check them once more"};
        }
        if (ctx.stop_requested())
            return Error{"interrupted while waiting for cancelled GPULab jobs to stop: " + join(left, ", ")};
        std::this_thread::sleep_for(
            std::min<milliseconds>(pause, std::chrono::duration_cast<milliseconds>(deadline - now)));
        pause = std::min(m_poll, pause * 2);
    }
}

} // namespace ddl
