#!/usr/bin/env bash
# The schema check for ddl's request RSpecs: every golden RSpec (and a hand-written minimal one) must be
# valid against geni-rspec3-request-subset.xsd, and every file in broken/ must be rejected with the
# message its .expect file names (so a schema that accepts everything cannot pass).
# Usage: check_rspecs.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: check_rspecs.sh SOURCE_DIR}
here="$src/tests/schema"
xsd="$here/geni-rspec3-request-subset.xsd"
command -v xmllint >/dev/null || { echo "FAIL: xmllint not found (apt-get install libxml2-utils)"; exit 1; }
failed=0 good=0 bad=0
shopt -s nullglob
for f in "$here/valid-minimal.rspec" "$src"/tests/golden/*/expected/virtualwall/request.rspec; do
  if out=$(xmllint --noout --schema "$xsd" "$f" 2>&1); then
    good=$((good + 1))
  else
    echo "FAIL: $f is not valid:"; echo "$out"; failed=1
  fi
done
for f in "$here"/broken/*.rspec; do
  want=$(cat "${f%.rspec}.expect")
  if out=$(xmllint --noout --schema "$xsd" "$f" 2>&1); then
    echo "FAIL: broken RSpec $f was accepted"; failed=1
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: $f was rejected, but not with \"$want\":"; echo "$out"; failed=1
  else
    bad=$((bad + 1))
  fi
done
[ "$good" -ge 3 ] || { echo "FAIL: only $good valid RSpecs checked (golden cases missing?)"; failed=1; }
[ "$bad" -ge 5 ] || { echo "FAIL: only $bad broken RSpecs checked"; failed=1; }
[ "$failed" -eq 0 ] && echo "ok: $good RSpecs valid, $bad broken ones rejected for the expected reason"
exit "$failed"
