#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The JVM agent on Java programs nobody here wrote (issue 25, item 4), in one real lttng
# session (private lttng-sessiond), one after the other:
#  - javac: the JDK's own compiler (OpenJDK 17) compiling the java.util sources of
#    Debian's openjdk-17-source (java.base/java/util/*.java, patched into java.base);
#  - H2: the H2 database of Debian's libh2-java under a JDBC loop (tools/jvm/H2Loop.java,
#    in memory, inserts, selects, updates and deletes) for H2_SECONDS (default 10).
# Each runs with the agent (rundowns at the session's start and every second, the perf
# map) and then idles at a quiet moment (javac: a plugin, tools/jvm/QuietAtEnd.java,
# waits after the compilation; H2Loop: after its loop), where two `jcmd Compiler.codelist`
# listings around a rundown are taken. Checks: the agent counted no error; rundowns ran
# while each program was busy; jitprov-verify passes on the trace (both processes); every
# nmethod listed in use in both listings is in the rundown between them with the same
# address, size, level and name (tests/integration/codelist_check.py, "100.0 % match").
#   jvm_apps.sh AGENT_SO VERIFY_BINARY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
AGENT=${1:?usage: jvm_apps.sh AGENT_SO VERIFY SOURCE_DIR}
VERIFY=${2:?usage: jvm_apps.sh AGENT_SO VERIFY SOURCE_DIR}
SRC=${3:?usage: jvm_apps.sh AGENT_SO VERIFY SOURCE_DIR}
SRC_ZIP=/usr/lib/jvm/openjdk-17/lib/src.zip  # Debian's openjdk-17-source
H2_JAR=/usr/share/java/h2.jar                # Debian's libh2-java
H2_SECONDS=${H2_SECONDS:-10}
require_lttng
require_cmd java javac jcmd unzip
[ -f "$SRC_ZIP" ] || skip "$SRC_ZIP missing (Debian openjdk-17-source)"
[ -f "$H2_JAR" ] || skip "$H2_JAR missing (Debian libh2-java)"
enter_private_namespace "$@"
T0=$(date +%s)
WORK=$(work_dir jitprov-jvm-apps)
trap 'cleanup_pids; rm -rf "$WORK"' EXIT

# --- the programs ---------------------------------------------------------------------
javac -d "$WORK/apps" "$SRC/tools/jvm/H2Loop.java" "$SRC/tools/jvm/QuietAtEnd.java" || fail "javac tools/jvm/*.java"
mkdir -p "$WORK/apps/META-INF/services"
echo jitapps.QuietAtEnd >"$WORK/apps/META-INF/services/com.sun.source.util.Plugin"
mkdir -p "$WORK/jdk" && (cd "$WORK/jdk" && unzip -q "$SRC_ZIP" 'java.base/java/util/*.java') ||
  fail "unzip java.base/java/util from $SRC_ZIP"
# java/util itself; javac finds what they use in java/util/* (concurrent, function, ...)
# through the patch module's source path and compiles that too.
find "$WORK/jdk/java.base/java/util" -maxdepth 1 -name '*.java' | sort >"$WORK/javac-files"
nfiles=$(wc -l <"$WORK/javac-files")
[ "$nfiles" -gt 100 ] || fail "only $nfiles java/util sources in $SRC_ZIP"

start_sessiond
RUNTIME_CHANNEL_OPTS="--subbuf-size=4M --num-subbuf=8" setup_session apps "$WORK/trace"
lttng start apps >/dev/null || fail "lttng start"

# run_app LABEL COMMAND...: runs COMMAND (a JVM under the agent, with $WORK/LABEL/ready as
# its quiet-moment directory) in the background; at its quiet moment takes the two code
# listings around the rundowns of a 2.5 s window (every:1), then lets it finish.
run_app() {
  local label=$1 d=$WORK/$1; shift
  "$@" >"$d/out" 2>&1 &
  local pid=$!
  track_pid "$pid"
  echo "$pid" >"$d/pid"
  for _ in $(seq 1200); do
    [ -f "$d/ready/quiet" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -f "$d/ready/quiet" ] || { tail -20 "$d/out" >&2; fail "$label did not reach its quiet moment"; }
  date -r "$d/ready/quiet" +%s%N >"$d/busy"
  sleep 1  # compiles queued before the quiet moment finish
  jcmd "$pid" Compiler.codelist >"$d/codelist1.txt" 2>&1 ||
    { head -n 5 "$d/codelist1.txt" "$d/out" >&2; fail "$label: jcmd Compiler.codelist"; }
  date +%s%N >"$d/window"  # the rundown compared begins after the first listing ...
  sleep 2.5                # at least two every:1 rundowns
  date +%s%N >>"$d/window" # ... and ends before the second
  jcmd "$pid" Compiler.codelist >"$d/codelist2.txt" 2>&1 ||
    { head -n 5 "$d/codelist2.txt" "$d/out" >&2; fail "$label: jcmd Compiler.codelist"; }
  touch "$d/ready/stop"
  local rc=0
  wait "$pid" || rc=$?
  [ $rc -eq 0 ] || { tail -20 "$d/out" >&2; fail "$label: exit status $rc"; }
}
opts() { echo "trigger=session,every:1,perfmap=$WORK/$1,stats=$WORK/$1/agent.json"; }
mkdir -p "$WORK"/{javac,h2}/ready "$WORK/javac/classes"

t=$(date +%s)
run_app javac javac -J-agentpath:"$AGENT=$(opts javac)" \
  -processorpath "$WORK/apps" -Xplugin:"QuietAtEnd $WORK/javac/ready" \
  --patch-module java.base="$WORK/jdk/java.base" -XDignore.symbol.file -nowarn \
  -d "$WORK/javac/classes" @"$WORK/javac-files"
classes=$(find "$WORK/javac/classes" -name '*.class' | wc -l)
[ "$classes" -gt 1000 ] || { tail -20 "$WORK/javac/out" >&2; fail "javac wrote $classes class files"; }
pass "javac under the agent: $nfiles java/util sources compiled to $classes class files ($(($(date +%s) - t)) s with the quiet moment)"

t=$(date +%s)
run_app h2 java -agentpath:"$AGENT=$(opts h2)" -cp "$WORK/apps:$H2_JAR" \
  jitapps.H2Loop seconds "$H2_SECONDS" "$WORK/h2/ready"
grep -q '^h2loop: [1-9][0-9]* transactions' "$WORK/h2/out" || { cat "$WORK/h2/out" >&2; fail "the H2 loop"; }
pass "H2 under the agent: $(grep -o '^h2loop: [0-9]* transactions' "$WORK/h2/out" | cut -d' ' -f2) JDBC transactions in $H2_SECONDS s ($(($(date +%s) - t)) s with the quiet moment)"
lttng stop apps >/dev/null && lttng destroy apps >/dev/null || fail "lttng stop/destroy"

"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
# Exit 4 (not everything checked) is right only when a JVM exited during a periodic
# rundown: the agent stops it at VM death, and its rundown_end says cut short (G3+ then
# unknowable). Any other reason, or a violation, fails.
if [ $rc -eq 4 ]; then
  $PY - "$WORK/verify.json" <<'PY' || rc=41
import json, sys
v = json.load(open(sys.argv[1]))
for s in v["sessions"]:
    for p in s["processes"]:
        rs = p["rundowns"]
        last = max(r["rundown_id"] for r in rs)
        for r in rs:
            if r["cut_short"]:
                assert r["rundown_id"] == last and not r["violations"], r
                assert r["G2"]["status"] != "violated" and r["G4"]["status"] != "violated", r
            else:
                assert r["G2"]["status"] == r["G3"]["status"] == r["G4"]["status"] == "pass", r
print("jitprov-verify exit 4: the only rundowns not checked whole were cut short by their JVM's exit")
PY
  [ $rc -eq 4 ] && rc=0
fi
[ $rc -eq 0 ] || { "$VERIFY" "$WORK/trace" | grep -E -m 10 'VIOLATION|^not checked|lost|^jitprov-verify' >&2; fail "jitprov-verify exit $rc"; }
$PY - "$WORK/verify.json" "$(cat "$WORK/javac/pid")" "$(cat "$WORK/h2/pid")" <<'PY' || fail "jitprov-verify did not check both JVMs"
import json, sys
v = json.load(open(sys.argv[1]))
procs = {p["vpid"]: p for s in v["sessions"] for p in s["processes"]}
out = []
for label, pid in zip(("javac", "H2"), sys.argv[2:]):
    p = procs.get(int(pid))
    assert p and len(p["rundowns"]) >= 3, "%s (pid %s): %s rundowns verified" % (label, pid, p and len(p["rundowns"]))
    out.append("%s %d rundowns (%d method records in all)" % (
        label, len(p["rundowns"]), sum(r["method_records"] for r in p["rundowns"])))
print("ok: jitprov-verify: %s; %s" % (v["verdict"], ", ".join(out)))
PY
# The agent's account of its own CPU time (own_cpu): every callback in it, its start and
# its threads (the rundown thread, the publisher, lttng-ust's: a session was recording).
for app in javac h2; do
  $PY - "$WORK/$app/agent.json" "$app" <<'PY' || fail "$app: the agent's own CPU account"
import json, sys
a = json.load(open(sys.argv[1]))
o = a["own_cpu"]
n = a["loads"] + a["unloads"] + a["stubs"]
# Callbacks may end while the stats are written at VM death (the compilers run on).
assert o["timed"] and abs(o["callbacks"] - n) <= 16, "%d callbacks timed, %d made" % (o["callbacks"], n)
names = sorted({t["name"] for t in o["threads"]})
assert names == ["jitprov-publish", "jitprov-rundown", "lttng-ust"], names
assert o["start_ns"] > 0 and o["callbacks_wall_ns"] > 0 and o["threads_ns"] > 0, o
print("%s: the agent's own CPU %.1f ms (callbacks %.1f ms for %d, start %.1f ms, threads %.1f ms)" % (
    sys.argv[2], o["total_ns"] / 1e6, o["callbacks_wall_ns"] / 1e6, o["callbacks"], o["start_ns"] / 1e6,
    o["threads_ns"] / 1e6))
PY
done
for app in javac h2; do
  PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/codelist_check.py" "$WORK/trace" "$app" "$WORK/$app" 1000 ||
    fail "$app: the rundown differs from jcmd Compiler.codelist"
done
pass "javac and H2: rundowns verified and identical to HotSpot's own code lists ($(($(date +%s) - T0)) s)"
