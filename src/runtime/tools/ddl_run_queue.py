"""How a queued job waits for its turn (ddl-run, beside this file), at a cost flat in the queue's length.

Every supervisor holds an exclusive flock on its job's `turn` file from its first moment to its end; the
kernel drops it when the process ends, however it ends. A waiting supervisor blocks on the turn lock of the
nearest job before it that still stands in its way and reads the queue again only once that lock is free:
one wake per job that ends, where reading every record every half second cost the master 0.58 of a core
for 50 queued jobs.
"""
import errno
import fcntl
import os
import time

TURN = "turn"
# How often a waiter looks again at a job whose supervisor holds no turn lock yet (it is starting).
POLL_S = 0.5


class Cancelled(Exception):
    """Raised by the supervisor's SIGTERM handler while it waits: a blocking flock is not retried after it."""


def hold_turn(job_dir):
    """This supervisor's turn lock, held as long as the returned file stays open (its whole life)."""
    f = open(os.path.join(job_dir, TURN), "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def wait_released(job_dir):
    """Blocks until the supervisor of the job in `job_dir` has ended. False at once where it holds no turn
    lock (it has not started, or cannot be read): the caller looks again after POLL_S."""
    try:
        fd = os.open(os.path.join(job_dir, TURN), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return False  # free: nobody's turn is held there
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
        fcntl.flock(fd, fcntl.LOCK_SH)
        return True
    finally:
        os.close(fd)


def wait_turn(blocker, job_dir_of, cancelled):
    """Until `blocker()` names no job (True) or `cancelled()` (False). `blocker()` is the nearest job
    before this one that it must wait for, or None; it is called once per wake, not on a clock."""
    while True:
        if cancelled():
            return False
        other = blocker()
        if other is None:
            return True
        if not wait_released(job_dir_of(other)):
            time.sleep(POLL_S)
