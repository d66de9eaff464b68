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
#  - the catch-up raced by unloads: the client's test hook catchup_delay_ms=3000 holds
#    it between its resolution of the enumerated methods and their turns while the
#    workload unloads a context every round, so unloads land inside it: they are counted
#    (catch_up.unloaded > 0), the attach answers within its timeout (no deadlock between
#    the unload callbacks and CoreCLR's code heap lock), the app lives (3 s is long
#    enough for CoreCLR to free an unloaded context's MethodDescs: a catch-up that read
#    an enumerated method of one killed the app with SIGSEGV, 2026-12), and the
#    cross-check still holds;
#  - a second attach: CoreCLR's ALREADY_ACTIVE with the client's ready mark, "already
#    loaded" (9): nothing registered twice (one catch-up).
# Bad targets: DOTNET_EnableDiagnostics=0 -> 7 (attach disabled); the client loaded at
# start-up (CORECLR_* environment) -> 9 (already loaded, decided by the IPC's answer,
# not the maps), its catch-up never run; bad options -> 11 (the client refused them),
# then a good attach of the same process -> 0 (a refusal leaves nothing behind); a
# stopped process (SIGSTOP) -> 10 (timed out) within the 2 s timeout, and after SIGCONT
# it runs on and exits 0; a runtime paused at its start (not yet available) -> 1 with
# the tries, then attached once resumed. Every refused attach: exit status, one line on stderr,
# nothing on stdout (expect).
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
WORK=$(work_dir jitprov-attach)
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
# expect STATUS LINE_REGEX PID [OPTIONS...]: `jitprov attach` exits STATUS and prints one
# line on stderr matching LINE_REGEX, nothing on stdout (as jvm_attach.sh's).
expect() {
  local want=$1 re=$2 pid=$3; shift 3
  "$ATTACH" attach "$pid" --agent "$AGENT" "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; local rc=$?
  [ $rc -eq "$want" ] || fail "attach $pid $*: exit $rc, not $want: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  [ ! -s "$WORK/cmd.out" ] && [ "$(wc -l <"$WORK/cmd.err")" -eq 1 ] && grep -qE "$re" "$WORK/cmd.err" ||
    fail "attach $pid $*: output: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  LAST_LINE=$(cat "$WORK/cmd.err")
}
# attached PID [OPTIONS...]: `jitprov attach` exits 0 with its one line on stdout.
attached() {
  local pid=$1; shift
  "$ATTACH" attach "$pid" --agent "$AGENT" "$@" >"$WORK/attach.out" 2>"$WORK/attach.err" ||
    fail "attach $pid $*: exit $?: $(cat "$WORK/attach.out" "$WORK/attach.err")"
  [ ! -s "$WORK/attach.err" ] && grep -q "^jitprov: attached to PID $pid: CoreCLR [0-9]" "$WORK/attach.out" ||
    fail "attach $pid $*: output: $(cat "$WORK/attach.out" "$WORK/attach.err")"
  cat "$WORK/attach.out"
}
# await_clr PID [socket]: until CoreCLR is loaded in PID (its maps) and, with "socket",
# its diagnostics socket is in /tmp, up to 30 s; at once if PID is gone. The sleeps after
# it leave the app its time: alone, a fixed sleep after the launch could end before
# CoreCLR's start on a loaded machine (an attach then finds no runtime, or no socket).
clr_up_or_gone() {
  exited "$1" && return 0
  grep -q libcoreclr "/proc/$1/maps" 2>/dev/null || return 1
  [ "${2:-}" != socket ] || compgen -G "/tmp/dotnet-diagnostic-$1-*-socket" >/dev/null
}
await_clr() { poll 30 clr_up_or_gone "$@" || true; }
# Without a socket the command asks again until the app is 5 s old (it may be starting),
# then says so: the app runs longer than that.
DOTNET_EnableDiagnostics=0 "${APP[@]}" --seconds 8 >"$WORK/bad.out" 2>&1 &
pid=$!
track_pid "$pid"
await_clr "$pid"
expect 7 "no diagnostics socket .*\(still, [0-9]+ s after its start, after [0-9]+ tries in [0-9]+ ms\)" "$pid"
wait "$pid" || fail "DOTNET_EnableDiagnostics=0: the app failed: $(cat "$WORK/bad.out")"
pass "DOTNET_EnableDiagnostics=0: exit 7, \"$LAST_LINE\""

CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}' CORECLR_PROFILER_PATH="$AGENT" \
  JITPROV_DOTNET="perfmap=off,verbose,stats=$WORK/startup.json" "${APP[@]}" --seconds 3 >"$WORK/startup.out" 2>&1 &
pid=$!
track_pid "$pid"
await_clr "$pid" socket
sleep 0.5
expect 9 "client runs in it already \(CoreCLR: CORPROF_E_PROFILER_ALREADY_ACTIVE" "$pid" --options verbose
wait "$pid" || fail "the client loaded at start-up: the app failed: $(cat "$WORK/startup.out")"
[ "$(grep -c '^jitprov-dotnet: \(loaded in\|attached to\)' "$WORK/startup.out")" -eq 1 ] &&
  ! grep -q "caught up" "$WORK/startup.out" || fail "the client started twice: $(cat "$WORK/startup.out")"
pass "the client loaded at start-up: exit 9, \"$LAST_LINE\"; started once"

# Bad options, then a retry of the same process: the refusal left nothing behind.
"${APP[@]}" --seconds 6 >"$WORK/retry.out" 2>&1 &
pid=$!
track_pid "$pid"
await_clr "$pid" socket  # at once: while CoreCLR starts, the command asks again (see the paused case)
expect 11 "the client refused its options" "$pid" --options bogus
bad_line=$LAST_LINE
attached "$pid" --options "perfmap=off,verbose"
wait "$pid" || fail "bad options, then a retry: the app failed: $(cat "$WORK/retry.out")"
grep -q "jitprov-dotnet: .*bogus" "$WORK/retry.out" && grep -q "^jitprov-dotnet: attached to pid $pid" "$WORK/retry.out" &&
  [ "$(grep -c '^jitprov-dotnet: caught up' "$WORK/retry.out")" -eq 1 ] ||
  fail "bad options, then a retry: $(cat "$WORK/retry.out")"
pass "bad options: exit 11, \"$bad_line\"; the retry: attached, one catch-up"

"${APP[@]}" --seconds 4 >"$WORK/stopped.out" 2>&1 &
pid=$!
track_pid "$pid"
await_clr "$pid" socket
sleep 1  # as the retry's: its runtime started
kill -STOP "$pid"
t0=$(mono_ns)
expect 10 "did not answer .* within 2000 ms" "$pid" --timeout 2
took_ms=$((($(mono_ns) - t0) / 1000000))
kill -CONT "$pid"
# Within its --timeout of 2 s and not hung; 8 s leaves a loaded machine its stalls (was 3 s).
[ "$took_ms" -lt 8000 ] || fail "a stopped process: exit 10 in $took_ms ms (want within 2 s)"
wait "$pid" && grep -q "^JitWork: " "$WORK/stopped.out" ||
  fail "the stopped process did not run on after SIGCONT: $(cat "$WORK/stopped.out")"
pass "a stopped process: exit 10 in $took_ms ms, \"$LAST_LINE\"; it ran on after SIGCONT"

# A runtime paused at its start for a diagnostics monitor (DOTNET_DefaultDiagnosticPortSuspend=1)
# answers AttachProfiler "not yet available" (0x8013135B) until it is resumed, as any
# runtime does between its socket's appearance and its EventPipe's start: the command
# asks again until its deadline. Paused throughout a 2 s attach: exit 1, said with the
# tries; resumed 1 s into a second attach (ResumeRuntime over its socket, as a monitor
# does): attached (before: exit 1 at once, "try again").
resume_runtime() {
  $PY - "$1" <<'PY'
import glob, socket, struct, sys
pid = sys.argv[1]
path = glob.glob("/tmp/dotnet-diagnostic-%s-*-socket" % pid)[0]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
# The IPC header: magic, total size, command set 0x04 (process), command 0x01 (resume).
s.sendall(b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 20, 0x04, 0x01, 0))
reply = s.recv(64)
assert len(reply) >= 20 and reply[16] == 0xFF and reply[17] == 0x00, reply  # server, OK
PY
}
DOTNET_DefaultDiagnosticPortSuspend=1 "${APP[@]}" --seconds 2 >"$WORK/paused.out" 2>&1 &
pid=$!
track_pid "$pid"
await_clr "$pid" socket
expect 1 "starting or shutting down \(0x8013135B\).*still, after [0-9]+ tries in [0-9]+ ms" "$pid" --timeout 2
paused_line=$LAST_LINE
grep -q "^JitWork: " "$WORK/paused.out" && fail "the paused app ran: $(cat "$WORK/paused.out")"
(sleep 1 && resume_runtime "$pid") 2>"$WORK/resume.err" &
resumer=$!
attached "$pid" --options "perfmap=off" >/dev/null
wait "$resumer" || fail "ResumeRuntime: $(cat "$WORK/resume.err")"
grep -q "it was starting: attached after [0-9]* tries in [0-9]* ms" "$WORK/attach.out" ||
  fail "the attach while paused: $(cat "$WORK/attach.out")"
wait "$pid" && grep -q "^JitWork: " "$WORK/paused.out" || fail "the resumed app: $(cat "$WORK/paused.out")"
pass "a runtime paused at its start: exit 1 while paused, \"$paused_line\"; resumed meanwhile: $(cat "$WORK/attach.out")"

# `jitprov record -p` waits for it the same way, and Ctrl-C ends the wait: exit 130,
# nothing loaded into it, its -o directory gone (before: the wait ran on, 10 s).
DOTNET_DefaultDiagnosticPortSuspend=1 "${APP[@]}" --seconds 2 >"$WORK/paused2.out" 2>&1 &
pid=$!
track_pid "$pid"
await_clr "$pid" socket
"$ATTACH" record -p "$pid" -d 2 -o "$WORK/rp-int" >"$WORK/rp.out" 2>"$WORK/rp.err" &
rp=$!
track_pid "$rp"
sleep 1.5
kill -INT "$rp"
wait "$rp"; rc=$?
[ $rc -eq 130 ] && grep -q "^jitprov record: SIGINT while PID $pid (dotnet) was starting: nothing loaded into it" "$WORK/rp.err" ||
  fail "record -p interrupted while the runtime was paused: exit $rc: $(cat "$WORK/rp.out" "$WORK/rp.err")"
! grep -q jitprov "/proc/$pid/maps" && [ ! -e "$WORK/rp-int" ] || fail "record -p interrupted: something loaded or left"
kill "$pid"
pass "record -p of a paused runtime, Ctrl-C: exit 130, \"$(cut -c1-120 "$WORK/rp.err")...\""

# Attached the moment it was launched (`dotnet app.dll & jitprov attach $!`): the host has
# not loaded CoreCLR yet, then its socket is not there, then its EventPipe does not run;
# the command asks again through all three (before: exit 4, "runs no runtime").
"${APP[@]}" --seconds 2 >"$WORK/early.out" 2>&1 &
pid=$!
track_pid "$pid"
attached "$pid" --options "perfmap=off,verbose" >/dev/null
wait "$pid" && grep -q "^jitprov-dotnet: caught up" "$WORK/early.out" ||
  fail "attached at its launch: the app: $(cat "$WORK/early.out")"
pass "attached at its launch: $(grep -o 'it was starting: attached after [0-9]* tries in [0-9]* ms' "$WORK/attach.out" || echo 'ready at the first try')"

# --- an app in its own pid and mount namespaces (as in a container) ------------------------
# A private tmpfs on /tmp, where CoreCLR puts its diagnostics socket under its pid in its
# namespace (NSpid 1): the command finds it through /proc/PID/root and that pid. The build
# tree is bound back at its own path when it lives under /tmp (a fresh clone there), so
# that CoreCLR opens the library the command names, the same file.
if unshare --pid --mount --fork --mount-proc true 2>/dev/null; then
  BUILD_ROOT=$(dirname "$(dirname "$(dirname "$AGENT")")")
  unshare --pid --mount --fork --mount-proc --propagation private sh -c \
    'mount -t tmpfs none /mnt && mkdir /mnt/build && mount --bind "$1" /mnt/build && mount -t tmpfs none /tmp &&
     case "$1" in /tmp/*) mkdir -p "$1" && mount --bind /mnt/build "$1" ;; esac &&
     shift && exec "$@"' sh "$BUILD_ROOT" "${APP[@]}" --seconds 6 >"$WORK/ns.out" 2>&1 &
  U_PID=$!
  track_pid "$U_PID"
  # Up when its /tmp is the private one (not ours, where other runs leave stale sockets),
  # CoreCLR is mapped, and the socket of its pid in its namespace is there.
  N_PID= nspid=
  for _ in $(seq 200); do
    read -r N_PID _ <"/proc/$U_PID/task/$U_PID/children" 2>/dev/null  # unshare's child: sh, then dotnet
    if [ -n "$N_PID" ] && [ "$(stat -c %d "/proc/$N_PID/root/tmp" 2>/dev/null)" != "$(stat -c %d /tmp)" ] &&
      grep -q libcoreclr "/proc/$N_PID/maps" 2>/dev/null; then
      nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$N_PID/status")
      ls "/proc/$N_PID/root/tmp/" 2>/dev/null | grep "^dotnet-diagnostic-$nspid-" >/dev/null && break
    fi
    sleep 0.05
  done
  [ -n "$N_PID" ] || fail "the namespaced app did not start: $(cat "$WORK/ns.out")"
  track_pid "$N_PID"
  [ -n "$nspid" ] && [ "$nspid" != "$N_PID" ] || fail "not in a pid namespace, or its socket never came: $(cat "$WORK/ns.out")"
  attached "$N_PID" --options "perfmap=off"
  ls "/proc/$N_PID/root/tmp/" | grep "^dotnet-diagnostic-$nspid-[0-9]*-socket$" >/dev/null &&
    ! compgen -G "/tmp/dotnet-diagnostic-$nspid-*" >/dev/null || fail "the socket is not in the app's private /tmp"
  wait "$U_PID" || fail "the namespaced app failed: $(cat "$WORK/ns.out")"
  grep -q "^jitprov-dotnet: caught up" "$WORK/ns.out" 2>/dev/null || grep -q "^JitWork: " "$WORK/ns.out" ||
    fail "the namespaced app: $(cat "$WORK/ns.out")"
  pass "pid+mount namespaces (NSpid $nspid, private /tmp): $(cut -c1-160 "$WORK/attach.out")"
else
  echo "note: unshare --pid unavailable: the namespace case not run" >&2
fi

# --- the attach under churn, then the cross-check ------------------------------------------
CLR="$WORK/cr/out/jitprov-clr-rundown"
start_sessiond
setup_session attach "$WORK/trace"
lttng start attach >/dev/null || fail "lttng start"
# CoreCLR's own record of its unloads (a startup EventPipe file session: no profiler),
# which says that nothing was unloaded while CoreCLR's rundown ran.
DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$WORK/loads-{pid}.nettrace" \
  DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x18:5' \
  "${APP[@]}" --seconds 8 --alc-every 1 --quiet 6 --ready "$WORK/ready" >"$WORK/app.out" 2>&1 &
APP_PID=$!
track_pid "$APP_PID"
sleep 2.5
mono_ns >"$WORK/attached"
# catchup_delay_ms (a test hook): unloads land between the resolution and the methods'
# turns, and their contexts are freed by then (the app still churns 8 s in all); the
# attach's timeout (10 s) bounds it all, a deadlock would give 10.
t0=$(mono_ns)
attached "$APP_PID" --options "trigger=session,every:1,perfmap=off,verbose,catchup_delay_ms=3000,stats=$WORK/client.json"
attach_ms=$((($(mono_ns) - t0) / 1000000))
expect 9 "client runs in it already \(CoreCLR: CORPROF_E_PROFILER_ALREADY_ACTIVE" "$APP_PID"
second_line=$LAST_LINE
wait_for "$WORK/ready" quiet || { cat "$WORK/app.out" >&2; fail "the workload did not reach its quiet phase"; }
read -r _ pid quiet_ns <"$WORK/ready"
echo "$quiet_ns" >"$WORK/quiet"
sleep 2.5  # a jitprov rundown (every:1) inside the quiet phase (of 6 s): two periods, for slower ones
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
# An every:1 rundown in flight as the app exits is cut short, and said (exit 4): the
# cross-check below takes the rundown in the quiet window, never that one.
[ $rc -eq 4 ] && stop_cut_only "$WORK/verify.json" && rc=0
[ $rc -eq 0 ] || verify_failed "$WORK/verify.json" $rc
"$VERIFY" "$WORK/trace" | head -1
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/dotnet_attach_check.py" "$WORK" "$APP_PID" ||
  fail "cross-check with CoreCLR's own rundown"
# The session's rundown, asked for as the client started in the traced app, waited for
# the catch-up (3 s here: the test hook) and holds the bodies JIT'd before the attach (it
# ran first and held none before 2026-12-07): at least half the catch-up's (some are
# unloaded by the churn before it walks).
PYTHONPATH="$SRC/tests/integration" $PY - "$WORK" "$APP_PID" <<'PY' || fail "the session's rundown at the attach"
import json, sys
from bt2read import events
w, pid = sys.argv[1], int(sys.argv[2])
caught = json.load(open(w + "/client.json"))["catch_up"]["bodies"]
first, n = None, 0
for name, f in events(w + "/trace", ("jitprov_rundown:rundown_begin", "jitprov_rundown:method")):
    if f.get("vpid") != pid:
        continue
    if name.endswith("rundown_begin") and first is None:
        first = f["rundown_id"]
        assert f["trigger"] in ("SESSION", "session", 1), f
    elif name.endswith(":method") and f["rundown_id"] == first:
        n += 1
print("  the session's rundown at the attach: %d records; the catch-up published %d" % (n, caught))
assert caught > 100 and n >= caught // 2, (n, caught)
PY
pass "attached under churn in $attach_ms ms (a 3 s catch-up delay): rundowns verified and identical to CoreCLR's own rundown; a second attach: exit 9, \"$second_line\", one catch-up"
rm -rf "$WORK"
