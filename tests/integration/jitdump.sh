#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf names JIT samples through time (issue 25): perf record -k 1 runs HotSpot on
# jitprov's workload (class churn: tens of thousands of nmethods freed, their ranges
# reused) under the agent with jitdump=DIR and perfmap=/tmp, while a private lttng
# session records the agent's jitprov_runtime method_load and code_unload events;
# perf inject --jit merges the dump. Every sample in JIT code is judged by
# jitdump_names.py against the lttng trace, not against the dump (the judge must not
# share the code under test: its header says why the trace), read once through the
# perf map and once after the injection: named right, wrong, unnamed, side by side, and
# apart for samples in reused ranges. Passes when the injected reading names every JIT
# sample right and beats the perf map in reused ranges; perf annotate shows a JIT'd
# method's instructions; and perf annotate -l shows the source lines of the hottest
# workload methods (the agent's JIT_CODE_DEBUG_INFO), every one inside its method's line
# range by the classes' own LineNumberTables (javap -l; jitdump_lines.py).
# JITDUMP_TEST_FAULT=shift:MS|swap (tests of the test): the dump is broken before the
# injection (jitdump_fault.py: its loads stamped MS ms late, or pairs of names
# swapped), and the judge must fail.
#   jitdump.sh AGENT_SO SOURCE_DIR
. "$(dirname "$0")/lib.sh"
AGENT=${1:?usage: jitdump.sh AGENT_SO SOURCE_DIR}
SRC=${2:?usage: jitdump.sh AGENT_SO SOURCE_DIR}
require_lttng
require_cmd java javac javap perf
perf inject --help 2>&1 | grep -- '--jit' >/dev/null || skip "perf inject has no --jit"
enter_private_namespace "$@"
WORK=$(work_dir jitprov-jitdump)
# perf keeps a copy of every ELF file perf inject --jit writes (about 100 000 a run) in its
# build-id cache, ~/.debug unless told by --buildid-dir (it sets PERF_BUILDID_DIR for its
# children but reads no variable): that filled the disk's inodes. The run's own cache.
perf() { command perf --buildid-dir "$WORK/buildid" "$@"; }
JAVA_PID=
trap 'cleanup_pids; rm -rf "$WORK"; [ -n "$JAVA_PID" ] && rm -f "/tmp/perf-$JAVA_PID.map"' EXIT

$PY "$SRC/tools/jvm/gen_workload.py" "$WORK/src" 50 400 || fail "generate the workload"
javac -d "$WORK/classes" "$WORK/src"/*.java || fail "javac the workload"
mkdir -p "$WORK/ready" "$WORK/dump"
# The judge's truth: the agent's loads and unloads, in a channel large enough to keep
# them all (the judge fails on any discarded event).
start_sessiond
lttng create jitdump --output="$WORK/trace" >/dev/null || fail "lttng create"
lttng_channel jitdump jitprov_runtime 'jitprov_runtime:method_load,jitprov_runtime:code_unload' \
  --subbuf-size=8M --num-subbuf=8 || fail "lttng channel"
lttng add-context -u -s jitdump -t vpid >/dev/null || fail "lttng add-context vpid"
lttng start jitdump >/dev/null || fail "lttng start"
mono() { $PY -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }
T0=$(mono)
# perf starts the JVM: it must record the agent's mapping of the dump (the marker).
# 4 s of churn (35 000-65 000 loads, 16 000 or more unloads: every JIT'd ELF perf inject
# writes and the test reads costs time; 8 s took 50 s of perf inject alone, 6 s 42 s for
# 97 643 ELF files; at 4 s on a loaded machine 24 s for 35 774, with 66 samples in reused
# ranges, the perf map wrong on 36 of them), then 2 s hot; every:1 keeps the perf map as
# current as a perf map gets.
perf record -k 1 -F 1999 -o "$WORK/perf.data" -- java -XX:+PreserveFramePointer -XX:CompileThresholdScaling=0.05 \
  -agentpath:"$AGENT"=trigger=every:1,exit,perfmap=/tmp,jitdump="$WORK/dump",stats="$WORK/agent.json" \
  -cp "$WORK/classes" jitwork.JitWorkload "$WORK/classes" 4 2 0 "$WORK/ready" >"$WORK/java.out" 2>"$WORK/perf.err" ||
  { cat "$WORK/java.out" "$WORK/perf.err" >&2; fail "perf record java"; }
T1=$(mono)
lttng stop jitdump >/dev/null && lttng destroy jitdump >/dev/null || fail "lttng stop/destroy"
DUMP=$(ls "$WORK"/dump/jit-*.dump 2>/dev/null | head -1)
[ -n "$DUMP" ] || fail "no jit-PID.dump in $WORK/dump"
JAVA_PID=$(basename "$DUMP" .dump); JAVA_PID=${JAVA_PID#jit-}
[ -f "/tmp/perf-$JAVA_PID.map" ] || fail "no /tmp/perf-$JAVA_PID.map"
$PY - "$WORK/agent.json" <<'PY' || fail "the agent's jitdump counters"
import json, sys
a = json.load(open(sys.argv[1]))
j = a["jitdump"]
assert a["errors"] == 0 and a["unloads"] > 1000, a
assert j["write_errors"] == 0 and j["dropped"] == 0 and j["unreadable"] == 0, j
assert j["loads"] + j["rundown_loads"] == a["loads"] - a["replays"] + a["stubs"], (j, a)
l = a["lines"]
assert j["debug_records"] > 1000 and j["debug_dropped"] == 0 and l["errors"] == 0, (j, l)
# Source files from VMStructs but for the first ones, checked against JVMTI's; perf's lines
# below are judged in javap's files too.
assert l["file_mismatches"] == 0 and l["files_vmstructs"] > 1000 and l["files_jvmti"] >= 32, l
print("ok: dump: %d loads (%d MB, %d MB of code), 0 write errors; agent: %d loads, %d unloads; source lines: %d "
      "DEBUG_INFO records, %d entries (agent: %d loads with lines, %d without: no line table)" %
      (j["loads"], j["bytes"] >> 20, j["code_bytes"] >> 20, a["loads"], a["unloads"], j["debug_records"],
       j["debug_entries"], l["loads"], l["absent"]))
PY

if [ -n "${JITDUMP_TEST_FAULT:-}" ]; then
  $PY "$SRC/tests/integration/jitdump_fault.py" "$DUMP" "$JITDUMP_TEST_FAULT" || fail "jitdump_fault.py"
fi
t0=$(date +%s)
perf inject --jit -i "$WORK/perf.data" -o "$WORK/perf.jit.data" 2>"$WORK/inject.err" ||
  { cat "$WORK/inject.err" >&2; fail "perf inject --jit"; }
pass "perf inject --jit: $(ls "$WORK/dump" | grep -c '^jitted-') ELF files in $(($(date +%s) - t0)) s"
# The two readings at once (perf script is single-threaded; the machine has two cores).
perf script -i "$WORK/perf.data" -F time,ip,sym --ns -G >"$WORK/map.txt" 2>/dev/null &
map_pid=$!
perf script -i "$WORK/perf.jit.data" -F time,ip,sym --ns -G >"$WORK/inject.txt" 2>/dev/null ||
  fail "perf script (injected)"
wait "$map_pid" || fail "perf script (perf map)"
[ ! -e "$HOME/.debug$WORK" ] || fail "perf copied this run's files into its cache in $HOME/.debug"
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/jitdump_names.py" "$WORK/trace" "$JAVA_PID" "$T0" "$T1" \
  "$WORK/map.txt" "$WORK/inject.txt" "$DUMP" ||
  fail "the injected jitdump does not name every JIT sample by its method at its time"
pass "jitdump names every JIT sample right, reused ranges included, where the perf map does not"

perf report -i "$WORK/perf.jit.data" --stdio --no-children --sort sym >"$WORK/report.txt" 2>/dev/null
sym=$(grep -o -m1 'jitwork\.Gen[0-9]*::m[0-9]*' "$WORK/report.txt")
[ -n "$sym" ] || fail "perf report names no workload method"
perf annotate -i "$WORK/perf.jit.data" --stdio -s "$sym" 2>/dev/null >"$WORK/annotate.txt"
grep -qE '^\s+[0-9.]+ :\s+[0-9a-f]+:\s+(mov|push|sub|add|lea|cmp|test|jmp|call|ret)' "$WORK/annotate.txt" ||
  { head -20 "$WORK/annotate.txt" >&2; fail "perf annotate shows no instructions of $sym"; }
pass "perf annotate shows the instructions of $sym"

# Source lines: perf annotate -l of the 12 hottest workload methods (perf report --sort
# srcline would resolve every sampled address of every jitted ELF: 5 minutes here), and
# the line tables perf inject wrote into every workload method's jitted ELF, judged
# against the classes' own line tables.
javap -l -p -cp "$WORK/classes" $(cd "$WORK/classes" && ls jitwork/*.class | sed 's/\.class$//; s|/|.|g') \
  >"$WORK/javap.txt" 2>&1 || fail "javap -l"
args=() pending=()
i=0
# Two at a time (each reads the whole injected file, single-threaded: 1.6 s each here).
for s in $(grep -o 'jitwork\.Gen[0-9]*::[A-Za-z0-9_]*' "$WORK/report.txt" | awk '!seen[$0]++' | head -12); do
  i=$((i + 1))
  perf annotate -i "$WORK/perf.jit.data" --stdio -l -s "$s" >"$WORK/lines-$i.txt" 2>/dev/null &
  pending+=($!)  # waited for by pid: lttng-sessiond is a child too
  if [ ${#pending[@]} -eq 2 ]; then wait "${pending[@]}"; pending=(); fi
  args+=("$s" "$WORK/lines-$i.txt")
done
[ ${#pending[@]} -eq 0 ] || wait "${pending[@]}"
[ $i -gt 0 ] || fail "perf report names no workload method"
$PY "$SRC/tests/integration/jitdump_lines.py" "$WORK/javap.txt" --elves "$WORK/dump" "${args[@]}" ||
  fail "perf's source lines of JIT'd methods are not all in their methods' line ranges"
pass "perf annotate -l shows the source lines of $i JIT'd methods, and every jitted ELF's lines, in their methods' javap line ranges"
