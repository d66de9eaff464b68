#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The .NET client on a real CoreCLR (the SDK's runtime) running jitprov's generated C#
# workload (tier-ups, OSR, dynamic methods, collectible contexts unloaded, a child
# process):
#  - a bad configuration (bad options, a wrong path, a wrong class id) costs one line
#    at most and the app runs on untraced; help lists the options;
#  - parent and child are each traced; nothing went unmirrored but what the client
#    counts (precompiled code);
#  - its rundowns into a real lttng session pass jitprov-verify and g2check.py;
#  - CoreCLR's own rundown at a quiet moment (EventPipe, read by TraceEvent) and
#    jitprov's rundowns around it report the same bodies: same address, size and name,
#    and the tier CoreCLR's own MethodLoadVerbose gave (a startup EventPipe file session);
#  - the app runs on when its session is destroyed or lttng-sessiond killed mid-rundown.
#   dotnet_client.sh PROFILER_SO VERIFY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
PROFILER=${1:?usage: dotnet_client.sh PROFILER_SO VERIFY SOURCE_DIR}
VERIFY=${2:?usage: dotnet_client.sh PROFILER_SO VERIFY SOURCE_DIR}
SRC=${3:?usage: dotnet_client.sh PROFILER_SO VERIFY SOURCE_DIR}
require_lttng
require_cmd dotnet
enter_private_namespace "$@"
WORK=$(work_dir jitprov-dotnet)

# --- build the workload and CoreCLR's own view ------------------------------------------
build_dotnet_workload "$SRC" 20 100
APP=(dotnet "$WORK/wl/out/JitWork.dll")

export CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}'
CORECLR_PROFILER_PATH=$(realpath "$PROFILER") || fail "no $PROFILER"
export CORECLR_PROFILER_PATH

# --- options -------------------------------------------------------------------------
# (--settle 0: the app's 1.5 s wait for the tiering worker at its end serves the rundowns
# below, not these runs: 20 s of the test's 80 before.)
# refused OPTIONS LINE: the client says why in one line, and the app runs on untraced.
refused() {
  JITPROV_DOTNET="$1" "${APP[@]}" --seconds 0 --settle 0 >"$WORK/out" 2>&1 || fail "$1 stopped the app: $(cat "$WORK/out")"
  [ "$(grep -c '^jitprov-dotnet:' "$WORK/out")" -eq 1 ] &&
    grep -qP "^jitprov-dotnet: \Q$2\E \(JITPROV_DOTNET=help lists the options\); pid [0-9]+ runs untraced$" \
      "$WORK/out" && grep -q "^JitWork: " "$WORK/out" || fail "$1: $(cat "$WORK/out")"
}
refused bogus "unknown option 'bogus'"
refused trigger=session,signal "trigger=session,signal: no signal trigger (the .NET runtime owns its signals)"
refused rate=-1 "rate=-1: not a number of events per second (0 to 18446744073709551615)"
refused stats=/dev/full "stats=/dev/full: exists and is not a regular file"
refused perfmap= "perfmap=: empty (perfmap=off turns the perf map off)"
refused mirror=maybe "mirror=maybe: not on or off"
refused toggle=maybe "toggle=maybe: not on or off"
refused calibrate=-5 "calibrate=-5: not a count of nanoseconds up to 1000000000"
refused calibrate=1us "calibrate=1us: not a count of nanoseconds up to 1000000000"
refused mirror=off,calibrate=10 "calibrate=: nothing to calibrate with mirror=off"
# mirror=off (the benchmark's floor: the session alone): the same events counted,
# nothing mirrored, no perf map.
JITPROV_DOTNET="mirror=off,perfmap=$WORK,stats=$WORK/off.json" "${APP[@]}" --seconds 1 --settle 0 >"$WORK/out" 2>&1 ||
  fail "mirror=off: $(cat "$WORK/out")"
$PY - "$WORK/off.json" <<'PY' || fail "mirror=off: $(cat "$WORK/off.json" 2>&1)"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["mirror"] == "off" and s["load_events"] > 500 and s["events"] > s["load_events"], s
PY
! ls "$WORK"/perf-*.map >/dev/null 2>&1 || fail "mirror=off wrote a perf map"
# toggle=on (tools/bench/dotnet-cost's per-body series): the app stops and restarts the
# client's session round by round; while it is stopped nothing reaches the client, and
# the stops are counted and said. Without toggle=on the call is refused. calibrate=NS
# adds at least NS to each load callback (a busy wait: the bench must find it).
TOGGLE=(--toggle "$WORK/rounds.txt" --rounds 16 --toggle-methods 100)
JITPROV_DOTNET="stats=$WORK/all.json" "${APP[@]}" "${TOGGLE[@]}" --toggle-aa >"$WORK/out" 2>&1 ||
  fail "toggle-aa: $(cat "$WORK/out")"
cp "$WORK/rounds.txt" "$WORK/rounds-aa.txt"
JITPROV_DOTNET="stats=$WORK/none.json" "${APP[@]}" "${TOGGLE[@]}" >"$WORK/out" 2>&1 &&
  fail "toggle without toggle=on ran: $(cat "$WORK/out")"
grep -q "^JitWork: jitprov_dotnet_session(1) returned -2 (JITPROV_DOTNET needs toggle=on)$" "$WORK/out" ||
  fail "toggle without toggle=on: $(cat "$WORK/out")"
JITPROV_DOTNET="toggle=on,calibrate=20000,stats=$WORK/toggled.json" "${APP[@]}" "${TOGGLE[@]}" >"$WORK/out" 2>&1 ||
  fail "toggle=on: $(cat "$WORK/out")"
$PY - "$WORK/rounds.txt" "$WORK/rounds-aa.txt" "$WORK/toggled.json" "$WORK/all.json" "$WORK/out" <<'PY' ||
import json, sys
rows = [l.split() for l in open(sys.argv[1])]
states = [r[1] for r in rows]
# Blocks of eight, each state four times, once at each place of four.
assert states == ["on", "off", "off", "on", "off", "on", "on", "off"] * 2, states
assert all(int(r[2]) > 0 and int(r[3]) > 0 and int(r[4]) >= 100 for r in rows), rows  # CPU, wall, bodies
t, a = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
stops = sum(1 for p, q in zip(states, states[1:]) if p == "on" and q == "off")
assert t["session_stops"] == stops and a["session_stops"] == 0, (t["session_stops"], stops)
off_bodies = sum(int(r[4]) for r in rows if r[1] == "off")
on_bodies = sum(int(r[4]) for r in rows if r[1] == "on")
# What ran while the session was stopped did not reach the client; what ran while it
# was on (restarted) did.
assert t["loads"] <= a["loads"] - off_bodies // 2, (t["loads"], a["loads"], off_bodies)
assert t["loads"] >= on_bodies // 2, (t["loads"], on_bodies)
assert t["load_callback"]["count"] >= on_bodies // 2, t["load_callback"]
assert t["load_callback"]["total_ns"] >= 20000 * t["load_callback"]["count"], t["load_callback"]
out = open(sys.argv[5]).read()
assert ("jitprov-dotnet: the app stopped the client's session %d times (toggle=on): what ran meanwhile is not "
        "mirrored\n" % stops) in out, out
PY
  fail "toggle=on: $(cat "$WORK/toggled.json" "$WORK/out" 2>&1)"
JITPROV_DOTNET=help "${APP[@]}" --seconds 0 --settle 0 >"$WORK/out" 2>&1 || fail "help: exit $?"
grep -q "perfmap=DIR|off" "$WORK/out" && ! grep -q "JitWork:" "$WORK/out" || fail "help: $(cat "$WORK/out")"
CORECLR_PROFILER='{00000000-0000-0000-0000-000000000001}' "${APP[@]}" --seconds 0 --settle 0 >"$WORK/out" 2>&1 ||
  fail "a wrong class id stopped the app"
grep -q "jitprov-dotnet: CORECLR_PROFILER is not" "$WORK/out" || fail "wrong class id: $(cat "$WORK/out")"
# A path to no library: CoreCLR cannot load the client, says nothing, and runs the app.
CORECLR_PROFILER_PATH=/nonexistent/libjitprov-dotnet.so "${APP[@]}" --seconds 0 --settle 0 >"$WORK/out" 2>&1 ||
  fail "a wrong CORECLR_PROFILER_PATH stopped the app: $(cat "$WORK/out")"
grep -q "^JitWork: " "$WORK/out" || fail "wrong path: $(cat "$WORK/out")"
pass "bad options cost one line and the app runs on untraced; help lists them; a wrong class id is named; a wrong path runs untraced; mirror=off counts the events and mirrors nothing; toggle=on stops the session (counted), refused without it; calibrate=NS adds NS"

# --- the traced run ----------------------------------------------------------------------
start_sessiond
setup_session dotnet "$WORK/trace"
lttng start dotnet >/dev/null || fail "lttng start"
# CoreCLR's own record of every JIT'd body with its tier, and of what it unloaded: an
# EventPipe file session from start-up (JIT and loader keywords, verbose; one file per
# process: the child inherits it). Not DOTNET_EventPipeRundown=0: it turns off the
# rundown of every session of the process, the one compared below included.
DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$WORK/loads-{pid}.nettrace" \
  DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x18:5' \
  JITPROV_DOTNET="trigger=session,every:1,exit,perfmap=$WORK,stats=$WORK/client-%p.json" \
  "${APP[@]}" --seconds 6 --quiet 6 --ready "$WORK/ready" --child >"$WORK/app.out" 2>&1 &
APP_PID=$!
track_pid "$APP_PID"
for _ in $(seq 600); do grep -q quiet "$WORK/ready" 2>/dev/null && break; sleep 0.1; done
grep -q quiet "$WORK/ready" 2>/dev/null || { cat "$WORK/app.out" >&2; fail "the workload did not reach its quiet phase"; }
read -r _ pid quiet_ns <"$WORK/ready"
[ "$pid" = "$APP_PID" ] || fail "the workload's pid $pid is not $APP_PID"
echo "$quiet_ns" >"$WORK/quiet"  # when the quiet phase began (CLOCK_MONOTONIC ns)
sleep 2.5  # a rundown (every:1) inside the quiet phase (of 6 s): two periods, for a loaded machine's slower ones
# CoreCLR's own rundowns run only when nothing is being unloaded: CoreCLR (9.0.23 and
# 10.0.12-10.0.15 measured, the SDK's 10.0.12 included) reads freed memory and kills the
# app when a collectible context is unloaded while its rundown walks (docs/dotnet.md,
# "CoreCLR's rundown and collectible code"; tools/bench/dotnet-crash). This one is taken
# in the quiet phase, which the workload enters only once every collectible context it
# made is unloaded; the startup file sessions' rundowns at exit (parent and child) come
# after their work too (and at exit, before it, CoreCLR walks its code once more to say
# what it unloads: every module). The cross-check says it held: this rundown began in the
# quiet phase, and CoreCLR's own record has no unload in the quiet phase.
date +%s%N >"$WORK/window"  # jitprov's rundown before CoreCLR's ends before this ...
"$CLR" rundown "$APP_PID" "$WORK/clr.tsv" >"$WORK/clr.txt" || fail "CoreCLR's rundown (jitprov-clr-rundown)"
date +%s%N >>"$WORK/window"  # ... and the one after begins after this
cat "$WORK/clr.txt"
sleep 2
wait "$APP_PID"; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/app.out" >&2; fail "the workload exit status $rc"; }
read -r _ done_ns <"$WORK/ready" && echo "$done_ns" >>"$WORK/quiet"  # and when it ended
lttng stop dotnet >/dev/null && lttng destroy dotnet >/dev/null || fail "lttng stop/destroy"
grep -E "^JitWork: child [0-9]+ exited 0" "$WORK/app.out" >/dev/null || fail "child: $(cat "$WORK/app.out")"
"$CLR" loads "$WORK/loads-$APP_PID.nettrace" "$WORK/loads.tsv" "$WORK/unloads.tsv" ||
  fail "read CoreCLR's MethodLoadVerbose, MethodUnloadVerbose and ModuleUnload events"

"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
# An every:1 rundown in flight at lttng stop or at the app's exit is cut: accepted when
# that is all (stop_cut_only); the loaded machine's slower rundowns make it likelier.
[ $rc -eq 4 ] && stop_cut_only "$WORK/verify.json" && rc=0
[ $rc -eq 0 ] || verify_failed "$WORK/verify.json" $rc
"$VERIFY" "$WORK/trace" | head -1
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/g2check.py" --min-records 2000 "$WORK/trace" ||
  fail "G2 by the second reader (g2check.py)"
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/dotnet_crosscheck.py" "$WORK" "$APP_PID" ||
  fail "cross-check with CoreCLR's own rundown"
pass ".NET rundowns verified and identical to CoreCLR's own rundown"
# The client's account of its own CPU time (own_cpu), parent and child: every event it
# mirrored among its callbacks, its start and its threads (the rundown thread, lttng-ust's).
$PY - "$WORK"/client-*.json <<'PY' || fail "the client's own CPU account"
import json, sys
assert len(sys.argv) == 3, "stats of %d processes, not 2 (the app and its child)" % (len(sys.argv) - 1)
for f in sys.argv[1:]:
    c = json.load(open(f))
    o = c["own_cpu"]
    assert o["timed"] and o["callbacks"] >= c["loads"] + c["unloads"] > 0, (o["callbacks"], c["loads"], c["unloads"])
    names = sorted({t["name"] for t in o["threads"]})
    assert names == ["jitprov-rundown", "lttng-ust"], names
    assert o["start_ns"] > 0 and o["callbacks_wall_ns"] > 0 and o["threads_ns"] > 0, o
    print("pid %d: the client's own CPU %.1f ms (callbacks %.1f ms for %d, start %.1f ms, threads %.1f ms)" % (
        c["pid"], o["total_ns"] / 1e6, o["callbacks_wall_ns"] / 1e6, o["callbacks"], o["start_ns"] / 1e6,
        o["threads_ns"] / 1e6))
PY

# --- the session destroyed, then lttng-sessiond killed, each in mid-rundown ------------
# A rundown channel of two 4 KiB buffers that blocks keeps the client's session rundown
# stuck while the app runs; then the fault. The app must run on and end as it would.
for kind in destroy kill; do
  setup_session "f$kind" "$WORK/trace-$kind" --subbuf-size=4096 --num-subbuf=2 --blocking-timeout=inf
  lttng start "f$kind" >/dev/null || fail "lttng start f$kind"
  JITPROV_DOTNET="trigger=session,perfmap=off,stats=$WORK/fault-$kind.json" "${APP[@]}" --seconds 4 \
    >"$WORK/fault.out" 2>&1 &
  pid=$!
  track_pid "$pid"
  sleep 2
  kill -0 "$pid" 2>/dev/null || { cat "$WORK/fault.out" >&2; fail "$kind: the app ended before the fault"; }
  case $kind in
    destroy) lttng destroy "f$kind" >/dev/null || fail "lttng destroy" ;;
    kill) kill -9 "$SESSIOND_PID"; wait "$SESSIOND_PID" 2>/dev/null ;;
  esac
  wait "$pid"; rc=$?
  [ $rc -eq 0 ] && grep -q "^JitWork: " "$WORK/fault.out" || { cat "$WORK/fault.out" >&2; fail "$kind: app exit $rc"; }
  $PY - "$WORK/fault-$kind.json" "$kind" <<'PY' || fail "$kind: the client's counters"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["loads"] > 1000 and c["not_mirrored"]["errors"] == 0, c
print("ok: %s in mid-rundown: the app ran on and exited 0; client: %d loads, %d rundowns completed" %
      (sys.argv[2], c["loads"], c["rundowns"]))
PY
done
pass "the app runs on when its lttng session is destroyed or lttng-sessiond killed mid-rundown"
rm -rf "$WORK"
