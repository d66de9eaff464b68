#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The JVM agent on a real HotSpot (OpenJDK 17) running jitprov's workload (tens of
# thousands of generated methods, tier-ups, class unloading):
#  - bad agent options stop the JVM from starting, with one line; help prints usage;
#  - a bpftrace `ustack` sample names a workload method through /tmp/perf-PID.map;
#  - its rundowns into a real lttng session (private lttng-sessiond) pass jitprov-verify;
#  - every nmethod `jcmd Compiler.codelist` lists in use at a quiet moment (in two
#    listings around a rundown) is in that rundown with the same address, size,
#    comp level (host_tier) and name, and no Java record there is at an address where
#    neither listing has an nmethod (codelist_check.py, shared with jvm-apps and jvm-attach).
#   jvm_agent.sh AGENT_SO VERIFY_BINARY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
AGENT=${1:?usage: jvm_agent.sh AGENT_SO VERIFY SOURCE_DIR}
VERIFY=${2:?usage: jvm_agent.sh AGENT_SO VERIFY SOURCE_DIR}
SRC=${3:?usage: jvm_agent.sh AGENT_SO VERIFY SOURCE_DIR}
require_lttng
require_cmd java javac jcmd bpftrace
enter_private_namespace "$@"
WORK=$(work_dir jitprov-jvm)

# --- options -------------------------------------------------------------------------
java -agentpath:"$AGENT"=bogus -version >"$WORK/out" 2>&1 && fail "a bad option did not stop the JVM"
grep -q "jitprov-jvmti: unknown option 'bogus'" "$WORK/out" || fail "bad option message: $(cat "$WORK/out")"
java -agentpath:"$AGENT"=trigger=session,signal -version >"$WORK/out" 2>&1 && fail "trigger=signal accepted"
grep -q "HotSpot owns SIGUSR2" "$WORK/out" || fail "trigger=signal message: $(cat "$WORK/out")"
java -agentpath:"$AGENT"=trigger=every:x -version >"$WORK/out" 2>&1 && fail "a bad trigger accepted"
java -agentpath:"$AGENT"=stats=/dev/full -version >"$WORK/out" 2>&1 && fail "stats=/dev/full accepted"
grep -q "stats=/dev/full: exists and is not a regular file" "$WORK/out" || fail "stats=/dev/full: $(cat "$WORK/out")"
# refused OPTIONS LINE: the JVM does not start, and the agent says why in one line.
refused() {
  java -agentpath:"$AGENT"="$1" -version >"$WORK/out" 2>&1 && fail "$1 accepted"
  [ "$(grep -c '^jitprov-jvmti:' "$WORK/out")" -eq 1 ] && grep -qxF "jitprov-jvmti: $2" "$WORK/out" ||
    fail "$1: $(cat "$WORK/out")"
}
refused rate=-1 "rate=-1: not a number of events per second (0 to 18446744073709551615)"  # wrapped to unpaced
refused rate=ten "rate=ten: not a number of events per second (0 to 18446744073709551615)"
refused rate=18446744073709551616 \
  "rate=18446744073709551616: not a number of events per second (0 to 18446744073709551615)"
: >"$WORK/a-file"  # every rundown's map would have failed to open
refused perfmap="$WORK/a-file" "perfmap=$WORK/a-file: not a directory (the map is written as DIR/perf-PID.map)"
refused perfmap= "perfmap=: empty (perfmap=off turns the perf map off)"  # was: silently off
refused names=bogus "names=bogus: vmstructs or jvmti"
refused publish=0 "publish=0: inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)"
refused publish=5ms "publish=5ms: inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)"
refused publish= "publish=: inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)"
refused publish=100/ "publish=100/: inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)"
refused publish=100/x "publish=100/x: inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)"
refused publish=/64 "publish=/64: inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)"
java -agentpath:"$AGENT"=help -version >"$WORK/out" 2>&1 && fail "help started the JVM"
grep -q "perfmap=DIR|off" "$WORK/out" || fail "help does not list the options"
java -agentpath:"$AGENT"=trigger=session,exit,perfmap=off -version >"$WORK/out" 2>&1 || fail "good options refused: $(cat "$WORK/out")"
java -agentpath:"$AGENT"=publish=inline,stats="$WORK/inline.json" -version >"$WORK/out" 2>&1 ||
  fail "publish=inline refused: $(cat "$WORK/out")"
$PY - "$WORK/inline.json" <<'PY' || fail "publish=inline: the callbacks did not publish"
import json, sys
p = json.load(open(sys.argv[1]))["publish"]
b = p["batches"]
sys.exit(0 if p["mode"] == "inline" and b["inline"] > 100 and b["thread"] == b["prepare"] == 0 else p)
PY
# publish=MS/EVENTS: an hour's period, a batch of 16 events: the thread publishes (full
# batches) before VM death, which would otherwise publish everything.
java -agentpath:"$AGENT"=publish=3600000/16,stats="$WORK/batch.json" -version >"$WORK/out" 2>&1 ||
  fail "publish=3600000/16 refused: $(cat "$WORK/out")"
$PY - "$WORK/batch.json" <<'PY' || fail "publish=3600000/16: no batch ended at 16 events"
import json, sys
p = json.load(open(sys.argv[1]))["publish"]
sys.exit(0 if p["mode"] == "batch" and p["ms"] == 3600000 and p["batch_events"] == 16 and p["batches"]["thread"] >= 1
         else p)
PY
pass "bad options (rate=-1, perfmap=FILE, perfmap=, publish=100/x among them) stop the JVM with one line; help lists the options; good ones start it; publish=MS/EVENTS ends a batch at EVENTS"

# The agent given twice at start (JAVA_TOOL_OPTIONS and the command line): the JVM runs,
# the first one registers, the second says so (before, its return of 74 ended the JVM:
# "agent library failed to init").
JAVA_TOOL_OPTIONS="-agentpath:$AGENT=perfmap=off,stats=$WORK/twice.json" java -agentpath:"$AGENT"=perfmap=off -version \
  >"$WORK/out" 2>&1 || fail "the agent twice: the JVM did not run: $(cat "$WORK/out")"
[ "$(grep -c "jitprov-jvmti: already loaded in this JVM" "$WORK/out")" -eq 1 ] &&
  grep -qE '"loads": [1-9]' "$WORK/twice.json" || fail "the agent twice: $(cat "$WORK/out")"
pass "the agent given twice at start: the JVM runs, one agent registers, one line says so"

# Names and the jitdump's source files from VMStructs are checked against JVMTI's for the
# first methods: read one byte off (names=mutant), the first difference turns them off,
# and says so once.
mkdir -p "$WORK/mutant-dump"
java -agentpath:"$AGENT"=trigger=none,perfmap=off,names=mutant,jitdump="$WORK/mutant-dump",stats="$WORK/mutant.json" \
  -version >"$WORK/out" 2>&1 || fail "names=mutant: $(cat "$WORK/out")"
[ "$(grep -c "VMStructs names differ from JVMTI's" "$WORK/out")" -eq 1 ] || fail "names=mutant not caught: $(cat "$WORK/out")"
[ "$(grep -c "source file from VMStructs differs from JVMTI's" "$WORK/out")" -eq 1 ] ||
  fail "names=mutant: the source files' difference not caught: $(cat "$WORK/out")"
$PY - "$WORK/mutant.json" <<'PY' || fail "names=mutant: the names' counts"
import json, sys
a = json.load(open(sys.argv[1]))
n, l = a["names"], a["lines"]
ok = n["mismatches"] == 1 and n["vmstructs"] == 0 and n["jvmti"] >= 1
ok = ok and l["file_mismatches"] >= 1 and l["files_vmstructs"] == 0 and l["files_jvmti"] >= 1
sys.exit(0 if ok else "names: %s; lines: %s" % (n, l))
PY
pass "names and source files read one byte off from VMStructs are caught by the check against JVMTI, and JVMTI's are used"

# --- the workload ------------------------------------------------------------------------
$PY "$SRC/tools/jvm/gen_workload.py" "$WORK/src" 50 400 || fail "generate the workload"
javac -d "$WORK/classes" "$WORK/src"/*.java || fail "javac the workload"
mkdir -p "$WORK/ready"

start_sessiond
RUNTIME_CHANNEL_OPTS="--subbuf-size=8M --num-subbuf=8" setup_session jvm "$WORK/trace"
lttng start jvm >/dev/null || fail "lttng start"
# publish=60000/0 (a minute, no batch size): the queued loads and unloads wait for a
# rundown's prepare (or VM death), so the code list's comparison below holds only if each
# rundown publishes the queue before it walks (the default, 250 ms or 1024 events, would
# hide a rundown that does not: jvm-apps, jvm-attach and jitprov-record run it).
java -XX:+PreserveFramePointer -XX:CompileThresholdScaling=0.05 \
  -agentpath:"$AGENT"=trigger=session,every:1,perfmap=/tmp,publish=60000/0,stats="$WORK/agent.json" \
  -cp "$WORK/classes" jitwork.JitWorkload "$WORK/classes" 6 120 60 "$WORK/ready" >"$WORK/java.out" 2>&1 &
JAVA_PID=$!
track_pid "$JAVA_PID"
trap 'cleanup_pids; rm -f "/tmp/perf-$JAVA_PID.map"' EXIT  # the agent's perf map (perfmap=/tmp)

# Quiet phase: two code lists around the last rundowns (every:1).
for _ in $(seq 300); do [ -f "$WORK/ready/quiet" ] && break; sleep 0.1; done
[ -f "$WORK/ready/quiet" ] || { cat "$WORK/java.out" >&2; fail "the workload did not reach its quiet phase"; }
sleep 1
jcmd "$JAVA_PID" Compiler.codelist >"$WORK/codelist1.txt" 2>&1 ||
  { head -n 5 "$WORK/codelist1.txt" "$WORK/java.out" >&2; fail "jcmd Compiler.codelist"; }
date +%s%N >"$WORK/window"  # the rundown compared begins after the first listing ...
sleep 2.5  # at least two every:1 rundowns
date +%s%N >>"$WORK/window"  # ... and ends before the second
jcmd "$JAVA_PID" Compiler.codelist >"$WORK/codelist2.txt" 2>&1 ||
  { head -n 5 "$WORK/codelist2.txt" "$WORK/java.out" >&2; fail "jcmd Compiler.codelist"; }
lttng stop jvm >/dev/null && lttng destroy jvm >/dev/null || fail "lttng stop/destroy"

# Hot phase: sample stacks; bpftrace names JIT frames from /tmp/perf-PID.map.
touch "$WORK/ready/go-hot"
sleep 2  # a rundown (every:1) has written the map with the hot code
# bpftrace names the frames when it exits, from the JVM's maps and perf map, so the JVM
# must outlive it: the hot phase lasts until ready/stop (at most 120 s, far beyond 5 windows). With ASLR on,
# bpftrace 0.17 reloads a process's symbols for every frame it names unless told to cache
# them: 41.6 s (30 s of CPU) for one 3 s window of this JVM, 3.3 s with the cache. Only
# the thread that runs the workload ("java"; the launcher's own thread is "java" too, and
# waits) is sampled: with two busy loops beside it the compiler threads took every sample
# of a 3 s window (1 run in 4). Up to 5 windows of 3 s, until one names a workload
# method. Six frames: the workload's methods run below reflection and stubs. The window is
# bpftrace's own (interval:s:3, from its probes' attachment: a SIGINT timed from outside
# could come before bpftrace had attached under load); one still running after 120 s is
# stopped (once one ignored its SIGINT and hung the test).
named=0
for window in 1 2 3 4 5; do
  BPFTRACE_CACHE_USER_SYMBOLS=1 timeout -k 10 120 bpftrace -e "profile:hz:499 /pid == $JAVA_PID && comm == \"java\"/ { @[ustack(perf, 6)] = count(); } interval:s:3 { exit(); }" \
    >"$WORK/ustack.txt" 2>"$WORK/bpftrace.err"
  named=$(grep -c 'jitwork\.Gen[0-9]*::m[0-9]*' "$WORK/ustack.txt")
  [ "$named" -gt 0 ] && break
done
touch "$WORK/ready/stop"
[ "$named" -gt 0 ] || { head -30 "$WORK/ustack.txt" "$WORK/bpftrace.err" >&2; fail "no ustack frame named a workload method in $window windows of 3 s"; }
pass "bpftrace ustack: $named stack entries name workload methods (window $window), e.g. $(grep -o -m1 'jitwork\.Gen[0-9]*::m[0-9]*' "$WORK/ustack.txt")"
wait "$JAVA_PID"; jrc=$?
[ $jrc -eq 0 ] || { cat "$WORK/java.out" >&2; fail "the JVM exit status $jrc"; }

"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
# An every:1 rundown in flight at lttng stop or at the app's exit is cut: accepted when
# that is all (stop_cut_only); the loaded machine's slower rundowns make it likelier.
[ $rc -eq 4 ] && stop_cut_only "$WORK/verify.json" && rc=0
[ $rc -eq 0 ] || verify_failed "$WORK/verify.json" $rc
"$VERIFY" "$WORK/trace" | head -1
# G2 again, by a reader that shares no code with jitprov-verify: HotSpot's stubs have no
# signature, and babeltrace2 2.0.4's plain string value showed most of their records
# with the signature of the Java method walked before them (issue 22).
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/g2check.py" --min-records 10000 "$WORK/trace" ||
  fail "G2 by the second reader (g2check.py)"
echo "$JAVA_PID" >"$WORK/pid"
date -r "$WORK/ready/quiet" +%s%N >"$WORK/busy"
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/codelist_check.py" "$WORK/trace" jvm-agent "$WORK" 2001 \
  --min-loads 10001 --min-unloads 1001 || fail "codelist cross-check"
# The names the code list was compared with came from VMStructs, but for the checked first ones.
$PY - "$WORK/agent.json" <<'PY' || fail "the agent's names"
import json, sys
a = json.load(open(sys.argv[1]))
n, p = a["names"], a["publish"]
# Hidden classes' (LambdaForm$MH+0x...) too: named both ways and compared (a wrong
# conversion of their '+' is a mismatch).
ok = n["mismatches"] == 0 and n["vmstructs"] >= 10000 and n["checked"] == 32 and n["hidden_checked"] >= 1
# Published by the rundowns' prepare, in batches: at most the first by the thread (60 s).
ok = ok and p["mode"] == "batch" and p["batches"]["prepare"] >= 10 and p["batches"]["thread"] <= 1
sys.exit(0 if ok else "names: %s; publish: %s" % (n, p))
PY
pass "JVM rundowns verified and identical to HotSpot's own code list (names from VMStructs; loads published by the rundowns, publish=60000/0)"
rm -rf "$WORK"
