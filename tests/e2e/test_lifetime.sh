#!/usr/bin/env bash
# A cluster's lifetime (spec key lifetime): `ddl gc --expired` leaves it before its end and destroys it
# after; status, list and run show or warn about the end; list --output json carries node-hours, GPU-hours
# and the cost from the spec's price table; plan shows the hourly figure. The end is reached by moving the
# state's created_at back (what deploy recorded), not by waiting.
source "$(dirname "$0")/lib.sh"
spec lt-a 2 "lifetime: 1m" "cost: {per_node_hour: 1.5, per_gpu_hour: 2.5, currency: EUR}"
spec lt-keep 1
ddl plan lt-a.yaml >plan.out 2>&1 || { cat plan.out; fail "plan"; }
expect_in plan.out "cost: 3.00 EUR per hour (2 nodes at 1.50, 0 GPUs at 2.50)" "plan shows no hourly cost"
expect_in plan.out "lifetime: 1m from its creation" "plan shows no lifetime"
ddl deploy lt-a.yaml >a.log 2>&1 || { cat a.log; fail "deploy lt-a"; }
ddl deploy lt-keep.yaml --only render >keep.log 2>&1 || { cat keep.log; fail "render lt-keep"; }
ddl gc --expired -y >gc1.out 2>&1 || { cat gc1.out; fail "gc --expired"; }
expect_in gc1.out "gc: 0 destroyed, 0 failed" "gc --expired destroyed a cluster before its end"
[ -e "$STATE/lt-a/state.json" ] || fail "lt-a gone before its lifetime ended"
ddl status lt-a --no-check >st1.out || fail "status"
expect_in st1.out "^lifetime ends .* (in [01]m)" "status shows no lifetime end"
grep -q "^used: 2 nodes, 0 GPUs: .* node-hours, 0.00 GPU-hours (cost .* EUR so far, 3.00 EUR per hour)" st1.out ||
  { cat st1.out; fail "status shows no usage"; }

# Two hours ago, as far as the state says: both clusters.
for c in lt-a lt-keep; do
  python3 - "$STATE/$c/state.json" <<'PY'
import datetime, json, sys
p = sys.argv[1]; s = json.load(open(p))
t = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)
s["created_at"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
# Its usage spells (each change of its machines) move back with it: the first starts at the creation.
fmt = "%Y-%m-%dT%H:%M:%SZ"
assert s["usage_spells"][0]["at"] <= s["usage_spells"][-1]["at"], s["usage_spells"]
for spell in s["usage_spells"]:
    spell["at"] = (datetime.datetime.strptime(spell["at"], fmt) - datetime.timedelta(hours=2)).strftime(fmt)
s["usage_spells"][0]["at"] = s["created_at"]
json.dump(s, open(p, "w"))
PY
done
ddl --output json list >list.json || fail "list --output json"
python3 - list.json <<'PY' || { cat list.json; fail "list --output json usage"; }
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))}
a, k = rows["lt-a"], rows["lt-keep"]
assert a["lifetime_end"] and k["lifetime_end"] is None, (a, k)
u = a["usage"]
assert (u["nodes"], u["gpus"]) == (2, 0), u
assert abs(u["node_hours"] - 4.0) < 0.05 and u["gpu_hours"] == 0, u
c = u["cost"]
assert c["currency"] == "EUR" and c["per_hour"] == 3.0 and abs(c["amount"] - 6.0) < 0.1, c
assert k["usage"]["cost"] is None, k
PY
ddl list >list.out || fail "list"
expect_in list.out "^lt-a .* ended" "list shows no ended lifetime"
ddl status lt-a --no-check | grep -q "^lifetime ended " || fail "status shows no ended lifetime"
ddl run --cluster lt-a -- true >run.out 2>&1 || { cat run.out; fail "run"; }
expect_in run.out "cluster lt-a: its lifetime ends .*ddl gc --expired" "run does not warn of the lifetime's end"
ok "lifetime and usage shown by plan, status, list and run; gc --expired leaves a cluster before its end"

ddl gc --expired --dry-run >dry.out || fail "gc --expired --dry-run"
expect_in dry.out "would destroy lt-a (its lifetime ended " "gc --expired --dry-run"
! grep -q lt-keep dry.out || { cat dry.out; fail "gc --expired would destroy a cluster without a lifetime"; }
ddl --output json gc --expired -y >gc2.json 2>gc2.err || { cat gc2.json gc2.err; fail "gc --expired -y"; }
python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))
assert [(c["cluster"], c["outcome"]) for c in r["clusters"]] == [("lt-a", "destroyed")], r' gc2.json ||
  { cat gc2.json gc2.err; fail "gc --expired report"; }
assert_gone lt-a
[ -e "$STATE/lt-keep/state.json" ] || fail "gc --expired destroyed a cluster without a lifetime"
ok "gc --expired destroys the cluster past its lifetime through destroy, and only it"
