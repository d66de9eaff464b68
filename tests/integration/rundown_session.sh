#!/usr/bin/env bash
# A real lttng-sessiond (private mount namespace) and jitprov-sim with 100k methods:
# `lttng start` on a session that enables the rundown events triggers a rundown (within
# 200 ms), SIGUSR2 triggers another; babeltrace2 (bt2) reads the trace: method records
# equal rundown_end.versions, nothing discarded, every field decodes, tiers are enum
# labels, method_load events are present.
#   rundown_session.sh SIM_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: rundown_session.sh SIM_BINARY}
require_lttng
enter_private_namespace "$@"
WORK=$(mktemp -d /tmp/jitprov-it.XXXXXX)

start_sessiond
start_sim --methods 100000 --rundown-trigger session,signal
setup_session it "$WORK/trace"
lttng start it >/dev/null || fail "lttng start"
started=$(date +%s%N)
wait_rundowns 1 30
kill -USR2 "$SIM_PID"
wait_rundowns 2 30
lttng stop it >/dev/null && lttng destroy it >/dev/null || fail "lttng stop/destroy"
first=$( (babeltrace2 "$WORK/trace" 2>/dev/null || true) | grep -m1 'jitprov_rundown:method:' || true)
[ -n "$first" ] || fail "babeltrace2 shows no method record"
echo "babeltrace2: $first"
$PY "$(dirname "$0")/check_trace.py" "$WORK/trace" --start-ns "$started" --max-start-latency-ms 200 \
  --expect-rundowns 2 --expect-trigger session,signal >"$WORK/check.json" || { cat "$WORK/check.json"; fail "trace checks"; }
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print("rundowns:", [(r["begin"]["trigger"], r["method_records"]) for r in d["rundowns"]], "start latency %.1f ms" % d["session_start_latency_ms"], "method_load", d["method_load"])' "$WORK/check.json"
pass "session and signal rundowns complete, decodable, nothing lost"
kill "$SIM_PID"; wait "$SIM_PID" || fail "jitprov-sim exit status $?"
rm -rf "$WORK"
