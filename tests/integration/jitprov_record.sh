#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `jitprov record -- CMD` (docs/spec.md, "jitprov record") on real runtimes:
#  - javac (OpenJDK 17) compiling java/util of Debian's openjdk-17-source, with
#    --rundown-every 2, and no lttng-sessiond running (jitprov starts a private one):
#    exit 0, the trace verified, and the summary's counts (code bodies by tier,
#    rundowns by trigger, events lost) equal what the trace shows, read independently
#    with babeltrace2's Python bindings (bt2read.py);
#  - SIGINT to jitprov during a Java run: passed on, the JVM exits 130, its exit rundown
#    is in the trace, the trace verified, the summary printed;
#  - CMD's status kept: `--runtime java -- false` exits 1, `sh -c 'exit 3'` 3, a command
#    killed by SIGTERM 143;
#  - jitprov's own errors, each one line on stderr, nothing on stdout, its own status:
#    no CMD (125), CMD not found (127), not executable (126), neither java, dotnet nor
#    node (124), DIR not empty or read-only (123), no lttng in PATH (122), -p with CMD or -d
#    without -p (125; -p, --perf and --lockwait: jitprov_report.sh);
#  - CMD runs with libjitprov-preload.so added to LD_PRELOAD (after what it held), and
#    registers for membarrier before its first thread (strace);
#  - the session's buffers exist when CMD starts (a process of record's registered first),
#    and a trace holding only that registration is "nothing recorded";
#  - a running lttng-sessiond is left alone (root records with a private one: two
#    recordings at once beside a node with the agent each hold their own CMD alone);
#  - with the .NET client built: the generated C# workload under `jitprov record --
#    dotnet`: verified, and its code bodies equal what the app says it jitted and
#    what the trace shows.
#   jitprov_record.sh JITPROV JVMTI_AGENT VERIFY SOURCE_DIR [DOTNET_CLIENT]
. "$(dirname "$0")/lib.sh"
usage="usage: jitprov_record.sh JITPROV JVMTI_AGENT VERIFY SOURCE_DIR [DOTNET_CLIENT]"
JITPROV=${1:?$usage}
AGENT=${2:?$usage}
VERIFY=${3:?$usage}
SRC=${4:?$usage}
CLR_AGENT=${5:-}
JITPROV=$(realpath "$JITPROV") AGENT=$(realpath "$AGENT") VERIFY=$(realpath "$VERIFY") SRC=$(realpath "$SRC")
[ -n "$CLR_AGENT" ] && CLR_AGENT=$(realpath "$CLR_AGENT")
SRC_ZIP=/usr/lib/jvm/openjdk-17/lib/src.zip  # Debian's openjdk-17-source
require_lttng
require_cmd java javac unzip
[ -n "$CLR_AGENT" ] && require_cmd dotnet
[ -f "$SRC_ZIP" ] || skip "$SRC_ZIP missing (Debian openjdk-17-source)"
enter_private_namespace "$@"
T0=$(date +%s)
WORK=$(work_dir jitprov-record)
trap 'cleanup_pids; umount "$WORK/ro" 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK" || fail "cd $WORK"
export PYTHONPATH="$SRC/tests/integration"

# summary DIR EXPR: the Python expression EXPR over DIR/summary.json (`s`).
summary() { $PY -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1/summary.json"; }

# check_trace DIR RUNTIME: the summary of DIR says verified, nothing lost, and its counts
# are the trace's: distinct (vpid, version_id) of method_load and rundown records by
# tier, per process and in all; the rundowns per process by trigger; events lost.
check_trace() {
  $PY - "$1" "$2" <<'PY' || fail "$1: the summary is not the trace's: $(cat "$1/stdout")"
import collections, json, sys
from bt2read import events
d, runtime = sys.argv[1], sys.argv[2]
s = json.load(open(d + "/summary.json"))
assert s["verdict"].startswith("verified"), s["verdict"]
assert s["verify_exit"] in (0, 4), s["verify_exit"]
lost = []
bodies = collections.defaultdict(dict)       # vpid -> version_id -> tier
triggers = collections.defaultdict(list)     # vpid -> rundown triggers, in order
for name, f in events(d + "/trace", ("jitprov_",), lost=lost):
    if name in ("jitprov_runtime:method_load", "jitprov_rundown:method"):
        bodies[f["vpid"]].setdefault(f["version_id"], f["tier"])
    elif name == "jitprov_rundown:rundown_begin":
        triggers[f["vpid"]].append(f["trigger"])
assert lost == [] and s["events_lost"] == 0 and s["packets_lost"] == 0, (lost, s["events_lost"])
procs = {p["vpid"]: p for p in s["processes"]}
assert set(procs) == set(bodies) and procs, (sorted(procs), sorted(bodies))
total = collections.Counter()
for vpid, versions in bodies.items():
    by_tier = collections.Counter(versions.values())
    total += by_tier
    p = procs[vpid]
    assert p["runtime"] == runtime, p["runtime"]
    assert p["code_bodies"] == len(versions) and p["code_bodies_by_tier"] == dict(by_tier), \
        (vpid, p["code_bodies"], p["code_bodies_by_tier"], len(versions), dict(by_tier))
    assert [r["trigger"] for r in p["rundowns"]] == triggers[vpid], (p["rundowns"], triggers[vpid])
    assert all(r["duration_ns"] > 0 for r in p["rundowns"]), p["rundowns"]
c = s["code_bodies"][runtime]
assert c["total"] == sum(total.values()) and c["by_tier"] == dict(total), (c, dict(total))
assert s["rundowns"] == sum(len(t) for t in triggers.values())
print("%s: %d code bodies %s, rundowns %s, as the trace shows" % (
    d.rsplit("/", 1)[-1], c["total"], dict(total), {v: t for v, t in triggers.items()}))
PY
  # The printed summary says the same.
  grep -q "^  code bodies: $2: $(summary "$1" 's["code_bodies"]["'"$2"'"]["total"]') in " "$1/stdout" &&
    grep -q "^  events lost: 0$" "$1/stdout" && grep -q "^  verdict:     verified" "$1/stdout" ||
    fail "$1: the printed summary: $(cat "$1/stdout")"
}

# expect STATUS LINE_REGEX ARGS...: `jitprov record ARGS...` exits STATUS with one line on
# stderr matching LINE_REGEX and nothing on stdout. RECORD_PATH: its PATH.
expect() {
  local want=$1 re=$2
  shift 2
  PATH=${RECORD_PATH:-$PATH} "$JITPROV" record "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err"
  local rc=$?
  [ $rc -eq "$want" ] || fail "record $*: exit $rc, not $want: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  [ ! -s "$WORK/cmd.out" ] && [ "$(wc -l <"$WORK/cmd.err")" -eq 1 ] && grep -qE "^jitprov record: $re" "$WORK/cmd.err" ||
    fail "record $*: output: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  pass "record $*: exit $rc, \"$(cat "$WORK/cmd.err")\""
}

# --- jitprov's own errors -----------------------------------------------------------
expect 125 "no command" -o "$WORK/e1"
expect 125 ".*--bogus" --bogus -- java -version
expect 125 "--rundown-every: '0' is not a number above 0 and at most 1e\+06" --rundown-every 0 -- java -version
expect 125 "--rundown-every: '-1' is not a number above 0" --rundown-every -1 -- java -version
expect 125 "--output: empty \(leave -o out for the default\)" -o "" -- java -version
expect 125 ".*--runtime.*ruby" --runtime ruby -- ruby x.rb
expect 127 "no-such-command-here: command not found" -o "$WORK/e1" -- no-such-command-here
printf 'x\n' >"$WORK/noexec" && chmod 644 "$WORK/noexec"
expect 126 "$WORK/noexec: Permission denied" --runtime java -o "$WORK/e1" -- "$WORK/noexec"
expect 124 "'sh' is neither java .*, dotnet nor node" -o "$WORK/e1" -- sh -c 'exit 3'
# Found and executable, but not a program the kernel runs: 126 once record has set up DIR
# and its daemon; DIR removed again, so that the same -o can be given at once (was: left
# with lttng-sessiond.log and trace/, and the next try refused, 123).
printf '\x7fELF not a program' >"$WORK/badelf" && chmod 755 "$WORK/badelf"
expect 126 "$WORK/badelf: Exec format error" --runtime java -o "$WORK/e1" -- "$WORK/badelf"
mkdir -p "$WORK/e4"
expect 126 "$WORK/badelf: Exec format error" --runtime java -o "$WORK/e4" -- "$WORK/badelf"
[ -d "$WORK/e4" ] && [ -z "$(ls -A "$WORK/e4")" ] || fail "record's failed start left in $WORK/e4: $(ls -A "$WORK/e4")"
rmdir "$WORK/e4"
[ ! -e "$WORK/e1" ] || fail "an early error created the output directory"
mkdir -p "$WORK/full" && touch "$WORK/full/x"
expect 123 "$WORK/full exists and is not empty" -o "$WORK/full" -- java -version
mkdir -p "$WORK/ro" && mount --bind "$WORK/ro" "$WORK/ro" && mount -o remount,bind,ro "$WORK/ro" ||
  fail "a read-only bind mount"
expect 123 "cannot write in $WORK/ro: Read-only file system" -o "$WORK/ro" -- java -version
expect 123 "cannot create $WORK/ro/sub: Read-only file system" -o "$WORK/ro/sub" -- java -version
# --perf needs the agent's jitdump in DIR, whose path goes into the agent's options: a
# blank, ',' or '=' there is refused before anything starts (it used to record with no
# jitdump at all, exit 0: no JIT frame named).
expect 123 "--perf: $WORK/with space holds a ',', '=', blank or tab, which the agent's options cannot carry, and its jitdump goes there: -o a path without them" \
  --perf -o "$WORK/with space" -- java -version
[ ! -e "$WORK/with space" ] || fail "record --perf -o 'with space' created its directory"
RECORD_PATH=/nonexistent expect 122 "lttng and lttng-sessiond are needed" -o "$WORK/e2" -- "$(command -v java)" -version
expect 125 "-p PID or CMD, not both" -p 1 -- java -version
expect 125 "-d SECS is for -p PID" -d 2 -- java -version
expect 125 "-d SECS is for -p PID" -d 0 -- java -version  # (0 was taken for "not given")
expect 125 "--runtime is for CMD: with -p PID the runtime is the one the process runs" -p 1 --runtime java
"$JITPROV" record --help >"$WORK/help.out" 2>&1 || fail "record --help: $(cat "$WORK/help.out")"
grep -q "117 -p PID cannot be attached.*125 usage.*127 CMD not found" "$WORK/help.out" || fail "--help: $(cat "$WORK/help.out")"
# An unknown command or option before any: named (CLI11 said "A subcommand is required").
for w in bogus --bogus; do
  "$JITPROV" "$w" >"$WORK/u.out" 2>"$WORK/u.err"; rc=$?
  kind=command; [ "$w" = --bogus ] && kind=option
  [ $rc -eq 2 ] && [ ! -s "$WORK/u.out" ] &&
    grep -qx "jitprov: unknown $kind '$w': the commands are attach, ps, record and report (see --help)" "$WORK/u.err" ||
    fail "jitprov $w: exit $rc: $(cat "$WORK/u.out" "$WORK/u.err")"
done

# --- CMD's status kept ------------------------------------------------------------------
# run_record DIR ARGS...: `jitprov record -o DIR ARGS...`, its stdout in DIR/stdout (after
# the run: DIR must be new), its status in RC.
run_record() {
  local d=$1
  shift
  "$JITPROV" record -o "$d" "$@" >"$WORK/run.out" 2>"$WORK/run.err"
  RC=$?
  [ -d "$d" ] && cp "$WORK/run.out" "$d/stdout"
}
run_record "$WORK/false" --runtime java -- false
[ $RC -eq 1 ] || fail "record -- false: exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
[ "$(summary "$WORK/false" 's["exit_status"], s["command_status"], s["sessiond"]')" = "1 1 private" ] &&
  grep -q "verdict:     nothing recorded" "$WORK/false/stdout" || fail "record -- false: $(cat "$WORK/run.out")"
pass "record --runtime java -- false: exit 1, \"$(grep verdict: "$WORK/false/stdout" | sed 's/^ *//')\""
# A verifier killed by a signal (the OOM killer on a large trace): the summary still written
# and printed, CMD's status in it, exit 119 (was: one line, no summary.json).
printf '#!/bin/sh\nkill -SEGV $$\n' >"$WORK/crash-verify" && chmod +x "$WORK/crash-verify"
JITPROV_VERIFY=$WORK/crash-verify run_record "$WORK/crashv" -- java -version
[ $RC -eq 119 ] && [ "$(summary "$WORK/crashv" 's["exit_status"], s["command_status"]')" = "119 0" ] &&
  [ "$(summary "$WORK/crashv" 's["verdict"]')" = "NOT VERIFIED: jitprov-verify was killed by signal 11 (Segmentation fault)" ] &&
  grep -q "^  verdict:     NOT VERIFIED: jitprov-verify was killed by signal 11" "$WORK/crashv/stdout" ||
  fail "record with a verifier that crashes: exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
pass "record with a verifier killed by SIGSEGV: exit 119, the summary written: $(grep verdict: "$WORK/crashv/stdout" | sed 's/^ *//')"
# report on that recording: no trace, and why (its summary's verdict), not "record one".
"$JITPROV" report "$WORK/false" >"$WORK/rep.out" 2>"$WORK/rep.err"; rc=$?
[ $rc -eq 4 ] && [ ! -s "$WORK/rep.out" ] &&
  grep -qx "jitprov report: no trace in $WORK/false: \`jitprov record\` recorded nothing there (nothing recorded: no process loaded jitprov's agent)" \
    "$WORK/rep.err" || fail "report on a recording of nothing: exit $rc: $(cat "$WORK/rep.out" "$WORK/rep.err")"
pass "report on it: exit 4, \"$(cat "$WORK/rep.err")\""
run_record "$WORK/three" --runtime java -- sh -c 'exit 3'
[ $RC -eq 3 ] || fail "record -- sh -c 'exit 3': exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
run_record "$WORK/term" --runtime java -- sh -c 'kill -TERM $$'
[ $RC -eq 143 ] && grep -q "killed by signal 15" "$WORK/term/stdout" ||
  fail "record -- sh -c 'kill -TERM \$\$': exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
pass "CMD's status kept: exit 3 -> 3, killed by SIGTERM -> 143"

# --- the session's buffers exist before CMD starts ----------------------------------------
# lttng-sessiond creates them when the first process registers, which waits for them (28-33
# ms of node's start); record has a process of its own register first. CMD, a shell that
# loads no agent, lists the trace's files as it starts: the channels' streams are there.
run_record "$WORK/warm" --runtime node -- sh -c 'find "$0" -type f -printf "%f\n" | sort >"$1"' \
  "$WORK/warm/trace" "$WORK/warm.files"
[ $RC -eq 0 ] || fail "record -- sh (find): exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
for f in jitprov_rundown_0 jitprov_runtime_0 metadata; do
  grep -qx "$f" "$WORK/warm.files" || fail "the trace before CMD: no $f, only: $(tr '\n' ' ' <"$WORK/warm.files")"
done
warm_ms=$(summary "$WORK/warm" 's["session_warm_ms"]')
$PY -c "import sys; v=float(sys.argv[1]); sys.exit(not 0 < v < 10000)" "$warm_ms" 2>/dev/null ||
  fail "the summary's session_warm_ms: '$warm_ms'"
! grep -q "not created ahead" "$WORK/run.err" || fail "record warned: $(cat "$WORK/run.err")"
pass "the session's buffers before CMD: $(tr '\n' ' ' <"$WORK/warm.files")(registered ahead in $warm_ms ms)"

# --- the agent's start: the process registered for membarrier before its first thread ---
# record adds libjitprov-preload.so (tools/preload/preload.c) to LD_PRELOAD, after what it
# held: the process registers for private expedited membarrier while it has one thread,
# and liburcu's and lttng-ust's registrations, when the agent loads them into a process of
# several threads, find it done (else the kernel waits an RCU grace period: 6 ms of the
# JVM's start, 11 ms of node's). strace shows java's first registration before any clone,
# by java's own process, and the agent's libraries registering after threads exist.
if command -v strace >/dev/null 2>&1; then
  preload_lib=$(realpath "$(dirname "$JITPROV")/../preload/libjitprov-preload.so")
  LD_PRELOAD=libm.so.6 run_record "$WORK/pre" --runtime java -- sh -c \
    'printf "%s\n" "$LD_PRELOAD" >"$0"; exec strace -f -qq -T -o "$1" -e trace=membarrier,clone,clone3 java -version' \
    "$WORK/pre.env" "$WORK/pre.strace"
  [ $RC -eq 0 ] && grep -q "^  verdict:     verified" "$WORK/pre/stdout" ||
    fail "record -- strace java -version: exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
  [ "$(cat "$WORK/pre.env")" = "libm.so.6:$preload_lib" ] || fail "CMD's LD_PRELOAD: '$(cat "$WORK/pre.env")'"
  [ "$(summary "$WORK/pre" 's["preload"]')" = "$preload_lib" ] || fail "the summary's preload: $(summary "$WORK/pre" 's["preload"]')"
  regs=$($PY - "$WORK/pre.strace" <<'PY'
import re, sys
# strace -f -o: "PID call(args) = RESULT <SECS>", a call another thread interrupts as
# "PID call(args <unfinished ...>" then "PID <... call resumed>...) = RESULT <SECS>".
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
first_pid = lines[0].split()[0]
events, pending, results = [], {}, []
for l in lines:
    pid, rest = l.split(None, 1)
    if rest.startswith("membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED"):
        events.append(("register", pid))
        if rest.endswith("<unfinished ...>"):
            pending[pid] = True
        else:
            results.append(rest)
    elif rest.startswith("<... membarrier resumed>") and pending.pop(pid, False):
        results.append(rest)
    elif re.match(r"clone3?\(", rest):
        events.append(("clone", pid))
kinds = [k for k, _ in events]
assert kinds and kinds[0] == "register" and events[0][1] == first_pid, events[:3]
after = kinds.index("clone")
assert "register" in kinds[after:], events                # the agent's liburcu and lttng-ust
assert not pending and len(results) == kinds.count("register"), (pending, results)
secs = [float(re.search(r"= 0 <([0-9.]+)>$", r).group(1)) for r in results]  # each returned 0
print("%d registrations, the first before any clone, %d after; the longest %.0f us" % (
    len(secs), kinds[after:].count("register"), max(secs) * 1e6))
PY
) || fail "the registrations: $(grep -E 'REGISTER_PRIVATE_EXPEDITED,|clone' "$WORK/pre.strace" | head -8)"
  pass "record -- java: LD_PRELOAD=$(cat "$WORK/pre.env"); $regs"
elif [ "${CI:-}" = true ]; then
  fail "strace not installed (tools/check installs it): the membarrier registration is not checked"
else
  echo "note: strace not installed: the membarrier registration before the first thread is not checked" >&2
fi

# --- javac on java/util, rundowns every 2 s, a private lttng-sessiond ---------------------
mkdir -p "$WORK/jdk" && (cd "$WORK/jdk" && unzip -q "$SRC_ZIP" 'java.base/java/util/*.java') ||
  fail "unzip java.base/java/util from $SRC_ZIP"
find "$WORK/jdk/java.base/java/util" -maxdepth 1 -name '*.java' | sort >"$WORK/javac-files"
nfiles=$(wc -l <"$WORK/javac-files")
[ "$nfiles" -gt 100 ] || fail "only $nfiles java/util sources in $SRC_ZIP"
lttng list >/dev/null 2>&1 && fail "an lttng-sessiond answers in the test's namespace"
t=$(date +%s%N)
run_record "$WORK/javac" --rundown-every 2 -- javac --patch-module java.base="$WORK/jdk/java.base" \
  -XDignore.symbol.file -nowarn -d "$WORK/classes" @"$WORK/javac-files"
ms=$((($(date +%s%N) - t) / 1000000))
[ $RC -eq 0 ] || fail "record -- javac: exit $RC: $(tail -5 "$WORK/run.out" "$WORK/run.err")"
classes=$(find "$WORK/classes" -name '*.class' | wc -l)
[ "$classes" -gt 1000 ] || fail "javac wrote $classes class files"
grep -q "^Picked up JAVA_TOOL_OPTIONS: -agentpath:$AGENT=trigger=session,exit,every:2," "$WORK/run.err" ||
  fail "javac's JAVA_TOOL_OPTIONS: $(head -3 "$WORK/run.err")"
[ "$(summary "$WORK/javac" 's["sessiond"], s["agent"]')" = "private $AGENT" ] || fail "javac: $(cat "$WORK/run.out")"
check_trace "$WORK/javac" HotSpot
$PY - "$WORK/javac/summary.json" <<'PY' || fail "javac's rundowns: $(cat "$WORK/run.out")"
import json, sys
s = json.load(open(sys.argv[1]))
(p,) = s["processes"]
t = [r["trigger"] for r in p["rundowns"]]
assert t[0] == "session" and t[-1] == "exit" and "every" in t, t
PY
lttng list >/dev/null 2>&1 && fail "jitprov's private lttng-sessiond still answers"
pass "javac ($nfiles java/util sources, $classes class files) under jitprov record in $ms ms:
$(sed 's/^/    /' "$WORK/javac/stdout")"

# --- a trace that does not verify: the summary printed, exit 119 ----------------------------
# JITPROV_VERIFY: the real verifier, then the exit status of a violation (1).
printf '#!/bin/sh\n"%s" "$@"\nexit 1\n' "$VERIFY" >"$WORK/verify-1" && chmod +x "$WORK/verify-1"
JITPROV_VERIFY=$WORK/verify-1 run_record "$WORK/bad" -- java -version
[ $RC -eq 119 ] && grep -q "^  verdict:     NOT VERIFIED: every guarantee holds.*(jitprov-verify exit 1" "$WORK/bad/stdout" &&
  [ "$(summary "$WORK/bad" 's["exit_status"], s["command_status"], s["verify_exit"]')" = "119 0 1" ] ||
  fail "a verifier exiting 1: exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
JITPROV_VERIFY=$WORK/no-verifier expect 120 "$WORK/no-verifier not found" -o "$WORK/e3" -- java -version
pass "a trace that did not verify: exit 119, \"$(grep verdict: "$WORK/bad/stdout" | sed 's/^ *//' | cut -c1-80)...\""

# --- SIGINT to jitprov during a Java run --------------------------------------------------
mkdir -p "$WORK/spin"
cat >"$WORK/spin/Spin.java" <<'EOF'
import java.nio.file.*;
import java.util.*;
public class Spin {  // works until stopped; writes its pid to the file args[0] once running
  public static void main(String[] args) throws Exception {
    Map<Integer, String> m = new HashMap<>();
    long n = 0;
    for (int round = 0;; round++) {
      for (int i = 0; i < 100000; i++) { m.put(i, Integer.toString(i * 31)); n += m.get(i).length(); }
      m.clear();
      if (round == 20) Files.writeString(Path.of(args[0]), ProcessHandle.current().pid() + "\n");
    }
  }
}
EOF
javac -d "$WORK/spin" "$WORK/spin/Spin.java" || fail "javac Spin.java"
"$JITPROV" record -o "$WORK/sigint" -- java -cp "$WORK/spin" Spin "$WORK/spin/running" >"$WORK/sigint.out" 2>&1 &
REC=$!
track_pid "$REC"
for _ in $(seq 300); do [ -s "$WORK/spin/running" ] && break; kill -0 "$REC" 2>/dev/null || break; sleep 0.1; done
[ -s "$WORK/spin/running" ] || fail "Spin did not start: $(cat "$WORK/sigint.out")"
track_pid "$(cat "$WORK/spin/running")"  # ended by the cleanup if SIGINT did not end it
kill -INT "$REC"
for _ in $(seq 300); do kill -0 "$REC" 2>/dev/null || break; sleep 0.1; done
kill -0 "$REC" 2>/dev/null && fail "jitprov record still runs 30 s after SIGINT: $(cat "$WORK/sigint.out")"
wait "$REC"
RC=$?
grep -v '^Picked up JAVA_TOOL_OPTIONS' "$WORK/sigint.out" >"$WORK/sigint/stdout"
[ $RC -eq 130 ] || fail "SIGINT: exit $RC, not 130: $(cat "$WORK/sigint.out")"
[ "$(summary "$WORK/sigint" 's["signal"], s["command_status"]')" = "SIGINT 130" ] ||
  fail "SIGINT: $(cat "$WORK/sigint.out")"
check_trace "$WORK/sigint" HotSpot
[ "$(summary "$WORK/sigint" 's["processes"][0]["rundowns"][-1]["trigger"]')" = exit ] ||
  fail "SIGINT: no exit rundown: $(cat "$WORK/sigint.out")"
pass "SIGINT to jitprov record during a Java run: exit 130, the exit rundown in a verified trace:
$(sed 's/^/    /' "$WORK/sigint/stdout")"

# child_of PID NAME: the pid of PID's child named NAME, once it runs (20 s at most).
child_of() {
  local c
  for _ in $(seq 200); do c=$(pgrep -P "$1" -x "$2") && { echo "$c"; return 0; }; sleep 0.1; done
  return 1
}

# --- SIGKILL to jitprov: its private lttng-sessiond does not outlive it -------------------
# (no handler of jitprov's runs: the daemon is told by the kernel, PR_SET_PDEATHSIG; it
# was left running before, with its consumer daemons, in a namespace no `lttng list` sees)
"$JITPROV" record -o "$WORK/sigkill" --runtime java -- sleep 60 >"$WORK/sigkill.out" 2>&1 &
REC=$!
track_pid "$REC"
SLP=$(child_of "$REC" sleep) || fail "record -- sleep 60 did not start sleep: $(cat "$WORK/sigkill.out")"
track_pid "$SLP"
SD=$(pgrep -P "$REC" -x lttng-sessiond)
[ -n "$SD" ] || fail "record started no private lttng-sessiond: $(cat "$WORK/sigkill.out")"
track_pid "$SD"
CONSUMERS=$(pgrep -P "$SD" | tr '\n' ' ')
[ -n "$CONSUMERS" ] || fail "the private lttng-sessiond $SD has no consumer daemon while recording"
for c in $CONSUMERS; do track_pid "$c"; done
kill -KILL "$REC"
wait "$REC" 2>/dev/null
for _ in $(seq 100); do
  left=
  # alive: signalable and not a zombie (one reparented to an init that does not reap)
  for p in $SD $CONSUMERS; do
    kill -0 "$p" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && left="$left $p"
  done
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "SIGKILL to jitprov record: its lttng-sessiond and consumers still run 10 s after:$left"
kill "$SLP" 2>/dev/null
pass "SIGKILL to jitprov record: its private lttng-sessiond ($SD) and its consumer daemons ($CONSUMERS) end with it"

# --- SIGINT while the daemon has not answered yet ------------------------------------------
# An lttng-sessiond that never answers (a stand-in first in PATH that sleeps): record waits
# up to 10 s for it, and a SIGINT ends that wait at the next poll (it went unanswered for
# the 10 s before), the stand-in killed.
mkdir -p "$WORK/mute" && printf '#!/bin/sh\necho $$ >"%s/mute/pid"\nexec sleep 60\n' "$WORK" >"$WORK/mute/lttng-sessiond" &&
  chmod +x "$WORK/mute/lttng-sessiond" || fail "the mute lttng-sessiond"
PATH="$WORK/mute:$PATH" "$JITPROV" record -o "$WORK/mute/rec" --runtime java -- true >"$WORK/mute.out" 2>&1 &
REC=$!
track_pid "$REC"
poll 30 test -s "$WORK/mute/pid" || fail "record did not start the mute lttng-sessiond: $(cat "$WORK/mute.out")"
sleep 0.3
t=$(date +%s%N)
kill -INT "$REC"
wait "$REC"; rc=$?
ms=$((($(date +%s%N) - t) / 1000000))
mute=$(cat "$WORK/mute/pid")
[ $rc -ne 0 ] && [ $ms -lt 5000 ] && grep -q "interrupted" "$WORK/mute.out" && ! kill -0 "$mute" 2>/dev/null ||
  fail "SIGINT while the daemon did not answer: exit $rc after $ms ms, the stand-in $(kill -0 "$mute" 2>/dev/null && echo alive || echo gone): $(cat "$WORK/mute.out")"
pass "SIGINT while lttng-sessiond had not answered: exit $rc after $ms ms, \"$(grep interrupted "$WORK/mute.out" | head -1)\", the stand-in gone"

# --- Ctrl-C three times: a CMD that ignores SIGINT is killed -----------------------------
# (before, jitprov waited for it however often SIGINT came, saying nothing)
# thrice SIG NAME SCRIPT [child]: record -- sh -c SCRIPT (which ignores SIG and ends in
# `exec sleep 60`: its pid in SLP; with `child`, its child sleep's in GRANDCHILD) signalled
# three times: alive after the first, said after the second, killed at the third with
# jitprov's exit 137.
thrice() {
  local sig=$1 name=$2 script=$3
  "$JITPROV" record -o "$WORK/$name" --runtime java -- sh -c "$script" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  REC=$!
  track_pid "$REC"
  SLP=$(child_of "$REC" sleep) || fail "record -- sh -c '$script' did not start sleep: $(cat "$WORK/$name.err")"
  track_pid "$SLP"
  GRANDCHILD=""
  if [ "${4:-}" = child ]; then GRANDCHILD=$(child_of "$SLP" sleep) && track_pid "$GRANDCHILD"; fi
  kill -"$sig" "$REC"; sleep 0.5
  kill -0 "$SLP" || fail "the sleep that ignores SIG$sig ended at the first SIG$sig"
  kill -"$sig" "$REC"; sleep 0.5
  grep -q "^jitprov record: sh (pid $SLP) still runs; a third Ctrl-C or SIGTERM kills it (SIGKILL)$" "$WORK/$name.err" ||
    fail "the second SIG$sig: $(cat "$WORK/$name.err")"
  kill -0 "$SLP" || fail "the sleep ended at the second SIG$sig"
  kill -"$sig" "$REC"
  for _ in $(seq 300); do kill -0 "$REC" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$REC" 2>/dev/null && fail "jitprov record still runs 30 s after the third SIG$sig: $(cat "$WORK/$name.err")"
  wait "$REC"; RC=$?
  [ $RC -eq 137 ] && grep -q "^jitprov record: sh (pid $SLP) killed (SIGKILL)$" "$WORK/$name.err" ||
    fail "the third SIG$sig: exit $RC: $(cat "$WORK/$name.out" "$WORK/$name.err")"
}
# CMD's own child ignores SIGINT too: the third kills it with CMD (before, only CMD).
thrice INT int3 'trap "" INT; sleep 61 & exec sleep 60' child
[ -n "$GRANDCHILD" ] || fail "CMD's own child did not start"
# (killed, it may stay a zombie of this script: the reaper of the test's pid namespace)
case "$(awk '{print $3}' "/proc/$GRANDCHILD/stat" 2>/dev/null || echo gone)" in
  Z | gone) ;;
  *) fail "CMD's own child (pid $GRANDCHILD) still runs after the third SIGINT" ;;
esac
pass "three SIGINTs, CMD ignoring them: the second says so, the third kills it and its child (SIGKILL), exit 137"
# The same with SIGTERMs (a supervisor's; before, they were passed on forever).
thrice TERM term3 'trap "" TERM; exec sleep 60'
pass "three SIGTERMs, CMD ignoring them: the second says so, the third kills it (SIGKILL), exit 137"

# --- the summary not shown: stdout closed, or full ------------------------------------------
# (before: exit 0 and nothing said; with stdout closed, the first file opened took fd 1)
for out in closed full; do
  if [ $out = closed ]; then
    "$JITPROV" record -o "$WORK/out-$out" --runtime java -- true >&- 2>"$WORK/out-$out.err"; RC=$?
  else
    "$JITPROV" record -o "$WORK/out-$out" --runtime java -- true >/dev/full 2>"$WORK/out-$out.err"; RC=$?
  fi
  [ $RC -eq 116 ] && grep -q "^jitprov record: the summary could not be written to stdout (.*); it is in $WORK/out-$out/summary.json$" \
    "$WORK/out-$out.err" && [ -s "$WORK/out-$out/summary.json" ] ||
    fail "record with stdout $out: exit $RC: $(cat "$WORK/out-$out.err")"
  grep -rl "verdict" "$WORK/out-$out/trace" 2>/dev/null && fail "record with stdout $out: the summary went into the trace"
  echo "  stdout $out: exit $RC: $(grep "^jitprov record: the summary" "$WORK/out-$out.err")"
done
pass "the summary not written (stdout closed, /dev/full): exit 116, the line says where it is"

# --- the default directory is never another recording's ------------------------------------
# Another recording's empty directory of this second (and of the next few) exists: this
# one takes the name with -2 (before, it wrote its trace into the other's).
mkdir -p "$WORK/same"
now=$(date +%s)
for i in 0 1 2 3 4 5; do mkdir "$WORK/same/jitprov-record-$(date -d "@$((now + i))" +%Y%m%d-%H%M%S)"; done
(cd "$WORK/same" && "$JITPROV" record --runtime java -- true >"$WORK/same.out" 2>"$WORK/same.err") ||
  fail "record in a directory of claimed names: $(cat "$WORK/same.out" "$WORK/same.err")"
taken=$(find "$WORK/same" -mindepth 2 -maxdepth 2 | grep -c .)
made=$(find "$WORK/same" -mindepth 1 -maxdepth 1 -name 'jitprov-record-*-2' | grep -c .)
[ "$made" -eq 1 ] && [ -e "$(find "$WORK/same" -maxdepth 1 -name 'jitprov-record-*-2')/summary.json" ] &&
  [ "$taken" -eq "$(find "$(find "$WORK/same" -maxdepth 1 -name 'jitprov-record-*-2')" -mindepth 1 -maxdepth 1 | grep -c .)" ] ||
  fail "the default directory of a second already claimed: $(ls -R "$WORK/same" | head -20)"
pass "the default directory of a second already claimed: $(basename "$(find "$WORK/same" -maxdepth 1 -name 'jitprov-record-*-2')"), the other left empty"

# --- a user, not root: two recordings at once, each with a daemon of its own ---------------
# (before: the daemon in the user's $HOME/.lttng, which the second recording took for a
# running one and the first stopped under it; and none at all where $HOME is not writable)
chmod 711 "$WORK"
mkdir -p "$WORK/user"
chmod 777 "$WORK/user"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$@"; }
as_nobody "$JITPROV" record -o "$WORK/user/a" --runtime java -- sh -c 'sleep 3; exec java -Xshare:off -version' \
  >"$WORK/user/a.out" 2>&1 &
UA=$!
track_pid "$UA"
sleep 1
as_nobody "$JITPROV" record -o "$WORK/user/b" -- java -Xshare:off -version >"$WORK/user/b.out" 2>&1 ||
  fail "a user's second recording: $(cat "$WORK/user/b.out")"
wait "$UA" || fail "a user's first recording, the second done meanwhile: $(cat "$WORK/user/a.out")"
for x in a b; do
  grep -q "private lttng-sessiond" "$WORK/user/$x.out" &&
    grep -q "verdict:     verified: every guarantee holds" "$WORK/user/$x.out" &&
    grep -qE "exit [0-9.]+ ms \([1-9][0-9]* records\)" "$WORK/user/$x.out" ||
    fail "a user's recording $x: $(cat "$WORK/user/$x.out")"
done
for d in /tmp/jitprov-lttng-*; do [ -e "$d" ] && [ "$(stat -c %u "$d")" = 65534 ] && fail "left behind: $d"; done
pass "a user (nobody, \$HOME not writable): two recordings at once, each verified with its own daemon, nothing left in /tmp"

# --- a user: CMD's recording beside the user's record -p and its daemon ---------------------
# A user's `record -p` starts the daemon where the user's target looks ($HOME/.lttng) and
# leaves it to its keeper; a recording of CMD by the same user then runs with a daemon of
# its own all the same (an LTTNG_HOME of its own, which CMD inherits): that running
# daemon takes every process of the user with an agent, and CMD's recording would hold
# the -p target too (it did until 2026-12-08, verify exit 4). The -p recording ends
# first, CMD's runs on; then no daemon of the user's answers.
NODE_ADDON=$(realpath "$(dirname "$JITPROV")/../node")  # the build tree's client, as record finds it
[ -f "$NODE_ADDON/preload.js" ] || fail "no Node.js client beside $JITPROV ($NODE_ADDON/preload.js)"
mkdir -p "$WORK/user/home" && chown 65534:65534 "$WORK/user/home" || fail "the user's home"
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$WORK/user/home" "$@"; }
# The target: node itself the background job's pid (exec'd), ready once its client loaded.
(
  exec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$WORK/user/home" \
    NODE_OPTIONS="--require=$NODE_ADDON/preload.js" JITPROV_NODE=perfmap=off node -e \
    'require("fs").writeFileSync(process.argv[1], ""); let x = 0;
     setInterval(() => { x += new Function("a", "return a + " + (x % 89))(1); }, 2)' "$WORK/user/home/ready"
) >"$WORK/user/target.out" 2>&1 &
UT=$!
track_pid "$UT"
for _ in $(seq 200); do [ -e "$WORK/user/home/ready" ] && break; sleep 0.05; done
[ -e "$WORK/user/home/ready" ] || fail "the user's node did not start: $(cat "$WORK/user/target.out")"
(
  as_user "$JITPROV" record -p "$UT" -d 2 -o "$WORK/user/p" >"$WORK/user/p.out" 2>&1
  echo "$? $(date +%s%N)" >"$WORK/user/p.end"
) &
UP=$!
track_pid "$UP"
for _ in $(seq 200); do as_user lttng list >/dev/null 2>&1 && break; sleep 0.05; done
as_user lttng list >/dev/null 2>&1 || fail "no daemon of the user's answers after record -p began: $(cat "$WORK/user/p.out")"
as_user "$JITPROV" record -o "$WORK/user/c" -- node -e \
  'const t = Date.now(); let x = 0; while (Date.now() - t < 4000) x += new Function("a", "return a * " + (x % 97))(1);' \
  >"$WORK/user/c.out" 2>&1 || fail "a user's recording of CMD beside the user's record -p: exit $?: $(cat "$WORK/user/c.out")"
t_c=$(date +%s%N)
wait "$UP"
read -r rc_p t_p <"$WORK/user/p.end"
[ "$rc_p" = 0 ] || fail "a user's record -p: exit $rc_p: $(cat "$WORK/user/p.out")"
# CMD's recording holds CMD's node alone (a thousand bodies and more), verified, beside
# the running daemon; the -p one holds its target.
got=$($PY - "$WORK/user/p/summary.json" "$WORK/user/c/summary.json" "$UT" <<'PY'
import json, sys
p, c = (json.load(open(f)) for f in sys.argv[1:3])
ut = int(sys.argv[3])
print(p["sessiond"], c["sessiond"], c["sessiond_running_beside"], c["verify_exit"],
      [x["vpid"] == ut for x in c["processes"]] == [False] and c["processes"][0]["code_bodies"] > 1000,
      [x["vpid"] for x in p["processes"]] == [ut])
PY
)
[ "$got" = "started private True 0 True True" ] ||
  fail "a user's CMD beside record -p: the daemons, CMD's verify exit, its process: $got: $(cat "$WORK/user/p.out" "$WORK/user/c.out")"
for _ in $(seq 100); do as_user lttng list >/dev/null 2>&1 || break; sleep 0.05; done
! as_user lttng list >/dev/null 2>&1 || fail "the user's daemon answers after both recordings ended"
kill "$UT"
pass "a user's recording of CMD beside the daemon the user's record -p started: a private one, CMD's process alone, verified; it ran on $(((t_c - t_p) / 1000000)) ms after the -p one ended; no daemon of the user's after both"

# --- a running lttng-sessiond is left alone (root) -----------------------------------------
# Every process with an agent registers with a running daemon: a recording of CMD there
# would hold them all. Root records CMD with a private daemon all the same (before: the
# running one, and two recordings at once each held the other's CMD). B's CMD is a shell
# that starts node as its child; a node with the agent runs beside both, unrecorded.
start_sessiond
run_record "$WORK/existing" -- java -version
[ $RC -eq 0 ] || fail "record with a running lttng-sessiond: exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
[ "$(summary "$WORK/existing" 's["sessiond"], s["sessiond_running_beside"]')" = "private True" ] ||
  fail "not a private lttng-sessiond beside the running one: $(cat "$WORK/run.out")"
kill -0 "$SESSIOND_PID" && lttng list >/dev/null 2>&1 || fail "the running lttng-sessiond is gone"
lttng list 2>/dev/null | grep jitprov-record >/dev/null && fail "jitprov record left a session in the running daemon: $(lttng list)"
check_trace "$WORK/existing" HotSpot
NODE_OPTIONS="--require=$NODE_ADDON/preload.js" JITPROV_NODE=perfmap=off node -e 'setInterval(() => {}, 1000)' &
STRANGER=$!
track_pid "$STRANGER"
"$JITPROV" record -o "$WORK/two-a" -- node -e \
  'const t = Date.now(); let x = 0; while (Date.now() - t < 4000) x += new Function("a", "return a + " + (x % 97))(1);' \
  >"$WORK/two-a.out" 2>"$WORK/two-a.err" &
TWO_A=$!
track_pid "$TWO_A"
sleep 1.5
"$JITPROV" record -o "$WORK/two-b" --runtime node -- sh -c \
  'node -e "let x = 0; for (let i = 0; i < 2000; i++) x += new Function(\"a\", \"return a * \" + i)(2);"; true' \
  >"$WORK/two-b.out" 2>"$WORK/two-b.err" || fail "the second of two recordings: exit $?: $(cat "$WORK/two-b.out" "$WORK/two-b.err")"
wait "$TWO_A" || fail "the first of two recordings: exit $?: $(cat "$WORK/two-a.out" "$WORK/two-a.err")"
kill "$STRANGER"
for x in a b; do
  cp "$WORK/two-$x.out" "$WORK/two-$x/stdout"
  check_trace "$WORK/two-$x" V8
  got=$(summary "$WORK/two-$x" 'len(s["processes"]), s["processes"][0]["code_bodies"] > 1000, s["processes"][0]["vpid"] != '"$STRANGER")
  [ "$got" = "1 True True" ] || fail "recording $x of two at once: processes, bodies, not the stranger: $got: $(cat "$WORK/two-$x.out")"
  echo "  recording $x: $(grep "code bodies" "$WORK/two-$x.out")"
done
# A user in the Unix tracing group (Debian's lttng-tools makes `tracing`), with root's
# daemon running (as a distribution's lttng-sessiond.service runs it): lttng-sessiond
# will not start for that user ("already running": liblttng-ctl asks root's first), and
# the user's lttng commands and CMD's processes reach root's. The recording uses it and
# says so (it holds the user's other processes with an agent too), $HOME not writable
# as it may be; nothing left in /tmp.
TRACING_GID=$(getent group tracing | cut -d: -f3)
[ -n "$TRACING_GID" ] || fail "no Unix group 'tracing' (lttng-tools' package makes it)"
as_tracer() { setpriv --reuid=65534 --regid=65534 --groups="$TRACING_GID" env HOME=/nonexistent "$@"; }
as_tracer lttng list >/dev/null 2>&1 || fail "a user in group tracing does not reach root's running daemon"
as_tracer "$JITPROV" record -o "$WORK/user/tg" -- node -e \
  'let x = 0; for (let i = 0; i < 2000; i++) x += new Function("a", "return a * " + i)(2);' \
  >"$WORK/user/tg.out" 2>&1 || fail "a tracing-group user's recording: exit $?: $(cat "$WORK/user/tg.out")"
grep -q "^jitprov record: lttng-sessiond: a member of the Unix tracing group cannot run one of its own beside root's" \
  "$WORK/user/tg.out" || fail "a tracing-group user's recording did not say whose daemon: $(cat "$WORK/user/tg.out")"
got=$(summary "$WORK/user/tg" 's["sessiond"], s["sessiond_running_beside"], s["verify_exit"], [p["code_bodies"] > 1000 for p in s["processes"]]')
[ "$got" = "existing False 0 [True]" ] ||
  fail "a tracing-group user's recording beside root's daemon: $got: $(cat "$WORK/user/tg.out")"
lttng list 2>/dev/null | grep jitprov-record >/dev/null && fail "a session left in root's daemon: $(lttng list)"
for d in /tmp/jitprov-lttng-*; do [ -e "$d" ] && [ "$(stat -c %u "$d")" = 65534 ] && fail "left behind: $d"; done
lttng_sessiond_stop
pass "with an lttng-sessiond running: a private one used, the running one left alone; two recordings at once beside a third node with the agent each hold their own CMD's process alone; a user of group tracing records on root's, saying so"

# --- .NET ----------------------------------------------------------------------------------
if [ -n "$CLR_AGENT" ]; then
  $PY "$SRC/tools/dotnet/workload/gen_workload.py" "$WORK/wl" 5 50 >/dev/null || fail "generate the workload"
  dotnet build -c Release -o "$WORK/wl/out" "$WORK/wl" >"$WORK/build.log" 2>&1 ||
    { tail -20 "$WORK/build.log" >&2; fail "dotnet build the workload"; }
  # With an APM's CORECLR_PROFILER_PATH_64 in the user's environment, which CoreCLR takes
  # before CORECLR_PROFILER_PATH (was: that library loaded under jitprov's class id,
  # nothing recorded, exit 0).
  CORECLR_PROFILER_PATH_64=/nonexistent/libapm.so run_record "$WORK/dotnet" -- dotnet "$WORK/wl/out/JitWork.dll" --seconds 1
  [ $RC -eq 0 ] || fail "record -- dotnet: exit $RC: $(cat "$WORK/run.out" "$WORK/run.err")"
  [ "$(summary "$WORK/dotnet" 's["agent"]')" = "$CLR_AGENT" ] || fail "dotnet: $(cat "$WORK/run.out")"
  check_trace "$WORK/dotnet" CoreCLR
  jitted=$(sed -n 's/^JitWork: jitted \([0-9]*\) bodies$/\1/p' "$WORK/run.out")
  [ -n "$jitted" ] && [ "$(summary "$WORK/dotnet" 's["code_bodies"]["CoreCLR"]["total"]')" -eq "$jitted" ] ||
    fail "dotnet: the app jitted ${jitted:-?} bodies: $(cat "$WORK/run.out")"
  pass "dotnet JitWork under jitprov record: $jitted bodies, as the app counted:
$(sed -n '/^jitprov record:/,$p' "$WORK/dotnet/stdout" | sed 's/^/    /')"
fi
pass "jitprov record: all checks in $(($(date +%s) - T0)) s"
