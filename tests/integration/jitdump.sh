#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf names JIT samples through time (issue 25): perf record -k 1 runs HotSpot on
# jitprov's workload (class churn: tens of thousands of nmethods freed, their ranges
# reused) under the agent with jitdump=DIR and perfmap=/tmp; perf inject --jit merges the
# dump; every sample in JIT code is judged by jitdump_names.py against the dump's loads
# (the newest load covering its address, stamped at or before it), read once through the
# perf map and once after the injection: named right, wrong, unnamed, side by side, and
# apart for samples in reused ranges. Passes when the injected reading names every JIT
# sample right and beats the perf map in reused ranges; perf annotate shows a JIT'd
# method's instructions.
#   jitdump.sh AGENT_SO SOURCE_DIR
. "$(dirname "$0")/lib.sh"
AGENT=${1:?usage: jitdump.sh AGENT_SO SOURCE_DIR}
SRC=${2:?usage: jitdump.sh AGENT_SO SOURCE_DIR}
require_cmd java javac perf
perf inject --help 2>&1 | grep -q -- '--jit' || skip "perf inject has no --jit"
WORK=$(mktemp -d /tmp/jitprov-jitdump.XXXXXX)
JAVA_PID=
trap 'rm -rf "$WORK"; [ -n "$JAVA_PID" ] && rm -f "/tmp/perf-$JAVA_PID.map"' EXIT

$PY "$SRC/tools/jvm/gen_workload.py" "$WORK/src" 50 400 || fail "generate the workload"
javac -d "$WORK/classes" "$WORK/src"/*.java || fail "javac the workload"
mkdir -p "$WORK/ready" "$WORK/dump"
# perf starts the JVM: it must record the agent's mapping of the dump (the marker).
# 8 s of churn, then 2 s hot; every:1 keeps the perf map as current as a perf map gets.
perf record -k 1 -F 1999 -o "$WORK/perf.data" -- java -XX:+PreserveFramePointer -XX:CompileThresholdScaling=0.05 \
  -agentpath:"$AGENT"=trigger=every:1,exit,perfmap=/tmp,jitdump="$WORK/dump",stats="$WORK/agent.json" \
  -cp "$WORK/classes" jitwork.JitWorkload "$WORK/classes" 8 2 0 "$WORK/ready" >"$WORK/java.out" 2>"$WORK/perf.err" ||
  { cat "$WORK/java.out" "$WORK/perf.err" >&2; fail "perf record java"; }
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
print("ok: dump: %d loads (%d MB, %d MB of code), 0 write errors; agent: %d loads, %d unloads" %
      (j["loads"], j["bytes"] >> 20, j["code_bytes"] >> 20, a["loads"], a["unloads"]))
PY

t0=$(date +%s)
perf inject --jit -i "$WORK/perf.data" -o "$WORK/perf.jit.data" 2>"$WORK/inject.err" ||
  { cat "$WORK/inject.err" >&2; fail "perf inject --jit"; }
pass "perf inject --jit: $(ls "$WORK/dump" | grep -c '^jitted-') ELF files in $(($(date +%s) - t0)) s"
perf script -i "$WORK/perf.data" -F time,ip,sym --ns -G >"$WORK/map.txt" 2>/dev/null || fail "perf script (perf map)"
perf script -i "$WORK/perf.jit.data" -F time,ip,sym --ns -G >"$WORK/inject.txt" 2>/dev/null ||
  fail "perf script (injected)"
$PY "$SRC/tests/integration/jitdump_names.py" "$DUMP" "$WORK/map.txt" "$WORK/inject.txt" ||
  fail "the injected jitdump does not name every JIT sample by its method at its time"
pass "jitdump names every JIT sample right, reused ranges included, where the perf map does not"

sym=$(perf report -i "$WORK/perf.jit.data" --stdio --no-children --sort sym 2>/dev/null |
  grep -o -m1 'jitwork\.Gen[0-9]*::m[0-9]*')
[ -n "$sym" ] || fail "perf report names no workload method"
perf annotate -i "$WORK/perf.jit.data" --stdio -s "$sym" 2>/dev/null >"$WORK/annotate.txt"
grep -qE '^\s+[0-9.]+ :\s+[0-9a-f]+:\s+(mov|push|sub|add|lea|cmp|test|jmp|call|ret)' "$WORK/annotate.txt" ||
  { head -20 "$WORK/annotate.txt" >&2; fail "perf annotate shows no instructions of $sym"; }
pass "perf annotate shows the instructions of $sym"
