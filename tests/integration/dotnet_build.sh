#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dotnet build` under the .NET client: the SDK's own CLI, MSBuild and Roslyn (the C#
# compiler, in a process of its own: UseSharedCompilation=false), code nobody here
# wrote, in a real lttng session. Every .NET process of the build loads the client from
# the environment alone and is traced; each writes its stats (loads mirrored, nothing
# refused or lost) and has its rundowns in the trace; jitprov-verify checks them all
# (G2 against every method_load, G3+, G4, nothing lost) and g2check.py reads them again.
#   dotnet_build.sh PROFILER_SO VERIFY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
PROFILER=${1:?usage: dotnet_build.sh PROFILER_SO VERIFY SOURCE_DIR}
VERIFY=${2:?usage: dotnet_build.sh PROFILER_SO VERIFY SOURCE_DIR}
SRC=${3:?usage: dotnet_build.sh PROFILER_SO VERIFY SOURCE_DIR}
require_lttng
require_cmd dotnet
enter_private_namespace "$@"
WORK=$(work_dir jitprov-dotnet)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

# A small console project: a few classes for Roslyn to compile.
mkdir -p "$WORK/proj"
cat >"$WORK/proj/hello.csproj" <<'EOF'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
    <Nullable>enable</Nullable>
  </PropertyGroup>
</Project>
EOF
{
  echo 'using System; using System.Linq; using System.Collections.Generic;'
  for i in $(seq 40); do
    echo "record Item$i(int Id, string Name) { public int Twice() => Id * 2 + Name.Length; }"
  done
  echo 'static class Program { static int Main() {'
  echo '  var xs = new List<int>();'
  for i in $(seq 40); do echo "  xs.Add(new Item$i($i, \"n$i\").Twice());"; done
  echo '  Console.WriteLine(xs.Sum()); return 0; } }'
} >"$WORK/proj/Program.cs"
# The restore, untraced (nothing to fetch: no package references).
dotnet restore "$WORK/proj" >"$WORK/restore.log" 2>&1 || { tail -20 "$WORK/restore.log" >&2; fail "dotnet restore"; }

start_sessiond
setup_session build "$WORK/trace"
lttng start build >/dev/null || fail "lttng start"
# No build servers (-nodeReuse:false, UseSharedCompilation=false): every process the
# build starts ends with it, and so does its trace.
CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}' \
  CORECLR_PROFILER_PATH="$(realpath "$PROFILER")" \
  JITPROV_DOTNET="trigger=session,exit,perfmap=off,stats=$WORK/client-%p.json" \
  dotnet build --no-restore -nodeReuse:false -p:UseSharedCompilation=false "$WORK/proj" >"$WORK/build.out" 2>&1 ||
  { tail -30 "$WORK/build.out" >&2; fail "dotnet build under the client"; }
lttng stop build >/dev/null && lttng destroy build >/dev/null || fail "lttng stop/destroy"
[ -f "$WORK/proj/bin/Debug/net10.0/hello.dll" ] || fail "no hello.dll: $(tail -5 "$WORK/build.out")"
out=$(dotnet "$WORK/proj/bin/Debug/net10.0/hello.dll") && [ "$out" -gt 0 ] || fail "the built program printed '$out'"
grep -q "jitprov-dotnet:" "$WORK/build.out" && { grep "jitprov-dotnet:" "$WORK/build.out" >&2; fail "the client complained"; }

"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
[ $rc -eq 0 ] || { "$VERIFY" "$WORK/trace" | head -40 >&2; fail "jitprov-verify exit $rc"; }
PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/g2check.py" --min-records 1000 "$WORK/trace" ||
  fail "G2 by the second reader (g2check.py)"
$PY - "$WORK" <<'PY' || fail "per-process checks"
import glob, json, os, sys
w = sys.argv[1]
stats = {}
for f in glob.glob(w + "/client-*.json"):
    s = json.load(open(f))
    stats[s["pid"]] = s
assert len(stats) >= 2, "%d .NET processes wrote stats, expected the CLI and the compiler" % len(stats)
for pid, s in stats.items():
    nm = s["not_mirrored"]
    assert s["loads"] > 0, (pid, s)
    assert nm["errors"] == nm["refused"] == nm["bad_payloads"] == 0, (pid, nm)
    assert s["rundowns"] >= 1, (pid, s["rundowns"])
v = json.load(open(w + "/verify.json"))
procs = {p["vpid"]: p for sess in v["sessions"] for p in sess["processes"]}
missing = sorted(set(stats) - set(procs))
assert not missing, "processes with stats but nothing in the trace: %s" % missing
records = 0
for pid in stats:
    rs = procs[pid]["rundowns"]
    assert rs, "pid %d: no rundown in the trace" % pid
    for r in rs:
        assert r["G2"]["status"] == r["G3"]["status"] == r["G4"]["status"] == "pass", (pid, r)
        records += r["method_records"]
print("dotnet build: %d .NET processes traced (%s), %d loads mirrored, %d rundown records verified; "
      "not mirrored: %d precompiled (ReadyToRun) methods" % (
          len(stats), ", ".join("%d: %d loads" % (p, s["loads"]) for p, s in sorted(stats.items())),
          sum(s["loads"] for s in stats.values()), records,
          sum(s["not_mirrored"]["r2r_methods"] for s in stats.values())))
PY
pass "dotnet build (MSBuild, Roslyn) under the client: every process traced and verified"
rm -rf "$WORK"
