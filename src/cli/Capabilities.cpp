#include "cli/Capabilities.hpp"

#include "cli/LeaseText.hpp"
#include "cli/Lifetime.hpp"
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
    return driver_of(spec)->job_steps() != nullptr;
}

Status check_nodes_over_ssh(const Spec& spec, const std::string& what) {
    auto driver = driver_of(spec);
    if (const auto* steps = driver->job_steps()) return Error{steps->why_no_ssh(what)};
    return {};
}

Result<std::optional<std::string>> autostop_end(Context& ctx) {
    auto driver = driver_of(ctx.spec);
    if (SelfEnding* ending = driver->self_ending()) return ending->autostop_end(ctx);
    return std::optional<std::string>{};
}

Result<Command> job_step_command(const Context& ctx, int np, const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& extra_env) {
    auto driver = driver_of(ctx.spec);
    const auto* steps = driver->job_steps();
    if (steps == nullptr) return Error{"this target does not start programs as job steps"};
    return steps->job_step_command(ctx, np, argv, extra_env);
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
    return driver_of(spec)->link_shaping() != nullptr;
}

std::uint64_t shaped_link_bps(const Spec& spec) {
    return shapes_links(spec) ? spec.link_rate_bps() : 0;
}

Status reshape_links(const Context& ctx, std::uint64_t bps) {
    auto driver = driver_of(ctx.spec);
    auto* shaping = driver->link_shaping();
    if (shaping == nullptr) return Error{"this target cannot re-shape its links"};
    return shaping->reshape_links(ctx, bps);
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
    const auto* lease = (*d)->lease();
    if (lease == nullptr) return std::nullopt;
    return lease->lease_end(state);
}

void warn_short_lease(const Context& ctx) {
    const int margin = ctx.spec.runtime.lease_warn_minutes;
    if (margin <= 0) return;
    // The testbed's lease on the nodes and the spec's own lifetime: the one that ends first.
    auto end = lease_end(ctx.state);
    auto life = lifetime_end(ctx.state, ctx.spec.life);
    const bool by_lifetime = life && (!end || *life < *end);
    if (by_lifetime) end = life;
    if (!end) return;
    const auto now = std::chrono::system_clock::now();
    if (*end - now > std::chrono::minutes(margin)) return;
    static std::mutex mu;
    static std::set<std::string> warned;
    {
        std::lock_guard<std::mutex> lock(mu);
        if (!warned.insert(ctx.state.cluster).second) return;
    }
    if (by_lifetime)
        log::warn("cluster " + ctx.state.cluster + ": its lifetime ends " + iso_utc(*end) + " (in " +
                  time_left(*end, now) + "), within runtime.lease_warn_minutes (" + std::to_string(margin) +
                  "): `ddl gc --expired` destroys it then, with the work still running; raise lifetime in "
                  "the spec and run `ddl deploy` to keep it longer");
    else
        log::warn("the " + ctx.state.target + " nodes of cluster " + ctx.state.cluster + ": " +
                  lease_text(*end, now) + ", within runtime.lease_warn_minutes (" + std::to_string(margin) +
                  "): work still running then is lost; redeploy for a fresh lease, or set "
                  "runtime.lease_warn_minutes: 0 to silence this");
}

} // namespace ddl::cli
