#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jitprov's rundowns survive the churn that kills CoreCLR's own (docs/dotnet.md,
# "CoreCLR's rundown and collectible code"; tools/bench/dotnet-crash: CoreCLR's EventPipe
# rundown taken again and again under this churn killed the app in 13 of 15 runs on
# 9.0.23 and 10.0.12-10.0.15, the SDK's 10.0.12 in 2 of 3). The churn (tools/dotnet/churn:
# Reflection.Emit RunAndCollect assemblies made, called and dropped in a loop, CoreCLR
# unloading them all the time) runs 8 s under the .NET client with a jitprov rundown
# every second (trigger=every:1), into a real lttng session; 6 000 methods that stay
# (--steady) and the rundown paced (rate=20000) make each rundown last about 0.3 s, so
# that the churn's unloads land inside it:
#  - the app lives and exits 0, every assembly it made unloaded;
#  - at least 4 of jitprov's rundowns completed, and at least 5 % of the collectible
#    modules' unloads happened inside them (jitprov_runtime:module_unload between a
#    rundown_begin and its rundown_end);
#  - jitprov-verify passes the trace (G2, G3+, G4, counts, nothing lost); the client
#    mirrored the unloads and refused nothing.
# CHURN_TEST_FAULT (the test's own tests; each must make it fail): kill (the app killed
# mid-run), lossy (a rundown channel too small to keep up, not blocking: events lost,
# which jitprov-verify must say), norate (unpaced rundowns: too short for the churn's
# unloads to land inside them, so the test would show nothing).
#   dotnet_churn.sh PROFILER_SO VERIFY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
PROFILER=${1:?usage: dotnet_churn.sh PROFILER_SO VERIFY SOURCE_DIR}
VERIFY=${2:?usage: dotnet_churn.sh PROFILER_SO VERIFY SOURCE_DIR}
SRC=${3:?usage: dotnet_churn.sh PROFILER_SO VERIFY SOURCE_DIR}
FAULT=${CHURN_TEST_FAULT:-}
case $FAULT in "" | kill | lossy | norate) ;; *) fail "CHURN_TEST_FAULT=$FAULT: not kill, lossy or norate" ;; esac
require_lttng
require_cmd dotnet
enter_private_namespace "$@"
WORK=$(work_dir jitprov-churn)
dotnet_build_copy "$SRC/tools/dotnet/churn" "$WORK/churn" "$WORK/build.log" || fail "dotnet build the churn"

start_sessiond
channel=()
[ "$FAULT" = lossy ] && channel=(--subbuf-size=4096 --num-subbuf=2 --overwrite)
# The runtime events' channel (never blocking) with room for the churn's burst: about
# 20 000 module loads and unloads and 120 000 method loads in 8 s, which jitprov-verify
# wants whole (G2).
RUNTIME_CHANNEL_OPTS="--subbuf-size=4M --num-subbuf=8" setup_session churn "$WORK/trace" "${channel[@]}"
lttng start churn >/dev/null || fail "lttng start"
rate=rate=20000
[ "$FAULT" = norate ] && rate=rate=0
CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}' \
  CORECLR_PROFILER_PATH="$(realpath "$PROFILER")" \
  JITPROV_DOTNET="trigger=every:1,$rate,perfmap=off,stats=$WORK/client.json" \
  dotnet "$WORK/churn/out/CollectibleChurn.dll" --seconds 8 --methods 10 --steady 6000 --ready "$WORK/ready" >"$WORK/app.out" 2>&1 &
APP_PID=$!
track_pid "$APP_PID"
if [ "$FAULT" = kill ]; then
  for _ in $(seq 300); do [ -s "$WORK/ready" ] && break; sleep 0.1; done
  sleep 3
  kill -9 "$APP_PID"
fi
wait "$APP_PID"; rc=$?
lttng stop churn >/dev/null && lttng destroy churn >/dev/null || fail "lttng stop/destroy"
[ $rc -eq 0 ] || { cat "$WORK/app.out" >&2; fail "the churn's exit status $rc"; }
grep -q "jitprov-dotnet:" "$WORK/app.out" && { cat "$WORK/app.out" >&2; fail "the client complained"; }
made=$(sed -n 's/^CollectibleChurn: \([0-9]*\) assemblies made, \1 unloaded, .*/\1/p' "$WORK/app.out")
[ -n "$made" ] && [ "$made" -ge 100 ] || { cat "$WORK/app.out" >&2; fail "not every assembly made was unloaded"; }

"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
# An every:1 rundown in flight at lttng stop or at the app's exit is cut: accepted when
# that is all (stop_cut_only); the loaded machine's slower rundowns make it likelier.
[ $rc -eq 4 ] && stop_cut_only "$WORK/verify.json" && rc=0
[ $rc -eq 0 ] || { "$VERIFY" "$WORK/trace" | head -20 >&2; fail "jitprov-verify exit $rc"; }
PYTHONPATH="$SRC/tests/integration" $PY - "$WORK" "$APP_PID" "$made" <<'PY' || fail "jitprov's rundowns under the churn"
import json, sys
from bt2read import events
work, pid, made = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rundowns, unloads, begin = [], [], None
for name, f in events(work + "/trace", ["jitprov_"], times=True):
    if f.get("vpid") != pid:
        continue
    if name == "jitprov_rundown:rundown_begin":
        begin = f["_ns"]
    elif name == "jitprov_rundown:rundown_end" and begin is not None:
        rundowns.append((begin, f["_ns"], f["versions"], f["cut_short"]))
        begin = None
    elif name == "jitprov_runtime:module_unload":
        unloads.append(f["_ns"])
complete = [r for r in rundowns if r[3] == 0]
inside = sum(1 for t in unloads if any(b <= t <= e for b, e, _, _ in complete))
c = json.load(open(work + "/client.json"))
assert len(complete) >= 4, "%d of jitprov's rundowns completed (of %d)" % (len(complete), len(rundowns))
assert inside >= len(unloads) / 20, "%d of %d collectible modules unloaded inside jitprov's %d rundowns" % (
    inside, len(unloads), len(complete))
assert c["module_unloads"] >= made // 2 and len(unloads) >= made // 2, (c["module_unloads"], len(unloads), made)
assert c["not_mirrored"]["errors"] == 0 and c["not_mirrored"]["refused"] == 0, c["not_mirrored"]
ms = sorted((e - b) / 1e6 for b, e, _, _ in complete)
print("ok: the churn lived through %d of jitprov's rundowns (%d to %d versions, %.0f to %.0f ms) with %d collectible "
      "modules unloaded inside them (%.0f %% of %d); %d assemblies made and unloaded, %d module unloads mirrored, the "
      "trace verified" % (len(complete), min(r[2] for r in complete), max(r[2] for r in complete), ms[0], ms[-1],
                          inside, 100.0 * inside / len(unloads), len(unloads), made, c["module_unloads"]))
PY
rm -rf "$WORK"
