"""The idle clock's rule (src/runtime/tools/ddl-idle): what makes a sample busy, and how the record's
idle_since follows the decisions. Pure functions on given samples; nothing is run on a node."""
import importlib.machinery
import importlib.util
import os
import sys
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src", "runtime", "tools")
_spec = importlib.util.spec_from_loader("ddl_idle", importlib.machinery.SourceFileLoader(
    "ddl_idle", os.path.join(TOOLS, "ddl-idle")))
idle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(idle)

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


if __name__ == "__main__":
    sys.exit(unittest.main())
