#pragma once
// CPU time this process and its descendants have used, for per-phase figures ("configure: ok (12.1 s,
// 20.4 CPU-s on this machine)"). Descendants count once they have ended and been waited for; an
// OrphanReaper makes this process the reaper of descendants that detach (ssh ControlPersist masters),
// so their time is counted too.
namespace ddl {

// User + system seconds of this process plus its waited-for descendants (getrusage SELF + CHILDREN).
double cpu_seconds_used();

// While it lives, orphaned descendants are re-parented to this process (PR_SET_CHILD_SUBREAPER);
// reap_exited() collects the ones that have ended, waiting up to `wait_ms` for them. Only for
// stretches where no other thread waits for its own children with waitpid(-1).
class OrphanReaper {
public:
    OrphanReaper();
    ~OrphanReaper();
    OrphanReaper(const OrphanReaper&) = delete;
    OrphanReaper& operator=(const OrphanReaper&) = delete;
    // Reaps ended orphans; returns how many. Children started through ProcessRunner are waited by it.
    int reap_exited(int wait_ms);

private:
    bool m_was_reaper = false;
};

} // namespace ddl
