#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jitprov attached to a running .NET app (docs/dotnet.md, "Attach"): the generated
# workload starts WITHOUT jitprov and, 2.5 s in, while it JITs, tiers up and unloads a
# collectible context every round, `jitprov attach` (tools/jitprov/clr_attach.cc) loads the .NET client over CoreCLR's
# diagnostics IPC; the client enumerates the code JIT'd before and mirrors the rest from
# its session. Into a real lttng session:
#  - the attach exits 0; its line names the runtime's version;
#  - jitprov's rundowns pass jitprov-verify (lossless, G2, ...);
#  - at a quiet moment (nothing left to unload, as dotnet_client.sh) CoreCLR's own
#    rundown and jitprov's around it report the same JIT'd bodies: every one of
#    CoreCLR's in jitprov's next rundown with the same address, size and name
#    (namespace, name, signature), none in jitprov's previous one that CoreCLR lacks
#    (nothing stale) (dotnet_attach_check.py);
#  - a second attach: "already loaded" (9), nothing registered twice (one catch-up).
# Bad targets: DOTNET_EnableDiagnostics=0 -> 7 (attach disabled); the client loaded at
# start-up (CORECLR_* environment) -> 9 (already loaded), its catch-up never run; a
# stopped process (SIGSTOP) -> 10 (timed out) within the 2 s timeout, and after SIGCONT
# it runs on and exits 0.
#   dotnet_attach.sh PROFILER_SO JITPROV VERIFY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
USAGE="usage: dotnet_attach.sh PROFILER_SO JITPROV VERIFY SOURCE_DIR"
PROFILER=${1:?$USAGE}
ATTACH=${2:?$USAGE}
VERIFY=${3:?$USAGE}
SRC=${4:?$USAGE}
require_lttng
require_cmd dotnet
enter_private_namespace "$@"
WORK=$(mktemp -d /tmp/jitprov-attach.XXXXXX)
AGENT=$(realpath "$PROFILER") || fail "no $PROFILER"
mono_ns() { $PY -c 'import time; print(time.monotonic_ns())'; }

build_dotnet_workload "$SRC" 20 100
APP=(dotnet "$WORK/wl/out/JitWork.dll")

# wait_for FILE WORD: the workload's ready file says WORD (at most 60 s).
wait_for() {
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# --- bad targets ------------------------------------------------------------------------
# attach_rc PID [OPTIONS...]: the harness's exit status, its line in $WORK/attach.out.
attach_rc() {
  local pid=$1; shift
  "$ATTACH" attach "$pid" --agent "$AGENT" "$@" >"$WORK/attach.out" 2>&1
}
DOTNET_EnableDiagnostics=0 "${APP[@]}" --seconds 3 >"$WORK/bad.out" 2>&1 &
pid=$!
track_pid "$pid"
sleep 1
attach_rc "$pid"; rc=$?
[ $rc -eq 7 ] && grep -q "no diagnostics socket" "$WORK/attach.out" ||
  fail "DOTNET_EnableDiagnostics=0: exit $rc (want 7): $(cat "$WORK/attach.out")"
wait "$pid" || fail "DOTNET_EnableDiagnostics=0: the app failed: $(cat "$WORK/bad.out")"

CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}' CORECLR_PROFILER_PATH="$AGENT" \
  JITPROV_DOTNET="perfmap=off,verbose,stats=$WORK/startup.json" "${APP[@]}" --seconds 3 >"$WORK/startup.out" 2>&1 &
pid=$!
track_pid "$pid"
sleep 1.5
attach_rc "$pid" --options verbose; rc=$?
[ $rc -eq 9 ] && grep -q "already" "$WORK/attach.out" ||
  fail "the client loaded at start-up: exit $rc (want 9): $(cat "$WORK/attach.out")"
wait "$pid" || fail "the client loaded at start-up: the app failed: $(cat "$WORK/startup.out")"
[ "$(grep -c '^jitprov-dotnet: \(loaded in\|attached to\)' "$WORK/startup.out")" -eq 1 ] &&
  ! grep -q "caught up" "$WORK/startup.out" || fail "the client started twice: $(cat "$WORK/startup.out")"

"${APP[@]}" --seconds 4 >"$WORK/stopped.out" 2>&1 &
pid=$!
track_pid "$pid"
sleep 1
kill -STOP "$pid"
t0=$(mono_ns)
attach_rc "$pid" --timeout 2; rc=$?
took_ms=$((($(mono_ns) - t0) / 1000000))
kill -CONT "$pid"
[ $rc -eq 10 ] && [ "$took_ms" -lt 3000 ] ||
  fail "a stopped process: exit $rc in $took_ms ms (want 10 within 2 s): $(cat "$WORK/attach.out")"
wait "$pid" && grep -q "^JitWork: " "$WORK/stopped.out" ||
  fail "the stopped process did not run on after SIGCONT: $(cat "$WORK/stopped.out")"
pass "DOTNET_EnableDiagnostics=0: 7; the client loaded at start-up: 9, started once; a stopped process: 10 in $took_ms ms, and it ran on after SIGCONT"

# --- the attach under churn, then the cross-check ------------------------------------------
CLR="$WORK/cr/out/jitprov-clr-rundown"
start_sessiond
setup_session attach "$WORK/trace"
lttng start attach >/dev/null || fail "lttng start"
# CoreCLR's own record of its unloads (a startup EventPipe file session: no profiler),
# which says that nothing was unloaded while CoreCLR's rundown ran.
DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$WORK/loads-{pid}.nettrace" \
  DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x18:5' \
  "${APP[@]}" --seconds 6 --alc-every 1 --quiet 6 --ready "$WORK/ready" >"$WORK/app.out" 2>&1 &
APP_PID=$!
track_pid "$APP_PID"
sleep 2.5
mono_ns >"$WORK/attached"
attach_rc "$APP_PID" --options "trigger=session,every:1,perfmap=off,verbose,stats=$WORK/client.json" ||
  fail "attach: exit $?: $(cat "$WORK/attach.out")"
cat "$WORK/attach.out"
grep -q "^jitprov: attached to PID $APP_PID: CoreCLR [0-9]" "$WORK/attach.out" || fail "attach line"
attach_rc "$APP_PID"; rc=$?
[ $rc -eq 9 ] || fail "a second attach: exit $rc (want 9): $(cat "$WORK/attach.out")"
wait_for "$WORK/ready" quiet || { cat "$WORK/app.out" >&2; fail "the workload did not reach its quiet phase"; }
read -r _ pid quiet_ns <"$WORK/ready"
echo "$quiet_ns" >"$WORK/quiet"
sleep 1.5  # a jitprov rundown (every:1) inside the quiet phase
date +%s%N >"$WORK/window"
"$CLR" rundown "$APP_PID" "$WORK/clr.tsv" >"$WORK/clr.txt" || fail "CoreCLR's rundown (jitprov-clr-rundown)"
date +%s%N >>"$WORK/window"
cat "$WORK/clr.txt"
sleep 2
wait "$APP_PID"; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/app.out" >&2; fail "the workload exit status $rc"; }
read -r _ done_ns <"$WORK/ready" && echo "$done_ns" >>"$WORK/quiet"
lttng stop attach >/dev/null && lttng destroy attach >/dev/null || fail "lttng stop/destroy"
grep "^jitprov-dotnet: caught up" "$WORK/app.out" || fail "no catch-up: $(cat "$WORK/app.out")"
[ "$(grep -c '^jitprov-dotnet: caught up' "$WORK/app.out")" -eq 1 ] || fail "two catch-ups: $(cat "$WORK/app.out")"
"$CLR" loads "$WORK/loads-$APP_PID.nettrace" "$WORK/loads.tsv" "$WORK/unloads.tsv" ||
  fail "read CoreCLR's MethodUnloadVerbose and ModuleUnload events"
"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
[ $rc -eq 0 ] || { head -c 3000 "$WORK/verify.json" >&2; fail "jitprov-verify exit $rc"; }
"$VERIFY" "$WORK/trace" | head -1
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/dotnet_attach_check.py" "$WORK" "$APP_PID" ||
  fail "cross-check with CoreCLR's own rundown"
pass "attached under churn: rundowns verified and identical to CoreCLR's own rundown; a second attach refused"
rm -rf "$WORK"
