#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf names V8's JIT samples through the Node.js client's jitdump (issue 39, item 4):
# perf record -k 1 (CLOCK_MONOTONIC, the jitdump's clock) runs the real program of the
# node-tsc test (tsc of TypeScript 5.6.3, from the test cache that test fills with npm)
# under the client with jitdump=DIR, with --compact-on-every-full-gc so that V8's GC
# moves code (the client writes each move as a new load at the new address) and
# --log-code for V8's own account; perf inject --jit merges the dump. The judge,
# node_jitdump_names.py, takes the samples in V8's JIT code from perf's own reading
# (anonymous executable memory of node, nothing of jitprov's), and asks that at least
# 90 % of them, and 90 % of those at addresses V8 moved code to, land in a jitted-*.so
# with a name, and that the names be V8's own for that address.
# JITDUMP_TEST_FAULT=nomoves (a test of the test): the dump's loads of code objects
# already loaded elsewhere (the client's moves) are dropped before the injection
# (jitdump_fault.py), and the judge must fail; node_jitdump.sh ... jitdump=off likewise.
#   node_jitdump.sh ADDON_DIR SOURCE_DIR [JITPROV_NODE extra options]
. "$(dirname "$0")/lib.sh"
USAGE="usage: node_jitdump.sh ADDON_DIR SOURCE_DIR [OPTIONS]"
ADDON=$(realpath "${1:?$USAGE}")
SRC=$(realpath "${2:?$USAGE}")
EXTRA=${3:-}
TS_VERSION=5.6.3
require_cmd node npm perf
perf inject --help 2>&1 | grep -- '--jit' >/dev/null || skip "perf inject has no --jit"
WORK=$(work_dir jitprov-node-jitdump)
# perf inject --jit writes one ELF file per load into the dump's directory and perf
# copies each into its build-id cache, ~/.debug unless told (jitdump.sh): the run's own.
perf() { command perf --buildid-dir "$WORK/buildid" "$@"; }
trap 'cleanup_pids; [ -z "${KEEP:-}" ] && rm -rf "$WORK"' EXIT

# TypeScript, pinned, as node_tsc.sh installs it (once per build tree).
install_typescript  # sets TSC

mkdir -p "$WORK/dump"
# perf starts node: it must see the client's mapping of the dump (the marker perf
# inject looks for). trigger=exit: the client's rundown at exit only (the dump is
# written by the publications themselves, as code is added and moved).
start=$(date +%s%N)
(
  cd "$WORK" || exit 1
  exec perf record -k 1 -F 4999 -o "$WORK/perf.data" -- env \
    JITPROV_NODE="trigger=exit,perfmap=off,jitdump=$WORK/dump,stats=$WORK/client.json${EXTRA:+,$EXTRA}" \
    NODE_OPTIONS="--require=$ADDON/preload.js" node --compact-on-every-full-gc --log-code --logfile="$WORK/v8.log" \
    "$TSC" --noEmit --target es2020 --lib es2020,dom "${TSC%/bin/tsc}/lib/typescript.d.ts"
) >"$WORK/tsc.out" 2>"$WORK/perf.err" &
PERF_PID=$!
track_pid "$PERF_PID"
wait "$PERF_PID"; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/tsc.out" "$WORK/perf.err" >&2; fail "perf record tsc: exit status $rc"; }
echo "tsc $TS_VERSION under perf record and the client: $(( ($(date +%s%N) - start) / 1000000 )) ms"
LOG=$(ls "$WORK"/isolate-*-v8.log 2>/dev/null | head -1)
[ -n "$LOG" ] || fail "no V8 log in $WORK"
NODE_PID=$(basename "$LOG" -v8.log); NODE_PID=${NODE_PID##*-}
DUMP=$WORK/dump/jit-$NODE_PID.dump
if [ -f "$DUMP" ]; then
  $PY - "$WORK/client.json" <<'PY' || fail "the client's jitdump counters"
import json, sys
c = json.load(open(sys.argv[1]))
j = c["jitdump"]
assert j["write_errors"] == 0 and j["dropped"] == 0 and j["unreadable"] == 0, j
print("ok: dump: %d loads (%d at the exit rundown), %d KB of code, 0 write errors; client: %d code objects "
      "added, %d moves" % (j["loads"] + j["rundown_loads"], j["rundown_loads"], j["code_bytes"] >> 10, c["added"],
                           c["moves"]))
PY
  if [ -n "${JITDUMP_TEST_FAULT:-}" ]; then
    $PY "$SRC/tests/integration/jitdump_fault.py" "$DUMP" "$JITDUMP_TEST_FAULT" || fail "jitdump_fault.py"
  fi
else
  echo "no jit-$NODE_PID.dump (the client's jitdump is off?): perf inject has nothing to name with"
fi
t0=$(date +%s)
perf inject --jit -i "$WORK/perf.data" -o "$WORK/perf.jit.data" 2>"$WORK/inject.err" ||
  { cat "$WORK/inject.err" >&2; fail "perf inject --jit"; }
echo "perf inject --jit: $(ls "$WORK/dump" | grep -c '^jitted-') ELF files in $(($(date +%s) - t0)) s"
# The two readings at once (perf script is single-threaded; the machine has two cores).
perf script -i "$WORK/perf.data" -F pid,time,ip,sym,dso --ns -G >"$WORK/raw.txt" 2>/dev/null &
raw_pid=$!
perf script -i "$WORK/perf.jit.data" -F pid,time,ip,sym,dso --ns -G >"$WORK/inject.txt" 2>/dev/null ||
  fail "perf script (injected)"
wait "$raw_pid" || fail "perf script (raw)"
[ ! -e "$HOME/.debug$WORK" ] || fail "perf copied this run's files into its cache in $HOME/.debug"
$PY "$SRC/tests/integration/node_jitdump_names.py" "$LOG" "$WORK/raw.txt" "$WORK/inject.txt" "$NODE_PID" 0.90 500 ||
  fail "perf inject --jit names less than 90 % of tsc's samples in V8's JIT code"
pass "perf inject --jit of the client's jitdump names >= 90 % of tsc's JIT samples, through code moves"
