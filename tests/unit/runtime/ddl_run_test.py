"""The master's job queue (src/runtime/tools/ddl-run) on this machine, with its queue in a temporary folder
and a hostfile naming only localhost: how a queued job waits for its turn (ddl_run_queue.py), how a job's
logs are streamed (ddl_run_logs.py), and what a one-word command runs as."""
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src", "runtime", "tools")
DDL_RUN = os.path.join(TOOLS, "ddl-run")
sys.path.insert(0, TOOLS)
import ddl_run_check  # noqa: E402
import ddl_run_logs  # noqa: E402
import ddl_run_queue  # noqa: E402


class Queue:
    """A queue folder, a workdir and a one-host hostfile; ddl-run run against them."""

    def __init__(self, slots=1):
        self.tmp = tempfile.TemporaryDirectory()
        self.jobs = os.path.join(self.tmp.name, "jobs")
        self.workdir = os.path.join(self.tmp.name, "wd")
        os.makedirs(self.jobs)
        os.makedirs(self.workdir)
        self.hostfile = os.path.join(self.tmp.name, "hostfile")
        with open(self.hostfile, "w") as f:
            f.write("localhost slots=%d\n" % slots)

    def run(self, *argv):
        return subprocess.run([sys.executable, DDL_RUN] + list(argv), capture_output=True, text=True,
                              env=dict(os.environ, DDL_JOBS_DIR=self.jobs), cwd=self.workdir, timeout=60)

    def submit(self, *argv):
        r = self.run("--hostfile", self.hostfile, "--workdir", self.workdir, *argv)
        assert r.returncode == 0, r.stderr
        return int(r.stdout)

    def meta(self, job):
        with open(os.path.join(self.jobs, str(job), "meta.json")) as f:
            return json.load(f)

    def until(self, job, check, what):
        for _ in range(300):
            try:
                m = self.meta(job)
                if check(m):
                    return m
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise AssertionError("job %d never %s: %s" % (job, what, self.meta(job)))

    def ended(self, job):
        return self.until(job, lambda m: m["state"] in ("succeeded", "failed", "cancelled"), "ended")

    def log(self, job, rank=0):
        with open(os.path.join(self.jobs, str(job), "rank-%d.log" % rank)) as f:
            return f.read()

    def close(self):
        for name in os.listdir(self.jobs):
            if name.isdigit() and self.meta(name)["state"] in ("queued", "running"):
                self.run("cancel", name)
        self.tmp.cleanup()


class TurnTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def holder(self):
        """A process that holds the turn lock of self.tmp until its stdin closes."""
        p = subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                              "import ddl_run_queue as q; t = q.hold_turn(sys.argv[2]); print('held', flush=True); "
                              "sys.stdin.read()", TOOLS, self.tmp.name],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout.readline(), "held\n")
        return p

    def test_a_job_whose_supervisor_holds_no_turn_lock_is_not_waited_on_by_blocking(self):
        self.assertFalse(ddl_run_queue.wait_released(self.tmp.name))  # no turn file yet
        open(os.path.join(self.tmp.name, "turn"), "a").close()
        self.assertFalse(ddl_run_queue.wait_released(self.tmp.name))  # a file nobody holds

    def test_a_waiter_reads_the_queue_once_per_release_not_on_a_clock(self):
        p = self.holder()
        self.addCleanup(p.stdout.close)
        calls = []

        def blocker():
            calls.append(1)
            return None if len(calls) > 1 else {"id": 1}

        result = []
        waiter = threading.Thread(target=lambda: result.append(
            ddl_run_queue.wait_turn(blocker, lambda other: self.tmp.name, lambda: False)))
        waiter.start()
        time.sleep(1.5)  # three of the old poll's periods
        self.assertEqual(len(calls), 1, "the queue was read again while the job before still ran")
        self.assertEqual(result, [])
        p.stdin.close()
        p.wait()
        waiter.join(30)
        self.assertEqual(result, [True])
        self.assertEqual(len(calls), 2)

    def test_a_signal_handler_that_raises_ends_a_blocked_wait(self):
        p = self.holder()
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.wait)
        self.addCleanup(p.stdin.close)

        def on_term(signum, frame):
            raise ddl_run_queue.Cancelled()

        old = signal.signal(signal.SIGUSR1, on_term)
        self.addCleanup(signal.signal, signal.SIGUSR1, old)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        with self.assertRaises(ddl_run_queue.Cancelled):
            ddl_run_queue.wait_turn(lambda: {"id": 1}, lambda other: self.tmp.name, lambda: False)


class QueueTest(unittest.TestCase):
    def setUp(self):
        self.q = Queue()
        self.addCleanup(self.q.close)

    def test_a_queued_job_runs_after_the_job_before_it_has_ended(self):
        first = self.q.submit("--name", "first", "--", "sh", "-c", "sleep 1; touch first.done")
        second = self.q.submit("--name", "second", "--", "test", "-e", "first.done")
        self.assertEqual(self.q.ended(first)["state"], "succeeded")
        self.assertEqual(self.q.ended(second)["state"], "succeeded")

    def test_a_beside_job_does_not_wait(self):
        self.q.submit("--name", "long", "--", "sleep", "30")
        beside = self.q.submit("--beside", "--", "true")
        self.assertEqual(self.q.ended(beside)["state"], "succeeded")

    def test_a_cancelled_waiting_job_ends_cancelled_and_its_supervisor_is_gone(self):
        self.q.submit("--name", "long", "--", "sleep", "30")
        waiting = self.q.submit("--", "true")
        pid = self.q.until(waiting, lambda m: m.get("pid"), "recorded its supervisor")["pid"]
        r = self.q.run("cancel", str(waiting))
        self.assertEqual(r.stdout.strip(), "job %d cancelled" % waiting)
        self.assertEqual(self.q.meta(waiting)["started"], None)
        self.assertFalse(os.path.exists("/proc/%d" % pid))

    def test_a_running_job_whose_supervisor_was_killed_is_failed_and_the_next_runs(self):
        first = self.q.submit("--name", "orphan", "--", "sleep", "30")
        pid = self.q.until(first, lambda m: m["state"] == "running", "ran")["pid"]
        second = self.q.submit("--", "true")
        os.kill(pid, signal.SIGKILL)
        self.assertEqual(self.q.ended(second)["state"], "succeeded")
        m = self.q.meta(first)
        self.assertEqual((m["state"], m["detail"]), ("failed", "its supervisor is gone"))

    def test_a_one_word_command_is_a_program_name_and_one_that_is_not_there_is_refused_before_queueing(self):
        r = self.q.run("--hostfile", self.q.hostfile, "--workdir", self.q.workdir, "--", "echo $(id -u)")
        self.assertEqual(r.returncode, 2)
        self.assertIn("echo $(id -u): no such program on the master's PATH", r.stderr)
        self.assertEqual([n for n in os.listdir(self.q.jobs) if n.isdigit()], [])
        job = self.q.submit("--", "echo", "$(id -u)")
        self.q.ended(job)
        self.assertEqual(self.q.log(job), "$(id -u)\n")

    def test_logs_of_a_job_are_every_line_with_its_rank(self):
        job = self.q.submit("--", "seq", "3")
        self.q.ended(job)
        self.assertEqual(self.q.run("logs", str(job), "-f").stdout, "[0] 1\n[0] 2\n[0] 3\n")


class CheckTest(unittest.TestCase):
    """What ddl_run_check.missing refuses before a job is queued."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.wd = self.tmp.name
        with open(os.path.join(self.wd, "train.py"), "w") as f:
            f.write("print(1)\n")
        self.path = os.environ.get("PATH", "")

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_program_on_path_with_its_script_in_the_workdir_passes(self):
        self.assertIsNone(ddl_run_check.missing(["python3", "-u", "train.py", "--lr", "1"], self.wd, self.path))
        self.assertIsNone(ddl_run_check.missing(["true"], self.wd, self.path))

    def test_a_missing_script_for_an_interpreter_is_named_with_the_folder(self):
        why = ddl_run_check.missing(["python3", "trian.py"], self.wd, self.path)
        self.assertIn("trian.py: no such file in the job's folder " + self.wd, why)
        self.assertIsNotNone(ddl_run_check.missing(["bash", "run.sh"], self.wd, self.path))

    def test_inline_code_and_modules_are_not_taken_for_scripts(self):
        self.assertIsNone(ddl_run_check.missing(["python3", "-c", "print(1)"], self.wd, self.path))
        self.assertIsNone(ddl_run_check.missing(["python3", "-m", "http.server"], self.wd, self.path))
        self.assertIsNone(ddl_run_check.missing(["bash", "-c", "echo hi"], self.wd, self.path))

    def test_a_program_by_path_must_exist_and_be_executable(self):
        self.assertIn("./nope: no such program", ddl_run_check.missing(["./nope"], self.wd, self.path))
        self.assertIn("train.py", ddl_run_check.missing(["./train.py"], self.wd, self.path))  # not executable


class LogsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, rank, data):
        path = os.path.join(self.tmp.name, "rank-%d.log" % rank)
        with open(path, "ab") as f:
            f.write(data)
        return path

    def show(self, paths, finished=True, follow=False):
        out = io.BytesIO()
        ddl_run_logs.show(paths, lambda: finished, follow, out)
        return out.getvalue()

    def test_every_rank_s_lines_come_in_rank_order_with_its_prefix(self):
        paths = {0: self.write(0, b"a\nb\n"), 1: self.write(1, b"c\nd")}
        self.assertEqual(self.show(paths), b"[0] a\n[0] b\n[1] c\n[1] d\n")

    def test_a_last_line_without_its_end_waits_until_the_job_has_ended(self):
        paths = {0: self.write(0, b"a\npart")}
        self.assertEqual(self.show(paths, finished=False), b"[0] a\n")

    def test_chunks_smaller_than_a_line_give_the_same_lines(self):
        data = b"one\ntwo " + "\u00e9".encode() + b"\n\xffbad\nlast"
        paths = {0: self.write(0, data)}
        whole = self.show(paths)
        chunk = ddl_run_logs.CHUNK
        ddl_run_logs.CHUNK = 3
        self.addCleanup(setattr, ddl_run_logs, "CHUNK", chunk)
        self.assertEqual(self.show(paths), whole)
        self.assertEqual(whole, "[0] one\n[0] two \u00e9\n[0] \ufffdbad\n[0] last\n".encode())

    def test_a_line_longer_than_the_limit_is_written_in_pieces_so_memory_stays_bounded(self):
        longest = ddl_run_logs.LONGEST
        ddl_run_logs.LONGEST = 4
        self.addCleanup(setattr, ddl_run_logs, "LONGEST", longest)
        chunk = ddl_run_logs.CHUNK
        ddl_run_logs.CHUNK = 5
        self.addCleanup(setattr, ddl_run_logs, "CHUNK", chunk)
        paths = {0: self.write(0, b"abcdefghij\n")}
        self.assertEqual(self.show(paths), b"[0] abcde\n[0] fghij\n")

    def test_a_missing_log_is_skipped(self):
        paths = {0: os.path.join(self.tmp.name, "rank-0.log"), 1: self.write(1, b"x\n")}
        self.assertEqual(self.show(paths), b"[1] x\n")


if __name__ == "__main__":
    unittest.main()
