#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults in the middle of a rundown. The rundown channel is made tiny and blocking, so
# the rundown thread spends seconds waiting for buffer space; then
#   1. the session is destroyed, and
#   2. lttng-sessiond is killed with SIGKILL.
# Each time: the sim keeps running, its JIT threads keep calling and compiling while
# the rundown is stuck, the rundown finishes, and a new session (and daemon) works.
#   rundown_faults.sh SIM_BINARY VERIFY_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: rundown_faults.sh SIM_BINARY VERIFY_BINARY}
VERIFY=${2:?usage: rundown_faults.sh SIM_BINARY VERIFY_BINARY}
require_lttng
enter_private_namespace "$@"
WORK=$(work_dir jitprov-it)

fault_round() {  # fault_round KIND EXPECTED_RUNDOWNS_BEFORE
  local kind=$1 before=$2 c1 c2 c3
  setup_session "f$kind" "$WORK/trace-$kind" --subbuf-size=4096 --num-subbuf=2 --blocking-timeout=inf
  lttng start "f$kind" >/dev/null || fail "lttng start"
  sleep 0.5
  [ "$(sim_stat 'len(d["rundowns"])')" -eq "$before" ] || fail "$kind: the rundown should still be stuck on the tiny buffer"
  c1=$(sim_stat 'd["jit"]["calls"]')
  sleep 0.5
  c2=$(sim_stat 'd["jit"]["calls"]')
  [ "$c2" -gt "$c1" ] || fail "$kind: JIT threads made no progress while the rundown was stuck ($c1 -> $c2)"
  case $kind in
    destroy) lttng destroy "f$kind" >/dev/null || fail "lttng destroy" ;;
    kill) kill -9 "$SESSIOND_PID"; wait "$SESSIOND_PID" 2>/dev/null ;;
  esac
  wait_rundowns $((before + 1)) 20
  kill -0 "$SIM_PID" || fail "$kind: jitprov-sim died"
  c3=$(sim_stat 'd["jit"]["calls"]')
  [ "$c3" -gt "$c2" ] || fail "$kind: JIT threads stopped after the fault"
  pass "$kind in mid-rundown: sim alive, JIT calls $c1 -> $c2 -> $c3, rundown finished"
}

start_sessiond
start_sim --methods 200000 --rundown-trigger session,signal
fault_round destroy 0
fault_round kill 1
# A new daemon and a new session work: a complete, lossless rundown.
start_sessiond
setup_session after "$WORK/trace-after"
lttng start after >/dev/null || fail "lttng start after the faults"
wait_rundowns 3 30
lttng stop after >/dev/null && lttng destroy after >/dev/null
"$VERIFY" --json "$WORK/trace-after" >"$WORK/verify.json" || { cat "$WORK/verify.json"; fail "trace after the faults"; }
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); rs=[r for s in d["sessions"] for p in s["processes"] for r in p["rundowns"]]; assert rs and all(r["trigger"] in ("signal", "session") for r in rs), rs' \
  "$WORK/verify.json" || fail "no rundown in the trace after the faults"
pass "new daemon and session after the faults: complete rundown"
[ "$(sim_stat 'd["jit"]["errors"]')" -eq 0 ] || fail "runtime API errors in the sim"
kill "$SIM_PID"; wait "$SIM_PID" || fail "jitprov-sim exit status $?"
rm -rf "$WORK"
