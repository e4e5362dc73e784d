#include "cli/Capabilities.hpp"

#include "core/Log.hpp"
#include "targets/Registry.hpp"

#include <ctime>
#include <mutex>
#include <set>
#include <stdexcept>

namespace ddl::cli {
namespace {

// A loaded spec always names a registered target.
std::unique_ptr<TargetDriver> driver_of(const Spec& spec) {
    auto d = make_target_driver(spec.target);
    if (!d) throw std::logic_error(d.error().message);
    return std::move(*d);
}

} // namespace

bool ranks_run_as_job_step(const Spec& spec) {
    return driver_of(spec)->runs_job_steps();
}

Status check_nodes_over_ssh(const Spec& spec, const std::string& what) {
    if (auto why = driver_of(spec)->why_no_ssh(what)) return Error{*why};
    return {};
}

Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& extra_env) {
    return driver_of(ctx.spec)->job_step_command(ctx, np, argv, extra_env);
}

bool render_needs_public_key(const Spec& spec) {
    return driver_of(spec)->renders_public_key();
}

bool takes_manifest(const Spec& spec) {
    return driver_of(spec)->takes_manifest();
}

std::uint64_t spec_link_bps(const Spec& spec) {
    return spec.link_rate_bps();
}

bool shapes_links(const Spec& spec) {
    return driver_of(spec)->can_reshape_links();
}

std::uint64_t shaped_link_bps(const Spec& spec) {
    return shapes_links(spec) ? spec.link_rate_bps() : 0;
}

Status reshape_links(const Context& ctx, std::uint64_t bps) {
    return driver_of(ctx.spec)->reshape_links(ctx, bps);
}

void restore_links(const Context& ctx) {
    (void)reshape_links(ctx, ctx.spec.link_rate_bps());
}

int expected_gpus(const Spec& spec, const NodeState& node) {
    if (const auto* t = spec.section.get())
        if (auto g = t->expected_gpus(spec, node.name, node.group)) return *g;
    return node.group == "master" ? spec.master.gpus : spec.workers.gpus;
}

std::optional<std::chrono::system_clock::time_point> lease_end(const ClusterState& state) {
    auto d = make_target_driver(state.target);
    if (!d) return std::nullopt;
    return (*d)->lease_end(state);
}

std::string time_left(std::chrono::system_clock::time_point end, std::chrono::system_clock::time_point now) {
    long long m = std::chrono::duration_cast<std::chrono::minutes>(end - now).count();
    if (m < 0) m = 0;
    if (m < 60) return std::to_string(m) + "m";
    if (m < 48 * 60) return std::to_string(m / 60) + "h " + std::to_string(m % 60) + "m";
    return std::to_string(m / 1440) + "d " + std::to_string(m % 1440 / 60) + "h";
}

std::string iso_utc(std::chrono::system_clock::time_point t) {
    const std::time_t s = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string lease_text(std::chrono::system_clock::time_point end, std::chrono::system_clock::time_point now) {
    const std::time_t t = std::chrono::system_clock::to_time_t(end);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    if (end <= now) return std::string(when) + " (ended " + time_left(now, end) + " ago)";
    return std::string(when) + " (in " + time_left(end, now) + ")";
}

void warn_short_lease(const Context& ctx) {
    const int margin = ctx.spec.runtime.lease_warn_minutes;
    if (margin <= 0) return;
    auto end = lease_end(ctx.state);
    if (!end) return;
    const auto now = std::chrono::system_clock::now();
    if (*end - now > std::chrono::minutes(margin)) return;
    static std::mutex mu;
    static std::set<std::string> warned;
    {
        std::lock_guard<std::mutex> lock(mu);
        if (!warned.insert(ctx.state.cluster).second) return;
    }
    log::warn("the " + ctx.state.target + " lease on cluster " + ctx.state.cluster + "'s nodes ends " +
              lease_text(*end, now) + ", within runtime.lease_warn_minutes (" + std::to_string(margin) +
              "): work still running then is lost; redeploy for a fresh lease, or set "
              "runtime.lease_warn_minutes: 0 to silence this");
}

} // namespace ddl::cli
