#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Each probes/bpftrace script against a running jitprov-sim (locked rundowns every
# second, so that waits during a rundown exist): the output has what the script
# promises.    bpftrace_scripts.sh SIM_BINARY SCRIPT_DIR
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: bpftrace_scripts.sh SIM_BINARY SCRIPT_DIR}
DIR=${2:?usage: bpftrace_scripts.sh SIM_BINARY SCRIPT_DIR}
require_root
require_cmd bpftrace
enter_private_namespace "$@"
WORK=$(work_dir jitprov-it)
start_sim --methods 50000 --rundown locked --rundown-trigger every:1 --duration 30
# run_script NAME: 3.5 s of tracing from the script's "Tracing ..." line (its BEGIN, once
# its programs are loaded), then SIGINT (prints the maps). Was 3.5 s from bpftrace's
# launch, of which loading the programs can take 1-3 s on a loaded machine.
tracing_or_exited() { grep -q '^Tracing ' "$1" 2>/dev/null || exited "$2"; }
run_script() {
  bpftrace -p "$SIM_PID" "$DIR/$1.bt" >"$WORK/$1.out" 2>"$WORK/$1.err" &
  local bt=$! rc
  track_pid "$bt"
  poll 60 tracing_or_exited "$WORK/$1.out" "$bt"
  grep -q '^Tracing ' "$WORK/$1.out" || { cat "$WORK/$1.err"; fail "$1.bt did not begin tracing in 60 s"; }
  sleep 3.5
  kill -INT "$bt" 2>/dev/null
  poll 60 exited "$bt" || { kill -KILL "$bt"; fail "$1.bt still running 60 s after SIGINT"; }
  wait "$bt"
  rc=$?
  [ $rc -eq 0 ] || { cat "$WORK/$1.err"; fail "$1.bt exited $rc"; }
}
run_script lockwait
grep -qE '^@wait_us\[2, outside\]:' "$WORK/lockwait.out" || fail "lockwait.bt: no tier1_publish waits outside rundowns"
grep -qE '^@wait_us\[[0-9], rundown\]:' "$WORK/lockwait.out" || fail "lockwait.bt: no waits during a rundown"
grep -qE '^@max_wait_us\[7, rundown\]:' "$WORK/lockwait.out" || fail "lockwait.bt: the locked rundown's own acquisition (site 7) is missing"
grep -qE '^@blocked_ns\[[1-6], 7\]: [1-9]' "$WORK/lockwait.out" || fail "lockwait.bt: no JIT wait blamed on the locked rundown (site 7)"
grep -qE '^@jit_blocked_by_rundown_ns: [1-9]' "$WORK/lockwait.out" || fail "lockwait.bt: no JIT time blocked by the locked rundown"
pass "lockwait.bt: waits by site and rundown state, blamed on the holder: $(grep '^@jit_blocked_by_rundown_us' "$WORK/lockwait.out")"
run_script rundown
# METHODS: the methods with records (rundown_end's methods): of the 50 000 registered,
# those compiled by then.
rows=$(grep -E '^[0-9]+ +1 +5 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$' "$WORK/rundown.out" |
  awk '$5 >= 1 && $5 <= 50000 && $6 >= $5' | wc -l)
[ "$rows" -ge 2 ] || { cat "$WORK/rundown.out"; fail "rundown.bt: expected >= 2 rows of locked (1) every (5) rundowns, each of at most 50000 methods"; }
pass "rundown.bt: $rows rundowns with duration, versions and rate"
run_script jitpath
grep -qE '^@jit_us\[1\]:' "$WORK/jitpath.out" || fail "jitpath.bt: no tier1 JIT paths"
grep -qE '^@count\[0\]: [0-9]+' "$WORK/jitpath.out" || fail "jitpath.bt: no tier0 count"
grep -qE '^@during_rundown\[[0-9]\]: [1-9]' "$WORK/jitpath.out" || fail "jitpath.bt: no JIT path during the locked rundowns"
# Latencies the runtime measured: above 0 and below the test's 30 s; paths begun before
# the script attached (at most one per JIT thread) reported apart.
awk -F': ' '/^@max_us\[/ { n++; if ($2 + 0 <= 0 || $2 + 0 >= 30000000) bad = bad " " $0 }
           /^@unmeasured: / && $2 + 0 > 2 { bad = bad " " $0 }
           END { if (bad != "" || n == 0) { print "jitpath.bt:" bad " (" n " tiers)"; exit 1 } }' "$WORK/jitpath.out" ||
  fail "jitpath.bt: implausible latencies or unmeasured paths"
pass "jitpath.bt: JIT-path latency by tier, during rundowns too"
rm -rf "$WORK"
