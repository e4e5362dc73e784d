#pragma once
// A foreground `ddl run` in the master's job list (src/runtime/tools/ddl-run) for as long as it runs:
// its record as running, a channel held open to `ddl-run record-hold ID` on the master, then how it
// ended. The hold records the run failed ("its controller is gone") when this process dies without
// saying how the run ended: its next write to the closed channel fails.
#include "provision/Context.hpp"

#include <future>
#include <thread>

namespace ddl::cli {

struct RunArgs;

class ForegroundRecord {
public:
    // Records the run as running and starts the hold; a master without the job list (a runtime older than
    // the queue), a run in a container or through a user's hostfile keeps no record (logged only).
    ForegroundRecord(Context& ctx, const RunArgs& a);
    ~ForegroundRecord();
    ForegroundRecord(const ForegroundRecord&) = delete;
    ForegroundRecord& operator=(const ForegroundRecord&) = delete;

    // Records how the run ended (the hold sees it and exits); waits a few seconds for the hold's channel.
    void end(int exit_code, int failed_rank);
    int id() const { return m_id; }

private:
    void release();

    Context& m_ctx;
    int m_id = 0;
    std::thread m_hold;
    std::future<void> m_hold_done;
};

} // namespace ddl::cli
