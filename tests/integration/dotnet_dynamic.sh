#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CoreCLR's dynamic methods under the .NET client (the dotnet-jitdump flake, issue 40):
# CoreCLR destroys a collected dynamic method (MethodUnloadVerbose) and gives its
# MethodID to a later one; the client once kept the destroyed method's jitprov method
# under that MethodID, so the later method's body was published, and named in the
# jitdump, the trace and perf, as the destroyed one (dyn394's code named dyn9).
# jitprov-dynamic-methods makes dyn0 .. dyn<N-1>, each JIT'd once and dropped, a full
# collection after every 50 (here CoreCLR made 2 000 of them from 51 MethodIDs). The
# judge is the program's own names, nothing of jitprov's: the jitdump must hold exactly
# one body of each dynI, and the client must have unloaded the destroyed ones.
# RUNS=K (default 3) repeats the run; the figure of 200 runs is in docs/dotnet.md.
#   dotnet_dynamic.sh PROFILER_SO SOURCE_DIR
. "$(dirname "$0")/lib.sh"
PROFILER=${1:?usage: dotnet_dynamic.sh PROFILER_SO SOURCE_DIR}
SRC=${2:?usage: dotnet_dynamic.sh PROFILER_SO SOURCE_DIR}
require_cmd dotnet
WORK=$(work_dir jitprov-dotnet-dynamic)
trap 'cleanup_pids; [ -z "${KEEP:-}" ] && rm -rf "$WORK"' EXIT
. "$SRC/tools/lib/dotnet.sh"
dotnet_build_copy "$SRC/tools/dotnet/dynamic" "$WORK/dm" "$WORK/build.log" || fail "dotnet build jitprov-dynamic-methods"
N=2000
runs=${RUNS:-3}
for run in $(seq 1 "$runs"); do
  rm -rf "$WORK/dump" && mkdir -p "$WORK/dump"
  CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}' \
    CORECLR_PROFILER_PATH="$(realpath "$PROFILER")" JITPROV_DOTNET="jitdump=$WORK/dump,stats=$WORK/client.json" \
    "$WORK/dm/out/jitprov-dynamic-methods" "$N" >"$WORK/app.out" 2>&1 ||
    { cat "$WORK/app.out" >&2; fail "run $run: jitprov-dynamic-methods exit status"; }
  DUMP=$(ls "$WORK"/dump/jit-*.dump 2>/dev/null | head -1)
  [ -n "$DUMP" ] || fail "run $run: no jit-PID.dump"
  PYTHONPATH="$SRC/tests/integration" $PY - "$DUMP" "$WORK/client.json" "$N" "$run" <<'PY' || fail "run $run: the jitdump does not name each dynamic method's body by its own name"
import collections, json, re, sys
from jitdump_names import read_dump_loads
dump, stats, n, run = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
names = collections.Counter(name for _, _, _, name in read_dump_loads(dump) if re.fullmatch(r"dynamicClass::dyn\d+", name))
want = collections.Counter("dynamicClass::dyn%d" % i for i in range(n))
c = json.load(open(stats))
missing, extra = want - names, names - want
print("run %s: %d dynamic method bodies in the dump, %d names missing, %d extra (e.g. %s); the client unloaded %d "
      "dynamic methods" % (run, sum(names.values()), sum(missing.values()), sum(extra.values()),
                           sorted(extra)[:3], c["method_unloads"]))
assert not missing and not extra, (sorted(missing)[:5], sorted(extra.items())[:5])
# Most were destroyed (collected every 50); some may still live at exit.
assert c["method_unloads"] >= n // 2 and c["not_mirrored"]["errors"] == 0, c
PY
done
pass "$runs runs: each of $N dynamic methods named by its own name, though CoreCLR reused their MethodIDs"
