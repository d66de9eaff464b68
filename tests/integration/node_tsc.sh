#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real program from the npm registry under the Node.js client: tsc of TypeScript 5.6.3
# (JavaScript; TypeScript 7 is native code), installed once per build tree with npm into
# JITPROV_TEST_CACHE, type-checking a real project: TypeScript's own API declarations
# (typescript.d.ts, 11 k lines) against the es2020 and DOM libraries (--noEmit; tsc
# emits nothing for declaration files).
# Its rundowns (session, every:1, exit) go into a private lttng-sessiond and pass
# jitprov-verify; V8's own log (--log-code, --compact-on-every-full-gc so that the GC
# moves code), replayed to the end, is in the exit rundown: every Sparkplug/TurboFan
# object with the same address, size, name and kind, no stale record (v8log_check.py).
#   node_tsc.sh ADDON_DIR VERIFY_BINARY SOURCE_DIR [JITPROV_NODE extra options]
. "$(dirname "$0")/lib.sh"
USAGE="usage: node_tsc.sh ADDON_DIR VERIFY SOURCE_DIR [OPTIONS]"
ADDON=${1:?$USAGE}
VERIFY=${2:?$USAGE}
SRC=${3:?$USAGE}
EXTRA=${4:-}
TS_VERSION=5.6.3
require_lttng
require_cmd node npm
enter_private_namespace "$@"
WORK=$(work_dir jitprov-tsc)

# TypeScript, pinned, from the npm registry: once per build tree (one installer at a time).
install_typescript  # sets TSC

start_sessiond
RUNTIME_CHANNEL_OPTS="--subbuf-size=8M --num-subbuf=8" setup_session tsc "$WORK/trace"
lttng start tsc >/dev/null || fail "lttng start"
start=$(date +%s%N)
(
  cd "$WORK" || exit 1
  exec env JITPROV_NODE="trigger=session,every:1,exit,perfmap=off,stats=$WORK/client.json${EXTRA:+,$EXTRA}" \
    NODE_OPTIONS="--require=$ADDON/preload.js" node --compact-on-every-full-gc --log-code --logfile="$WORK/v8.log" \
    "$TSC" --noEmit --target es2020 --lib es2020,dom \
    "${TSC%/bin/tsc}/lib/typescript.d.ts"
) >"$WORK/tsc.out" 2>&1 &
NODE_PID=$!
track_pid "$NODE_PID"
node_end "$NODE_PID" "$WORK/tsc.out" "$WORK"
echo "tsc $TS_VERSION: $(( ($(date +%s%N) - start) / 1000000 )) ms under the client, with --log-code"
lttng stop tsc >/dev/null && lttng destroy tsc >/dev/null || fail "lttng stop/destroy"
node_check_trace "$WORK/trace" node-tsc "$WORK" 500 --program --min-moves 100
# The client's account of its own CPU time (own_cpu): every event it acted on, its start
# and its threads (the rundown thread, the publisher, lttng-ust's: a session was recording).
$PY - "$WORK/client.json" <<'PY' || fail "the client's own CPU account"
import json, sys
c = json.load(open(sys.argv[1]))
o = c["own_cpu"]
n = c["added"] + c["shared_js"] + c["bytecode"] + c["wasm"] + c["moves"]
assert o["timed"] and abs(o["callbacks"] - n) <= 16, "%d callbacks timed, %d acted on" % (o["callbacks"], n)
names = sorted({t["name"] for t in o["threads"]})
assert names == ["jitprov-publish", "jitprov-rundown", "lttng-ust"], names
p = c["publish"]  # the default: batches published by the thread, none left queued
assert p["mode"] == "batch" and p["batches"]["thread"] > 0 and p["queued_now"] == 0 and p["events"] >= n - c["bytecode"] - c["wasm"], p
assert o["start_ns"] > 0 and o["callbacks_wall_ns"] > 0 and o["threads_ns"] > 0, o
print("the client's own CPU %.1f ms (callbacks %.1f ms for %d, start %.1f ms, threads %.1f ms)" % (
    o["total_ns"] / 1e6, o["callbacks_wall_ns"] / 1e6, o["callbacks"], o["start_ns"] / 1e6, o["threads_ns"] / 1e6))
PY
pass "tsc's rundowns verified and identical to V8's own account of live code"
[ -n "${KEEP:-}" ] && echo "kept: $WORK" >&2 || rm -rf "$WORK"
