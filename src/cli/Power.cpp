#include "cli/Power.hpp"

#include "cli/Lifetime.hpp"
#include "targets/Kinds.hpp"

#include <chrono>
#include <filesystem>

namespace ddl::cli {

std::string why_no_stop(TargetDriver& driver, const Context& ctx) {
    if (auto* power = driver.power_control()) return power->why_no_stop(ctx.spec);
    const auto* kind = find_target_kind(ctx.state.target);
    auto refusal = kind ? kind->refuse_stop() : std::nullopt;
    if (!refusal) return "target " + ctx.state.target + " cannot stop its machines";
    // "autostop.action: stop is not available on target X: REASON" -> "target X: REASON"
    const auto at = refusal->message.find("target ");
    return at == std::string::npos ? refusal->message : refusal->message.substr(at);
}

Status set_cluster_power(TargetDriver& driver, Context& ctx, bool on) {
    auto* power = driver.power_control();
    if (power == nullptr) return Error{why_no_stop(driver, ctx)};
    const auto before = ctx.state.nodes;
    auto s = power->set_power(ctx, on);
    // The target gives the nodes from its outputs: what probe and configure learnt of them stays.
    for (auto& n : ctx.state.nodes) {
        for (const auto& old : before) {
            if (old.name != n.name) continue;
            NodeState kept = old;
            kept.address = n.address;
            kept.private_address = n.private_address;
            kept.user = n.user;
            kept.jump = n.jump;
            n = std::move(kept);
        }
    }
    if (!s) {
        (void)ctx.save();
        return s;
    }
    const auto now = std::chrono::system_clock::now();
    if (!on && !ctx.state.stopped()) {
        ctx.state.stopped_at = utc_now_iso();
    } else if (on && ctx.state.stopped()) {
        ctx.state.stopped_s = static_cast<long long>(stopped_seconds(ctx.state, now));
        ctx.state.stopped_at.clear();
    }
    // Booted again: an end the idle clock recorded (autostop.node_credential with action stop) is over, and
    // the clock starts a new spell.
    if (on) {
        std::error_code ec;
        std::filesystem::remove(ctx.cluster_dir() + "/idle.json", ec);
    }
    return ctx.save();
}

} // namespace ddl::cli
