#include "cli/ForegroundRecord.hpp"

#include "cli/JobRecords.hpp"
#include "cli/Launch.hpp"
#include "cli/OpenCluster.hpp"
#include "core/Log.hpp"
#include "util/Strings.hpp"

#include <chrono>

namespace ddl::cli {
namespace {

// How long the hold's channel may stay open: longer than any run; the hold ends with the run.
constexpr auto k_hold_limit = std::chrono::hours(24 * 365);
// How long `end` waits for the hold to see the recorded end (it looks once a second).
constexpr auto k_hold_grace = std::chrono::seconds(5);

} // namespace

ForegroundRecord::ForegroundRecord(Context& ctx, const RunArgs& a) : m_ctx(ctx) {
    const NodeState* m = master_of(ctx);
    if (!m || a.container || !a.hostfile.empty()) return; // only what the master's hostfile describes
    std::vector<std::string> argv{k_ddl_run, "record-start"};
    if (a.np > 0) argv.insert(argv.end(), {"--np", std::to_string(a.np)});
    argv.push_back("--");
    argv.insert(argv.end(), a.command.begin(), a.command.end());
    const SshEndpoint ep = ctx.endpoint(*m);
    auto r = ctx.remote.exec(ep, shell_join(argv), std::chrono::seconds(30));
    if (!r || !r->ok()) {
        log::debug("the run is not in the master's job list: " + (r ? trim(r->err) : r.error().message));
        return;
    }
    m_id = static_cast<int>(parse_int(trim(r->out)).value_or(0));
    if (m_id <= 0) return;
    std::packaged_task<void()> hold([&remote = ctx.remote, ep, id = m_id] {
        const std::string cmd = shell_join({k_ddl_run, "record-hold", std::to_string(id)});
        auto held = remote.exec(ep, cmd, k_hold_limit);
        if (!held || !held->ok())
            log::debug("the hold on job " + std::to_string(id) +
                       " ended: " + (held ? trim(held->err) : held.error().message));
    });
    m_hold_done = hold.get_future();
    m_hold = std::thread(std::move(hold));
}

void ForegroundRecord::end(int exit_code, int failed_rank) {
    const NodeState* m = master_of(m_ctx);
    if (m_id > 0 && m) {
        std::vector<std::string> argv{k_ddl_run, "record-end", std::to_string(m_id),
                                      std::to_string(exit_code)};
        if (failed_rank >= 0) argv.push_back(std::to_string(failed_rank));
        auto r = m_ctx.remote.exec(m_ctx.endpoint(*m), shell_join(argv), std::chrono::seconds(30));
        if (!r || !r->ok()) log::debug("cannot record the run's end in the master's job list");
    }
    release();
}

void ForegroundRecord::release() {
    if (!m_hold.joinable()) return;
    // The hold exits within a second of the recorded end; a master that stopped answering keeps the
    // channel open, and the thread is left to end with this process.
    if (m_hold_done.wait_for(k_hold_grace) == std::future_status::ready)
        m_hold.join();
    else
        m_hold.detach();
}

ForegroundRecord::~ForegroundRecord() {
    release();
}

} // namespace ddl::cli
