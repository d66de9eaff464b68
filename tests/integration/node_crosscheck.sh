#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Node.js client on a real node (V8 11.3), checked against V8's own code log:
#  - bad JITPROV_NODE options cost one line and the program runs on, untraced;
#  - the generated workload (tools/node/workload: thousands of functions tiered up,
#    `new Function`, `vm.Script`, deoptimizations, two worker threads, one ending early,
#    allocation with code space compaction on every full GC so that the GC moves code)
#    runs under the client, whose rundowns (session, every:1) go into a real lttng
#    session (private lttng-sessiond) and pass jitprov-verify;
#  - with --log-code, V8's own account replayed to the quiet moment (an object dead
#    once a later one or a move target overlaps it) is in the last rundown of that
#    moment: every Sparkplug/TurboFan object with the same address, size, name and
#    kind, and no stale record (v8log_check.py).
#  - `jitprov record -- node app.js` records a program with a worker thread: exit 0, a
#    verified trace, V8's code in its summary.
#   node_crosscheck.sh ADDON_DIR VERIFY_BINARY SOURCE_DIR JITPROV [JITPROV_NODE extra options]
# ADDON_DIR holds jitprov_node.node and preload.js. The extra options are for showing
# the check fails (infer=off: no death inference).
. "$(dirname "$0")/lib.sh"
USAGE="usage: node_crosscheck.sh ADDON_DIR VERIFY SOURCE_DIR JITPROV [OPTIONS]"
ADDON=${1:?$USAGE}
VERIFY=${2:?$USAGE}
SRC=${3:?$USAGE}
JITPROV=${4:?$USAGE}
EXTRA=${5:-}
require_lttng
require_cmd node
enter_private_namespace "$@"
WORK=$(work_dir jitprov-node)
PRELOAD="--require=$ADDON/preload.js"

# --- options -------------------------------------------------------------------------
out=$(JITPROV_NODE=bogus NODE_OPTIONS=$PRELOAD node -e 'console.log("ran")' 2>&1)
[ "$(printf '%s\n' "$out" | grep -c '^jitprov-node:')" -eq 1 ] &&
  printf '%s\n' "$out" | grep -x "jitprov-node: unknown option 'bogus' (JITPROV_NODE=help lists the options); pid [0-9]* runs untraced" >/dev/null &&
  printf '%s\n' "$out" | grep -x ran >/dev/null || fail "a bad option: $out"
out=$(JITPROV_NODE=trigger=session,signal NODE_OPTIONS=$PRELOAD node -e 'console.log("ran")' 2>&1)
printf '%s\n' "$out" | grep "node owns SIGUSR1" >/dev/null && printf '%s\n' "$out" | grep -x ran >/dev/null || fail "trigger=signal: $out"
out=$(JITPROV_NODE=help NODE_OPTIONS=$PRELOAD node -e 'console.log("ran")' 2>&1)
printf '%s\n' "$out" | grep "perfmap=DIR|off" >/dev/null && printf '%s\n' "$out" | grep -x ran >/dev/null || fail "help: $out"
pass "bad options cost one line and the program runs untraced; help lists the options"

# --- a script's name that is not UTF-8 -------------------------------------------------
# V8 writes a lone surrogate of a vm.Script's filename as bytes that are not UTF-8: the
# module is registered all the same (U+FFFD), its code published, no error counted.
mkdir -p "$WORK/lone/pm"
cat >"$WORK/lone/app.js" <<'EOF2'
const vm = require('vm');
const s = new vm.Script('function hotLone(n) { let t = 0; for (let i = 0; i < n; i++) t += i; return t }\n' +
  'let r = 0; for (let i = 0; i < 3000; i++) r += hotLone(100); r', { filename: '\uD800lone.js' });
console.log(s.runInThisContext() > 0 ? 'ran' : 'no');
EOF2
out=$(JITPROV_NODE="perfmap=$WORK/lone/pm,stats=$WORK/lone/stats.json" NODE_OPTIONS=$PRELOAD node --always-sparkplug "$WORK/lone/app.js" 2>&1)
[ "$out" = ran ] && grep -q '"errors": 0,' "$WORK/lone/stats.json" &&
  LC_ALL=C grep -aq $'\^hotLone \xef\xbf\xbd.*lone\.js:1:' "$WORK/lone/pm"/perf-*.map ||
  fail "a script named by a lone surrogate: $out; $(grep -a '"errors"\|first_error' "$WORK/lone/stats.json"); $(grep -a hotLone "$WORK/lone/pm"/perf-*.map)"
pass "a script named by a lone surrogate: its module registered (U+FFFD), its code published, no error"

# --- the client in a worker alone ---------------------------------------------------------
# Loaded by a worker's execArgv, not by the main thread: the worker's exit retires its
# code and ends nothing else (the client ends with the process, not with its first isolate).
cat >"$WORK/lone/worker.js" <<'EOF2'
const { Worker } = require('worker_threads');
const w = new Worker(`
  function hot(n) { let t = 0; for (let i = 0; i < n; i++) t += i * 2; return t }
  let r = 0; for (let i = 0; i < 5000; i++) r += hot(200);
  require('worker_threads').parentPort.postMessage(r);`, { eval: true, execArgv: ['--require', process.argv[2]] });
w.on('message', () => {});
w.on('exit', () => setTimeout(() => console.log('ran'), 200));
EOF2
out=$(JITPROV_NODE="perfmap=off,stats=$WORK/lone/worker.json" node --always-sparkplug "$WORK/lone/worker.js" "$ADDON/preload.js" 2>&1)
[ "$out" = ran ] && grep -q '"errors": 0,' "$WORK/lone/worker.json" && grep -q '"isolates_gone": 1,' "$WORK/lone/worker.json" &&
  grep -qE '"retired_isolate": [1-9]' "$WORK/lone/worker.json" ||
  fail "the client in a worker alone: $out; $(grep -aE 'isolates|retired_isolate|errors' "$WORK/lone/worker.json")"
pass "the client in a worker alone: its exit retired its code ($(grep -oE '"retired_isolate": [0-9]+' "$WORK/lone/worker.json")), the client went on"

# --- jitprov record -- node (its own private lttng-sessiond: none runs yet) -----------
cat >"$WORK/app.js" <<'JS'
const { Worker, isMainThread } = require('worker_threads');
function hot(a) { let s = 0; for (let i = 0; i < a; i++) s += i * a; return s; }
let r = 0; for (let i = 0; i < 300000; i++) r += hot(i % 100);
if (isMainThread) new Worker(__filename).on('exit', () => console.log('done', r));
JS
"$JITPROV" record -o "$WORK/rec" -- node "$WORK/app.js" >"$WORK/rec.out" 2>&1 || { cat "$WORK/rec.out" >&2; fail "jitprov record -- node: exit $?"; }
$PY - "$WORK/rec/summary.json" <<'PYCHECK' || { cat "$WORK/rec.out" >&2; fail "jitprov record -- node: its summary"; }
import json, sys
s = json.load(open(sys.argv[1]))
v8 = s.get("code_bodies", {}).get("V8", {})
ok = (s["runtime"] == "node" and s["verdict"].startswith("verified: ") and s["exit_status"] == 0
      and v8.get("by_tier", {}).get("tier0", 0) > 0 and v8.get("by_tier", {}).get("tier1", 0) > 0)
print("record summary:", s["verdict"], json.dumps(v8))
sys.exit(0 if ok else 1)
PYCHECK
grep -q '^done [0-9]' "$WORK/rec.out" || { cat "$WORK/rec.out" >&2; fail "jitprov record -- node: the program's output"; }
pass "jitprov record -- node: verified, V8's code in the summary"

# --- the workload under the client, with V8's own log --------------------------------
start_sessiond
RUNTIME_CHANNEL_OPTS="--subbuf-size=8M --num-subbuf=8" setup_session node "$WORK/trace"
lttng start node >/dev/null || fail "lttng start"
mkdir -p "$WORK/d"
(
  cd "$WORK" || exit 1
  # publish=60000/0 (a minute, no batch size): V8's events reach the registry only
  # through the rundowns' prepare (and the census), so the comparison holds only if each
  # rundown publishes the queue first (node-tsc runs the default, 250 ms or 1 024 events).
  exec env JITPROV_NODE="trigger=session,every:1,perfmap=off,publish=60000/0,stats=$WORK/client.json${EXTRA:+,$EXTRA}" \
    NODE_OPTIONS="$PRELOAD" node --compact-on-every-full-gc --log-code --logfile="$WORK/v8.log" \
    "$SRC/tools/node/workload/workload.js" "$WORK/d" 20 150 12
) >"$WORK/node.out" 2>&1 &
NODE_PID=$!
track_pid "$NODE_PID"
node_quiet_window "$WORK/d" "$NODE_PID" "$WORK/node.out" "$WORK/window"
# The session ends before the program does (a rundown cut short by its exit is not
# complete: jitprov-verify would say so).
lttng stop node >/dev/null && lttng destroy node >/dev/null || fail "lttng stop/destroy"
touch "$WORK/d/stop"
node_end "$NODE_PID" "$WORK/node.out" "$WORK"
node_check_trace "$WORK/trace" node-crosscheck "$WORK" 1000 --min-moves 1000 --min-reused 100
pass "node rundowns verified and identical to V8's own account of live code"
# A method whose last code object died is unloaded: the registry holds no more methods
# than it holds live code (new Function and vm.Script make methods by the thousand).
if [ -z "$EXTRA" ]; then
  python3 - "$WORK/client.json" <<'PY' || fail "methods with no live code stay registered: $(grep -a '"methods' "$WORK/client.json")"
import json, sys
c = json.load(open(sys.argv[1]))
live = c["methods"] - c["methods_unloaded"]
assert c["methods_unloaded"] > 0 and live <= c["live_versions"], (c["methods"], c["methods_unloaded"], c["live_versions"])
print("  methods: %d registered, %d unloaded with their last code, %d live for %d live versions" %
      (c["methods"], c["methods_unloaded"], live, c["live_versions"]))
PY
  pass "methods unloaded with their last code object"
fi
rm -rf "$WORK"
