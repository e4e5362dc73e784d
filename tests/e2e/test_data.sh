#!/usr/bin/env bash
# The spec's datasets (issue 41) on 3 namespace nodes, each with its own /var/lib/ddl/data: a folder staged
# to every node's disk and to the shared folder, an archive served over HTTP on loopback downloaded once
# and staged; a stage killed halfway resumes with what arrived; a second stage sends nothing and hashes
# nothing; a file corrupted on one node (size and mtime kept, so rsync's quick check misses it) is found by
# its hash and sent again; a changed source shows as stale; jobs (`ddl run`, `ddl run -d`) read the copies
# through DDL_DATA_<NAME>; a bad datasets section is refused at its line. A hostile archive and folder
# (issue 51: links to the cluster's private key, /etc/shadow, a private folder) put no outside byte on a node.
source "$(dirname "$0")/lib.sh"
use_ping_playbook
command -v rsync >/dev/null || fail "rsync missing (scripts/install-deps.sh installs it)"

# 300 files in 10 class folders, 2-12 KiB each, from a seed.
python3 - <<'PY'
import os, random
rng = random.Random(41)
for i in range(300):
    d = "imgs/c%d" % (i % 10)
    os.makedirs(d, exist_ok=True)
    with open("%s/img_%04d.jpg" % (d, i), "wb") as f:
        f.write(rng.randbytes(rng.randint(2048, 12288)))
os.makedirs("web/set/part", exist_ok=True)
for i in range(20):
    with open("web/set/part/%02d.bin" % i, "wb") as f:
        f.write(rng.randbytes(4096))
PY
tar -czf web.tar.gz -C web set
mkdir serve && mv web.tar.gz serve/
# The hostile archive: links to the cluster's private key (relative from where it is unpacked,
# <state>/data/data/hostile/files/set/train/cat, and absolute), to /etc/shadow, a class folder linked to a
# private folder, and a chain through a link to its own folder that rsync's --safe-links would let through.
# hostile_dir is the same tree as a folder source.
mkdir -p private hostile/set/train/cat
echo "PRIVATE-FOLDER-$$-$RANDOM$RANDOM" >private/p.jpg
cp imgs/c1/img_0001.jpg imgs/c2/img_0002.jpg hostile/set/train/cat/
ln -s ../../../../../../id_ed25519 hostile/set/train/cat/key.jpg
ln -s "$STATE/data/id_ed25519" hostile/set/train/cat/abs_key.jpg
ln -s /etc/shadow hostile/set/train/cat/shadow.jpg
ln -s . hostile/set/train/cat/self
ln -s self/self/self/self/self/self/../../../../../../id_ed25519 hostile/set/train/cat/chain.jpg
ln -s "$WORK/private" hostile/set/train/dog
tar -cf serve/hostile.tar -C hostile set
cp -a hostile/set hostile_dir
python3 -m http.server --bind 127.0.0.1 --directory serve 0 >http.log 2>&1 &
HTTP_PID=$!
trap 'rc=$?; set +e; kill "$HTTP_PID" 2>/dev/null; (exit $rc); cleanup' EXIT
wait_for 30 "python's http.server to say its port" grep -q "port" http.log
PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' http.log | head -1)
[ -n "$PORT" ] || { cat http.log; fail "http.server did not start"; }

spec data 3 "datasets:" \
  "  - {name: imgs, source: ./imgs, to: local, format: files}" \
  "  - {name: imgs_shared, source: ./imgs, to: shared}" \
  "  - {name: web, source: \"http://127.0.0.1:$PORT/web.tar.gz\", to: local}" \
  "  - {name: from_shared, source: \"shared:sets/imgs\", to: local}" \
  "  - {name: packed, source: ./imgs, to: local, convert: shards}" \
  "  - {name: hostile, source: \"http://127.0.0.1:$PORT/hostile.tar\", to: local, convert: shards}" \
  "  - {name: hostile_dir, source: ./hostile_dir, to: local}"
ddl deploy data.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }

# A stage killed when rsync has named 400 of the 900 files it sends (3 nodes x 300): what arrived stays,
# nothing is marked.
rc=0
DDL_TEST_KILL_AT='data:imgs:file#400' "$DDL" --state-dir "$STATE" data stage data imgs >k.log 2>&1 || rc=$?
[ $rc = 137 ] || { cat k.log; fail "stage was not killed at data:imgs:file#400 (exit $rc)"; }
# The killed ddl's rsyncs stop at their next write to its closed pipe, and their receivers on the nodes
# (processes of this machine too) after them.
busy() { pgrep -f "rsync .*$WORK/imgs/" >/dev/null || pgrep -f "rsync --server .*/var/lib/ddl/data/imgs/" >/dev/null; }
wait_for 60 "the killed stage's rsyncs to stop" eval '! busy'
present=0
for node in master worker1 worker2; do
  # rsync's temporary files (.NAME.XXXXXX beside the file it receives) are not files that arrived.
  n=$(find "$STATE/data/nodes/$node/data/imgs" -path '*/.ddl-partial' -prune -o -type f ! -name '.*' -print | wc -l)
  present=$((present + n))
done
[ "$present" -gt 0 ] && [ "$present" -lt 900 ] || fail "after the kill the nodes hold $present of 900 files"
rc=0
ddl data status data imgs >st.log 2>&1 || rc=$?
expect_rc "$rc" 1 st.log "not staged" "status after the kill"
ddl --output json data stage data imgs >r.json 2>r.log || { cat r.log; fail "stage after the kill"; }
python3 - r.json "$present" <<'PY' || { cat r.log; fail "the resumed stage's report"; }
import json, sys
j = json.load(open(sys.argv[1]))["datasets"][0]
present = int(sys.argv[2])
sent = sum(n["sent_files"] for n in j["nodes"])
assert j["files"] == 300 and len(j["nodes"]) == 3, j
assert sent == 900 - present, (sent, present)
assert all(n["resent"] == 0 for n in j["nodes"]), j
PY
ok "a stage killed halfway keeps what arrived ($present on the nodes, nothing marked); the next sends the rest"

# The shared folder of namespace nodes is the cluster's state folder's shared/ (the local stand-in for NFS).
mkdir -p "$STATE/data/shared/sets" && cp -a imgs "$STATE/data/shared/sets/"
ddl --output json data stage data >all.json 2>all.log || { cat all.log; fail "stage every dataset"; }
expect_in all.log "data web: downloading http://127.0.0.1:$PORT/web.tar.gz" "web not downloaded"
python3 - all.json <<'PY' || { cat all.log; fail "the report of the first full stage"; }
import json, sys
d = {x["name"]: x for x in json.load(open(sys.argv[1]))["datasets"]}
assert [n["sent_files"] for n in d["imgs"]["nodes"]] == [0, 0, 0], d["imgs"]
assert d["imgs_shared"]["path"] == "/shared/ddl-data/imgs_shared" and len(d["imgs_shared"]["nodes"]) == 1
assert d["imgs_shared"]["nodes"][0]["sent_files"] == 300, d["imgs_shared"]
assert d["web"]["files"] == 20 and [n["sent_files"] for n in d["web"]["nodes"]] == [20, 20, 20], d["web"]
assert [n["sent_files"] for n in d["from_shared"]["nodes"]] == [300, 300, 300], d["from_shared"]
# convert: shards: one tar shard, the class list and the packer's stamp on every node
assert [n["sent_files"] for n in d["packed"]["nodes"]] == [3, 3, 3], d["packed"]
PY
expect_in all.log "data packed: packed 300 images of 10 classes into 1 shard(s)" "packed not packed"
out=$(ddl exec --cluster data --nodes worker1 -- python3 -c 'import os, tarfile
t = tarfile.open(os.path.join("/var/lib/ddl/data/packed/shards/shard-000000.tar"))
n = t.getnames(); c = sorted({t.extractfile(m).read().decode() for m in t if m.name.endswith(".cls")})
print(len(n), sum(x.endswith(".jpg") for x in n), ",".join(c), len(open("/var/lib/ddl/data/packed/classes.txt").read().split()))')
[ "$out" = "[worker1] 600 300 0,1,2,3,4,5,6,7,8,9 10" ] || fail "the packed shard on worker1: $out"
for node in master worker1 worker2; do
  [ -f "$STATE/data/nodes/$node/data/web/part/07.bin" ] || fail "web's archive root not staged on $node"
  cmp -s imgs/c3/img_0123.jpg "$STATE/data/nodes/$node/data/imgs/c3/img_0123.jpg" || fail "imgs differs on $node"
  cmp -s imgs/c3/img_0123.jpg "$STATE/data/nodes/$node/data/from_shared/c3/img_0123.jpg" || fail "from_shared differs on $node"
done
ddl data status data >st2.log 2>&1 || { cat st2.log; fail "status after staging"; }
[ "$(grep -c ' current ' st2.log)" = 19 ] || { cat st2.log; fail "not every copy is current"; }
ok "staged to each node's own disk, to the shared folder once, from an archive over HTTP, from the shared folder and packed into shards; status: current"

expect_in all.log "warning: data hostile: removed 5 link(s) of the archive that lead out of it" "the hostile archive's links were not removed"
expect_in all.log "warning: data hostile_dir: 5 link(s) lead out of $WORK/hostile_dir and are not copied" "hostile_dir's links were not named"
python3 - "$STATE" <<'PY' || fail "a byte of a file outside a hostile dataset reached a node"
import os, sys
state = sys.argv[1]
secrets = [open(os.path.join(state, "data", "id_ed25519"), "rb").read().strip(), open("private/p.jpg", "rb").read().strip()]
try:
    secrets.append(open("/etc/shadow", "rb").read().strip())
except OSError:
    pass
for node in ("master", "worker1", "worker2"):
    for name, want in (("hostile", 3), ("hostile_dir", 2)):
        top = os.path.realpath(os.path.join(state, "data", "nodes", node, "data", name))
        files = 0
        for d, dirs, names in os.walk(top):
            for f in names + dirs:
                p = os.path.join(d, f)
                if os.path.islink(p):
                    assert os.path.realpath(p).startswith(top + os.sep), (p, os.readlink(p))
                elif os.path.isfile(p) and ".ddl-partial" not in p:
                    files += 1
                    data = open(p, "rb").read()
                    assert not any(s and s in data for s in secrets), (p, "holds an outside file's bytes")
        assert files == want, (node, name, files)
PY
out=$(ddl exec --cluster data --nodes worker1 -- python3 -c 'import tarfile
t = tarfile.open("/var/lib/ddl/data/hostile/shards/shard-000000.tar"); print(len(t.getnames()))')
[ "$out" = "[worker1] 4" ] || fail "the hostile archive's shard on worker1 holds more than its 2 images: $out"
ok "a hostile archive and folder (links to the cluster key, /etc/shadow, a private folder, a --safe-links-passing chain): links removed or skipped with a warning, no outside byte on any node"

ddl --output json data stage data >again.json 2>again.log || { cat again.log; fail "second stage"; }
python3 - again.json <<'PY' || { cat again.log; fail "a second stage sent or hashed something"; }
import json, sys
for d in json.load(open(sys.argv[1]))["datasets"]:
    for n in d["nodes"]:
        assert (n["sent_files"], n["deleted"], n["hashed"], n["resent"]) == (0, 0, 0, 0), (d["name"], n)
    assert d["source_hashed"] == 0, d
PY
grep -q "data web: downloading" again.log && fail "the archive was downloaded again"
grep -q "data packed: packed" again.log && fail "the shards were packed again from unchanged files"
ok "a second stage sends nothing, hashes nothing, downloads nothing and packs nothing"

# worker1's copy of one file corrupted in place, its size and mtime kept: rsync's quick check passes it.
f=/var/lib/ddl/data/imgs/c5/img_0005.jpg
ddl exec --cluster data --nodes worker1 -- sh -c "cp -p $f /tmp/ddl-e2e-ref.$$ && printf XXXX | dd of=$f bs=1 seek=100 conv=notrunc 2>/dev/null && touch -r /tmp/ddl-e2e-ref.$$ $f && rm /tmp/ddl-e2e-ref.$$" ||
  fail "corrupting the file"
cmp -s imgs/c5/img_0005.jpg "$STATE/data/nodes/worker1/data/imgs/c5/img_0005.jpg" && fail "the file was not corrupted"
ddl --output json data stage data imgs >fix.json 2>fix.log || { cat fix.log; fail "stage after the corruption"; }
grep -q "\[worker1\] data imgs: 1 file(s) differ from the source (first: c5/img_0005.jpg)" fix.log ||
  { cat fix.log; fail "the corruption was not reported"; }
python3 - fix.json <<'PY' || { cat fix.log; fail "the report of the repairing stage"; }
import json, sys
nodes = {n["node"]: n for n in json.load(open(sys.argv[1]))["datasets"][0]["nodes"]}
assert nodes["worker1"]["sent_files"] == 0 and nodes["worker1"]["resent"] == 1, nodes
assert nodes["worker1"]["hashed"] == 2 and nodes["master"]["hashed"] == 0, nodes
PY
cmp -s imgs/c5/img_0005.jpg "$STATE/data/nodes/worker1/data/imgs/c5/img_0005.jpg" || fail "the file was not repaired"
# The same on worker2's copy of the dataset read from the shared folder: the node fetches it again itself.
f=/var/lib/ddl/data/from_shared/c2/img_0002.jpg
ddl exec --cluster data --nodes worker2 -- sh -c "cp -p $f /tmp/ddl-e2e-ref.$$ && printf XXXX | dd of=$f bs=1 seek=10 conv=notrunc 2>/dev/null && touch -r /tmp/ddl-e2e-ref.$$ $f && rm /tmp/ddl-e2e-ref.$$" ||
  fail "corrupting the file"
ddl --output json data stage data from_shared >fix2.json 2>fix2.log || { cat fix2.log; fail "stage from_shared after the corruption"; }
python3 -c 'import json,sys; n={x["node"]: x for x in json.load(open(sys.argv[1]))["datasets"][0]["nodes"]}; assert n["worker2"]["resent"]==1 and n["master"]["resent"]==0, n' fix2.json ||
  { cat fix2.log; fail "the corrupted copy of from_shared was not sent again"; }
cmp -s imgs/c2/img_0002.jpg "$STATE/data/nodes/worker2/data/from_shared/c2/img_0002.jpg" || fail "from_shared not repaired"
ddl --output json data stage data imgs --verify >v.json 2>v.log || { cat v.log; fail "stage --verify"; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["datasets"][0]; assert d["source_hashed"]==300 and all(n["hashed"]==300 and n["resent"]==0 for n in d["nodes"]), d' v.json ||
  fail "--verify did not hash every file"
ok "a file corrupted on a node (size and mtime kept) is found by its hash and sent again (from here, and from the shared folder); --verify hashes all"

echo more >>imgs/c0/img_0000.jpg
rc=0
ddl data status data imgs >st3.log 2>&1 || rc=$?
[ $rc = 1 ] && [ "$(grep -c ' stale ' st3.log)" = 3 ] || { cat st3.log; fail "a changed source is not stale (exit $rc)"; }
ddl --output json data stage data imgs >ch.json 2>ch.log || { cat ch.log; fail "stage after a source change"; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["datasets"][0]; assert [n["sent_files"] for n in d["nodes"]]==[1,1,1], d' ch.json ||
  fail "a changed source file was not sent once per node"
ok "a changed source file: stale in status, then sent once to each node"
ddl --output json data stage data packed >pk.json 2>pk.log || { cat pk.log; fail "stage packed after a source change"; }
expect_in pk.log "data packed: packed 300 images" "the shards were not packed again after a source change"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["datasets"][0]; assert [n["sent_files"] for n in d["nodes"]]==[3,3,3], d' pk.json ||
  { cat pk.json; fail "the repacked shard, class list and stamp were not sent once per node"; }
ok "convert: shards packs again when a source file changed, and the new shard is staged"

cat >read.py <<'PY'
import os
root = os.environ["DDL_DATA_IMGS"]
n = sum(len(files) for _, _, files in os.walk(root))
print("rank %s reads %s: %d files; web %s; shared %s" % (os.environ["DDL_RANK"], root, n,
      len(os.listdir(os.path.join(os.environ["DDL_DATA_WEB"], "part"))), os.environ["DDL_DATA_IMGS_SHARED"]), flush=True)
PY
ddl run -- python3 "$WORK/read.py" >run.log 2>&1 || { cat run.log; fail "ddl run reading the dataset"; }
[ "$(grep -c 'reads /var/lib/ddl/data/imgs: 300 files; web 20; shared /shared/ddl-data/imgs_shared' run.log)" = 3 ] ||
  { cat run.log; fail "not every rank read the staged copy"; }
id=$(ddl run -d -- python3 "$WORK/read.py") || fail "run -d"
# The queued job starts when the master's ddl-run gets to it: on a loaded machine, well after 20 s.
detached_read() { ddl logs "$id" 2>&1 | grep -q "reads /var/lib/ddl/data/imgs: 300 files"; }
WAIT_EVERY=0.5 wait_for 180 "the detached job $id to read the dataset" detached_read
ok "ddl run and ddl run -d ranks read the copies through DDL_DATA_IMGS, DDL_DATA_WEB, DDL_DATA_IMGS_SHARED"

cat >bad.yaml <<'EOF2'
apiVersion: ddl/v1
name: bad
target: local
local: {nodes: 1}
services: {nfs: {enabled: false}}
datasets:
  - {name: Imgs, source: ./imgs, to: local}
  - {name: b, source: ./imgs, to: shared}
EOF2
rc=0
ddl validate bad.yaml >bad.log 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "bad.yaml:7:12: error: datasets\[0\].name must be a dataset name" bad.log &&
  grep -q "bad.yaml:8:35: error: datasets\[1\].to: shared needs the cluster's shared folder" bad.log ||
  { cat bad.log; fail "a bad datasets section: exit $rc"; }
ok "a bad dataset name and to: shared without a shared folder: exit 2 at their line and column"
