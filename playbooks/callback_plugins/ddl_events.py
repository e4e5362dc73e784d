# ddl's stdout callback for ansible-playbook: one JSON object per line, so ddl can show progress per
# role and node while the play runs and report a failure as node, task and module message.
from __future__ import annotations

import json
import sys

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: ddl_events
type: stdout
short_description: JSON lines for ddl
description: One JSON object per event (task start, result per host, final stats).
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "ddl_events"

    def _emit(self, **event):
        sys.stdout.write(json.dumps(event, sort_keys=True) + "\n")
        sys.stdout.flush()

    def _result(self, status, result):
        res = result._result
        msg = res.get("msg") or res.get("stderr") or ""
        # A loop reports "All items completed"; the reason is in the failed item.
        for item in res.get("results", []) if status in ("failed", "unreachable") else []:
            if isinstance(item, dict) and (item.get("failed") or item.get("unreachable")):
                msg = "item %s: %s" % (item.get("item"), item.get("msg") or item.get("stderr") or msg)
                break
        if status == "skipped":
            msg = res.get("skip_reason", msg)
        role = result._task._role.get_name() if result._task._role else ""
        self._emit(event="result", host=result._host.get_name(), task=result._task.get_name(), role=role,
                   status=status, changed=bool(res.get("changed", False)), msg=str(msg)[:2000])

    def v2_playbook_on_task_start(self, task, is_conditional):
        role = task._role.get_name() if task._role else ""
        self._emit(event="task", task=task.get_name(), role=role)

    def v2_runner_on_ok(self, result):
        self._result("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result("ignored" if ignore_errors else "failed", result)

    def v2_runner_on_unreachable(self, result):
        self._result("unreachable", result)

    def v2_runner_on_skipped(self, result):
        self._result("skipped", result)

    def v2_playbook_on_stats(self, stats):
        hosts = {}
        for host in sorted(stats.processed.keys()):
            s = stats.summarize(host)
            hosts[host] = {"changed": s["changed"], "failures": s["failures"], "unreachable": s["unreachable"],
                           "ok": s["ok"], "skipped": s["skipped"]}
        self._emit(event="stats", hosts=hosts)
