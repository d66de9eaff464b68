#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generic code over collectible types under the .NET client: List<PluginStruct> in a
# collectible AssemblyLoadContext is an exact instantiation that CoreCLR allocates, and
# JITs, in the context's loader allocator and frees with it, while its MethodLoadVerbose
# names System.Private.CoreLib's module; no event says that code died (the client's
# session has no EndEnumeration keyword). Filed under CoreLib, its bodies stayed live in
# the registry, in every rundown and perf map, after the context was gone.
# jitprov-collectible-generics makes N contexts in turn, each using List<PluginStruct>
# until it tiers up, unloads and collects them all, keeping List<KeptStruct> of the
# default context in use; then it waits. The judge is the program's own types: a rundown
# taken then (the perf map of trigger=every:1) names no PluginStruct code and does name
# KeptStruct code, and the client filed the collectible instantiations by their context.
#   dotnet_generics.sh PROFILER_SO SOURCE_DIR
. "$(dirname "$0")/lib.sh"
PROFILER=${1:?usage: dotnet_generics.sh PROFILER_SO SOURCE_DIR}
SRC=${2:?usage: dotnet_generics.sh PROFILER_SO SOURCE_DIR}
require_cmd dotnet
WORK=$(work_dir jitprov-dotnet-generics)
trap 'cleanup_pids; [ -z "${KEEP:-}" ] && rm -rf "$WORK"' EXIT
. "$SRC/tools/lib/dotnet.sh"
dotnet_build_copy "$SRC/tools/dotnet/generics" "$WORK/g" "$WORK/build.log" || fail "dotnet build jitprov-collectible-generics"
N=12
# start_app TRIGGERS TAG ARGS...: the program under the client (perf maps in WORK/TAG, stats
# WORK/TAG.json, output WORK/TAG.out), its stdin a FIFO on fd 3; returns once it is ready
# (APP: its pid).
start_app() {
  local triggers=$1 tag=$2
  shift 2
  mkdir -p "$WORK/$tag"
  rm -f "$WORK/ready" "$WORK/stdin"
  mkfifo "$WORK/stdin"
  CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}' \
    CORECLR_PROFILER_PATH="$(realpath "$PROFILER")" \
    JITPROV_DOTNET="trigger=$triggers,perfmap=$WORK/$tag,stats=$WORK/$tag.json" \
    "$WORK/g/out/jitprov-collectible-generics" "$@" <"$WORK/stdin" >"$WORK/$tag.out" 2>&1 &
  APP=$!
  track_pid "$APP"
  exec 3>"$WORK/stdin"
  for _ in $(seq 1200); do [ -f "$WORK/ready" ] && break; kill -0 "$APP" 2>/dev/null || break; sleep 0.05; done
  [ -f "$WORK/ready" ] || { cat "$WORK/$tag.out" >&2; fail "the program ($tag) did not get ready"; }
}
# end_app TAG: a line on its stdin; it exits 0.
end_app() {
  echo >&3
  exec 3>&-
  wait "$APP" || { cat "$WORK/$1.out" >&2; fail "jitprov-collectible-generics ($1): exit status"; }
}

start_app every:1,exit map "$N" "$WORK/ready"
sleep 2.5  # two rundowns after the last context went
cp "$WORK/map/perf-$APP.map" "$WORK/quiet.map" || fail "no perf map of pid $APP"
end_app map
grep -q "^collectible-generics: $N contexts made, 0 alive" "$WORK/map.out" || fail "$(cat "$WORK/map.out")"
stale=$(grep -c "PluginStruct" "$WORK/quiet.map")
kept=$(grep -c "KeptStruct" "$WORK/quiet.map")
filed=$($PY -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["collectible_generics"], c["not_mirrored"]["errors"], c["not_mirrored"]["refused"])' "$WORK/map.json")
read -r generics errors refused <<<"$filed"
echo "  a rundown after $N contexts unloaded: $stale PluginStruct bodies (the contexts'), $kept KeptStruct (the default context's); the client filed $generics instantiations by their context; $errors errors, $refused refused"
[ "$stale" -eq 0 ] || fail "$stale bodies of unloaded contexts' generic code still in the rundown, e.g. $(grep -m2 PluginStruct "$WORK/quiet.map")"
[ "$kept" -gt 0 ] || fail "no KeptStruct body in the rundown: $(grep -c . "$WORK/quiet.map") lines"
[ "$generics" -gt 0 ] && [ "$errors" -eq 0 ] && [ "$refused" -eq 0 ] || fail "client: $filed"
pass "generic code over collectible types: gone from the rundown with its context"

# The exit rundown holds a collectible context still loaded at exit: CoreCLR's shutdown
# walk (ProcessShutdown, before the profiler's Shutdown) reports every loaded module as
# unloaded, which the client applied before its exit rundown (before: no Plugin::Run in
# it). The program makes 2 contexts and drops them, then keeps a third to the end.
start_app exit map2 2 "$WORK/ready" keep
end_app map2
run=$(grep -c "Plugin::Run" "$WORK/map2/perf-$APP.map")
inst=$(grep -c "PluginStruct" "$WORK/map2/perf-$APP.map")
walk=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["shutdown_unloads"])' "$WORK/map2.json")
echo "  the exit rundown: $run Plugin::Run and $inst PluginStruct bodies of the context loaded at exit; $walk unloads of CoreCLR's shutdown walk not applied"
[ "$run" -gt 0 ] && [ "$inst" -gt 0 ] && [ "$walk" -gt 0 ] ||
  fail "the exit rundown lacks the code of a context loaded at exit: $(grep -c . "$WORK/map2/perf-$APP.map") lines"
pass "a collectible context loaded at exit: its code in the exit rundown"
