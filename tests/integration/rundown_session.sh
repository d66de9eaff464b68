#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real lttng-sessiond (private mount namespace) and jitprov-sim with 100k methods:
# `lttng start` on a session that enables the rundown events triggers a rundown (within
# 200 ms), SIGUSR2 triggers another; babeltrace2 shows the records, and jitprov-verify
# (libbabeltrace2) reads the trace: method records equal rundown_end.versions, nothing
# discarded, every field decodes, tiers are enum labels, method_load events are present.
#   rundown_session.sh SIM_BINARY VERIFY_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: rundown_session.sh SIM_BINARY VERIFY_BINARY}
VERIFY=${2:?usage: rundown_session.sh SIM_BINARY VERIFY_BINARY}
require_lttng
enter_private_namespace "$@"
WORK=$(work_dir jitprov-it)

start_sessiond
start_sim --methods 100000 --rundown-trigger session,signal
setup_session it "$WORK/trace"
lttng start it >/dev/null || fail "lttng start"
started=$(date +%s%N)
wait_rundowns 1 30
kill -USR2 "$SIM_PID"
wait_rundowns 2 30
lttng stop it >/dev/null && lttng destroy it >/dev/null || fail "lttng stop/destroy"
first=$(PYTHONPATH="$(dirname "$0")" $PY -c '
import json, sys
from bt2read import events
print(json.dumps(next(f for _, f in events(sys.argv[1], ["jitprov_rundown:method"]))))' "$WORK/trace") ||
  fail "babeltrace2 (python3-bt2) shows no method record"
echo "first record, as babeltrace2 decodes it: $first"
# jitprov-verify (libbabeltrace2): records = rundown_end counts, fields decode (tier
# labels among the five), nothing discarded; then what this test adds.
"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/verify.json"; fail "jitprov-verify exit $rc"; }
$PY - "$WORK/verify.json" "$started" <<'PY' || fail "trace checks"
import json, sys
d = json.load(open(sys.argv[1])); started = int(sys.argv[2])
assert len(d["sessions"]) == 1 and len(d["sessions"][0]["processes"]) == 1, d["sessions"]
s = d["sessions"][0]; p = s["processes"][0]
rs = p["rundowns"]
assert len(rs) == 2, "expected 2 rundowns, got %d" % len(rs)
assert sorted(r["trigger"] for r in rs) == ["session", "signal"], [r["trigger"] for r in rs]
assert p["method_load"] > 0, "no method_load events"
assert s["discarded_events"] == 0
for r in rs:
    assert r["method_records"] == r["rundown_end"]["versions"] >= 100000, r
session = [r for r in rs if r["trigger"] == "session"][0]
latency_ms = (session["begin_ns"] - started) / 1e6
assert latency_ms <= 200, "session rundown began %.1f ms after lttng start" % latency_ms
print("rundowns:", [(r["trigger"], r["method_records"]) for r in rs], "start latency %.1f ms" % latency_ms,
      "method_load", p["method_load"])
PY
pass "session and signal rundowns complete, decodable, nothing lost"
# G2 by a second reader (babeltrace2's Python bindings, strings by their length): the
# sim's signatures include "" beside non-empty ones, which babeltrace2 2.0.4's plain
# string value shows as the previous record's. Only versions published while the session
# recorded have a method_load (a few hundred: the rest were compiled before it began).
PYTHONPATH="$(dirname "$0")" $PY "$(dirname "$0")/g2check.py" --min-records 200 "$WORK/trace" ||
  fail "G2 by the second reader (g2check.py)"
pass "every rundown record equals its method_load field by field (second reader)"
kill "$SIM_PID"; wait "$SIM_PID" || fail "jitprov-sim exit status $?"
rm -rf "$WORK"
