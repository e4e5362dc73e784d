"""The idle clock's rule (src/runtime/tools/ddl-idle): what makes a sample busy, how the record's
idle_since follows the decisions, when the clock ends its own allocation, and how Prometheus's answers
are read (ddl_idle_sources.py) and where the clock falls back to the ssh probe. Pure functions on given
samples and answers; nothing is run on a node."""
import importlib.machinery
import importlib.util
import json
import os
import sys
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src", "runtime", "tools")
_spec = importlib.util.spec_from_loader("ddl_idle", importlib.machinery.SourceFileLoader(
    "ddl_idle", os.path.join(TOOLS, "ddl-idle")))
idle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(idle)
src = idle.sources

CFG = dict(idle.DEFAULTS)  # GPU above 10 %, load above 0.5 per CPU, 60 s period
T0 = 1_800_000_000


class Probe(unittest.TestCase):
    def test_gpus_cpus_and_garbage(self):
        self.assertEqual(idle.parse_probe("gpu 90\ngpu 0\n"), {"gpus": [90.0, 0.0]})
        self.assertEqual(idle.parse_probe("gpu [N/A]\n"), {"gpus": []})
        self.assertEqual(idle.parse_probe("cpu 8 3.50\n"), {"cpus": 8, "load1": 3.5})
        self.assertIn("error", idle.parse_probe("bash: nvidia-smi: command not found\n"))


class Rule(unittest.TestCase):
    def test_quiet_cluster_is_idle(self):
        sample = {"jobs": [{"id": 1, "state": "succeeded"}, {"id": 2, "state": "cancelled"}],
                  "nodes": {"master": {"cpus": 4, "load1": 0.4}, "worker1": {"gpus": [3.0, 10.0]}}, "sessions": []}
        self.assertEqual(idle.busy_reasons(sample, CFG), [])

    def test_each_kind_of_activity_is_named(self):
        sample = {"jobs": [{"id": 3, "state": "running"}, {"id": 4, "state": "queued"}],
                  "nodes": {"worker1": {"gpus": [2.0, 90.0]}, "worker2": {"cpus": 2, "load1": 1.5},
                            "worker3": {"error": "Connection refused"}},
                  "sessions": ["alice    pts/0        2026-11-27 12:00 (10.0.0.1)"]}
        self.assertEqual(idle.busy_reasons(sample, CFG), [
            "job 3 running", "job 4 queued", "worker1: GPU utilisation 90% (above 10%)",
            "worker2: load 1.50 on 2 CPUs (above 0.5 per CPU)", "login alice pts/0"])

    def test_load_counts_only_where_there_are_no_gpus(self):
        # A GPU node's data loaders keep its CPUs busy while its GPUs idle: the GPUs decide.
        sample = {"nodes": {"g": {"gpus": [0.0], "cpus": 2, "load1": 9.0}}}
        self.assertEqual(idle.busy_reasons(sample, CFG), [])
        self.assertEqual(idle.busy_reasons({"nodes": {"c": {"cpus": 2, "load1": 0.9}}},
                                           dict(CFG, DDL_IDLE_CPU_LOAD="1")), [])


class Clock(unittest.TestCase):
    def test_idle_since_stays_while_idle_and_clears_when_busy(self):
        r = idle.next_record(None, [], T0, 60)
        self.assertEqual(r["idle_since"], idle.iso(T0))
        r = idle.next_record(r, [], T0 + 60, 60)
        self.assertEqual(r["idle_since"], idle.iso(T0))
        self.assertEqual(r["checked_at"], idle.iso(T0 + 60))
        r = idle.next_record(r, ["job 1 running"], T0 + 120, 60)
        self.assertIsNone(r["idle_since"])
        self.assertEqual(r["busy"], ["job 1 running"])
        r = idle.next_record(r, [], T0 + 180, 60)
        self.assertEqual(r["idle_since"], idle.iso(T0 + 180))

    def test_a_gap_in_the_ticks_starts_the_clock_anew(self):
        r = idle.next_record(None, [], T0, 60)
        r = idle.next_record(r, [], T0 + 3600, 60)  # the master was stopped for an hour
        self.assertEqual(r["idle_since"], idle.iso(T0 + 3600))

    def test_jupyter_activity_moves_the_start(self):
        r = idle.next_record(None, [], T0, 60)
        r = idle.next_record(r, [], T0 + 60, 60, jupyter_activity=T0 + 30)
        self.assertEqual(r["idle_since"], idle.iso(T0 + 30))
        r = idle.next_record(r, [], T0 + 120, 60, jupyter_activity=T0 + 10)
        self.assertEqual(r["idle_since"], idle.iso(T0 + 30))
        self.assertEqual(idle.from_iso("2026-11-27T12:00:00.123456Z"), idle.from_iso("2026-11-27T12:00:00Z"))


# Answers in the form of Prometheus's documentation ("HTTP API", "Expression query result formats",
# instant vectors) for avg_over_time(DCGM_FI_DEV_GPU_UTIL[60s]), with dcgm-exporter's labels.
def vector(*series):
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"gpu": g, "UUID": "GPU-%s" % g, "Hostname": "h", "instance": inst, "job": "dcgm", "node": "n"},
         "value": [1800000000.0, v]} for inst, g, v in series]}})


class Prometheus(unittest.TestCase):
    def test_query_and_hosts(self):
        self.assertEqual(src.gpu_query(60), "avg_over_time(DCGM_FI_DEV_GPU_UTIL[60s])")
        self.assertEqual(src.host_of("10.0.0.2:9400"), "10.0.0.2")
        self.assertEqual(src.host_of("[fd00::2]:9400"), "fd00::2")

    def test_series_per_host_in_gpu_order(self):
        text = vector(("10.0.0.2:9400", "10", "5"), ("10.0.0.2:9400", "2", "97.5"), ("[fd00::3]:9400", "0", "0"),
                      ("10.0.0.2:9400", "0", "NaN"))
        self.assertEqual(src.parse_gpu_answer(text), {"10.0.0.2": {"gpus": [97.5, 5.0], "node": "n"},
                                                      "fd00::3": {"gpus": [0.0], "node": "n"}})
        self.assertEqual(src.parse_gpu_answer(vector()), {})

    def test_refusals_are_errors(self):
        bad = json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"})
        for text in (bad, "<html>", json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}})):
            with self.assertRaises(ValueError):
                src.parse_gpu_answer(text)

    def test_no_answer_is_a_note(self):
        gpus, note = src.prometheus_gpus("http://127.0.0.1:9", 60, timeout=2)  # discard port: nothing listens
        self.assertEqual(gpus, {})
        self.assertIn("does not answer", note)


class Sources(unittest.TestCase):
    """sample_nodes: Prometheus's nodes come from it, the others (or all, where it cannot tell) from ssh."""
    def setUp(self):
        self.saved = (idle.probe_nodes, src.prometheus_gpus, idle.ddl_run.local_names, idle.socket.gethostname,
                      idle.hostfile_hosts)
        self.skipped = None

        def probe(cfg, skip=()):
            self.skipped = set(skip)
            return {n: v for n, v in {"master": {"cpus": 2, "load1": 0.1}, "10.0.0.2": {"gpus": [3.0]},
                                      "10.0.0.3": {"error": "timeout"}}.items() if n not in skip}
        idle.probe_nodes = probe
        idle.ddl_run.local_names = lambda: {"master", "10.0.0.1"}
        idle.socket.gethostname = lambda: "master"
        idle.hostfile_hosts = lambda: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "worker3"]

    def tearDown(self):
        (idle.probe_nodes, src.prometheus_gpus, idle.ddl_run.local_names, idle.socket.gethostname,
         idle.hostfile_hosts) = self.saved

    def test_dcgm_where_prometheus_has_series(self):
        src.prometheus_gpus = lambda url, period: ({"10.0.0.2": {"gpus": [80.0, 1.0], "node": "worker1"}}, None)
        nodes, note = idle.sample_nodes(dict(CFG, DDL_IDLE_PROMETHEUS="http://127.0.0.1:9090"))
        self.assertIsNone(note)
        self.assertEqual(self.skipped, {"10.0.0.2"})
        self.assertEqual(nodes["10.0.0.2"], {"gpus": [80.0, 1.0], "source": "dcgm"})
        self.assertEqual(nodes["master"]["source"], "load")
        self.assertEqual(idle.busy_reasons({"nodes": nodes}, CFG), ["10.0.0.2: GPU utilisation 80% (above 10%)"])

    def test_nodes_named_as_the_probe_names_them(self):
        # This node by its name, an IPv6 node by its node label (its hostfile entry is its name).
        src.prometheus_gpus = lambda url, period: ({"10.0.0.1": {"gpus": [0.0], "node": "master"},
                                                    "fd00::4": {"gpus": [50.0], "node": "worker3"}}, None)
        nodes, _ = idle.sample_nodes(dict(CFG, DDL_IDLE_PROMETHEUS="http://127.0.0.1:9090"))
        self.assertEqual(self.skipped, {"master", "worker3"})
        self.assertEqual(sorted(nodes), ["10.0.0.2", "10.0.0.3", "master", "worker3"])
        self.assertEqual(nodes["worker3"], {"gpus": [50.0], "source": "dcgm"})

    def test_fallback_to_nvidia_smi(self):
        src.prometheus_gpus = lambda url, period: ({}, "Prometheus at x has no DCGM_FI_DEV_GPU_UTIL series")
        nodes, note = idle.sample_nodes(dict(CFG, DDL_IDLE_PROMETHEUS="http://127.0.0.1:9090"))
        self.assertIn("no DCGM_FI_DEV_GPU_UTIL series", note)
        self.assertEqual(self.skipped, set())
        self.assertEqual(nodes["10.0.0.2"], {"gpus": [3.0], "source": "nvidia-smi"})
        self.assertEqual(nodes["10.0.0.3"], {"error": "timeout"})

    def test_no_prometheus_asked_without_monitoring(self):
        src.prometheus_gpus = lambda url, period: self.fail("asked Prometheus without DDL_IDLE_PROMETHEUS")
        nodes, note = idle.sample_nodes(CFG)
        self.assertIsNone(note)
        self.assertEqual(nodes["10.0.0.2"]["source"], "nvidia-smi")


class SelfEnd(unittest.TestCase):
    def test_ends_only_where_allowed_and_past_the_minutes(self):
        rec = {"idle_since": idle.iso(T0)}
        slurm = dict(CFG, DDL_IDLE_END="slurm", DDL_IDLE_MINUTES="2")
        self.assertFalse(idle.end_due(rec, slurm, T0 + 119))
        self.assertTrue(idle.end_due(rec, slurm, T0 + 120))
        self.assertFalse(idle.end_due({"idle_since": None}, slurm, T0 + 999))
        self.assertFalse(idle.end_due(rec, dict(CFG, DDL_IDLE_MINUTES="2"), T0 + 999))  # no DDL_IDLE_END
        self.assertFalse(idle.end_due(rec, dict(slurm, DDL_IDLE_MINUTES="0"), T0 + 999))  # no autostop

    def test_an_end_stops_the_decisions_only_while_it_is_recent(self):
        rec = {"ended": {"at": idle.iso(T0), "by": "autostop"}}
        self.assertTrue(idle.ending(rec, CFG, T0 + 180))
        self.assertFalse(idle.ending(rec, CFG, T0 + 181))  # another allocation's, or an end that failed
        self.assertFalse(idle.ending({"idle_since": idle.iso(T0)}, CFG, T0))
        self.assertFalse(idle.ending(None, CFG, T0))

    def test_steps_are_named(self):
        sample = {"jobs": [{"id": "12.0", "state": "running", "what": "step"}]}
        self.assertEqual(idle.busy_reasons(sample, CFG), ["step 12.0 running"])

    def test_environment_overrides_the_file(self):
        os.environ["DDL_IDLE_PERIOD"] = "2"
        try:
            self.assertEqual(idle.settings()["DDL_IDLE_PERIOD"], "2")
        finally:
            del os.environ["DDL_IDLE_PERIOD"]


class CloudEnd(unittest.TestCase):
    """DDL_IDLE_END=cloud: the node credential's module (ddl_idle_<DDL_CLOUD>) gets the settings of
    cloud.env, the action and the line; the record says ended only once the call succeeded."""

    def setUp(self):
        import tempfile
        self.dir = tempfile.mkdtemp()
        self.env = os.path.join(self.dir, "cloud.env")
        with open(self.env, "w") as f:
            f.write("# written by ddl\nDDL_CLOUD=aws\nDDL_CLOUD_SERVERS=i-1,i-2\n")
        self.calls = []
        self.fail = None
        test = self

        class Module:
            @staticmethod
            def end(env, action, line):
                with open(test.path) as f:
                    test.during = json.load(f)  # what a reader sees while the call runs
                test.calls.append((env, action, line))
                if test.fail:
                    raise RuntimeError(test.fail)
                return "EC2 %s %s" % (action, env["DDL_CLOUD_SERVERS"])
        sys.modules["ddl_idle_aws"] = Module
        self.cfg = dict(CFG, DDL_IDLE_END="cloud", DDL_IDLE_MINUTES="5", DDL_IDLE_ACTION="stop",
                        DDL_CLOUD_ENV=self.env)
        self.path = os.path.join(self.dir, "c.json")
        self.record = {"idle_since": idle.iso(T0 - 600), "checked_at": idle.iso(T0)}

    def tearDown(self):
        sys.modules.pop("ddl_idle_aws", None)

    def test_the_cloud_module_ends_it_and_the_record_says_how(self):
        idle.end_allocation(self.cfg, self.record, self.path, T0)
        env, action, line = self.calls[0]
        self.assertEqual((env["DDL_CLOUD_SERVERS"], action), ("i-1,i-2", "stop"))
        self.assertTrue(line.startswith("ddl-idle: autostop ends the allocation at %s: idle since" % idle.iso(T0)))
        with open(self.path) as f:
            self.assertEqual(json.load(f)["ended"]["how"], "EC2 stop i-1,i-2")
        self.assertIn("ending", self.during)
        self.assertNotIn("ended", self.during)
        self.assertTrue(idle.ending(self.during, self.cfg, T0 + 60))

    def test_a_failed_call_leaves_no_end_recorded(self):
        self.fail = "UnauthorizedOperation"
        with self.assertRaises(RuntimeError):
            idle.end_allocation(self.cfg, self.record, self.path, T0)
        with open(self.path) as f:
            self.assertNotIn("ended", json.load(f))

    def test_a_file_without_a_cloud_is_refused(self):
        with open(self.env, "w") as f:
            f.write("DDL_CLOUD=azure\n")
        with self.assertRaisesRegex(RuntimeError, "names no cloud"):
            idle.end_allocation(self.cfg, self.record, self.path, T0)
        self.assertEqual(self.calls, [])


if __name__ == "__main__":
    sys.exit(unittest.main())
