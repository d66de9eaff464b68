#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Node.js client's exit (docs/node.md, "The exit"): at node's 'exit' event the exit
# rundown and the stats begin on a thread of their own, beside node's teardown, and the
# client's atexit handler waits for them. Node stops its workers after that event; their
# code stays in the registry, so the exit rundown reports it as it was at the event,
# whichever thread gets there first. Two ways out, each with a worker alive at the end
# that has run a function of its own (`workerOnly`) up the tiers, and an 'exit' listener
# after the client's that compiles a function (`afterExitEvent`, baseline code) as the
# exit's work begins, as V8 finishing a TurboFan job in node's teardown does:
#  - process.exit(0) from the main thread;
#  - the main thread's event loop empties (the worker unref'd) and node returns from main.
# Each time: the exit rundown of the process is there whole (rundown_end, not cut short),
# it holds `workerOnly`'s baseline or optimized code, the client accounts the exit's
# work (own_cpu.exit_ns, at least a third of the rundown's time), and the trace
# verifies; `afterExitEvent` is published (in the exit rundown, or after it began), and
# the stats count the events that came after the exit rundown (after_exit). The main
# thread has 20 000 functions of its own in baseline code: an exit rundown longer than
# node's teardown. Fails with the client before 2026-12-07 (it dropped V8's events from
# the 'exit' event on, uncounted). Mutants this fails on: the worker's cleanup
# retiring its code at the exit; the atexit handler not waiting (the process ends
# halfway through the rundown); the exit rundown left out of exit_ns.
#   node_exit.sh ADDON_DIR VERIFY_BINARY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
USAGE="usage: node_exit.sh ADDON_DIR VERIFY SOURCE_DIR"
ADDON=${1:?$USAGE}
VERIFY=${2:?$USAGE}
SRC=${3:?$USAGE}
require_lttng
require_cmd node
enter_private_namespace "$@"
WORK=$(work_dir jitprov-node-exit)
trap 'cleanup_pids; rm -rf "$WORK"' EXIT
[ -e "$ADDON/preload.js" ] || fail "$ADDON/preload.js not built"
export PYTHONPATH="$SRC/tests/integration"

cat >"$WORK/app.js" <<'JS'
const { Worker } = require('worker_threads');
const how = process.argv[2];
// 20 000 functions of the main thread's, each baseline code (--always-sparkplug): an
// exit rundown of 8-9 ms (32 000 versions), longer than node's teardown after its 'exit'.
const fns = [];
for (let i = 0; i < 20000; i++) fns.push(new Function('x', 'return x + ' + i));
let sum = 0;
for (const f of fns) sum += f(1);
// The worker runs workerOnly up the tiers, says so, and runs on until node stops it.
const w = new Worker(`
  const { parentPort } = require('worker_threads');
  function workerOnly(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * 31) % 7; return s; }
  let r = 0; for (let i = 0; i < 50000; i++) r += workerOnly(200);
  parentPort.postMessage(r);
  setInterval(() => { r += workerOnly(10); }, 5);`, { eval: true });
// After the client's listener (preload.js): code V8 makes once the exit's work has begun.
process.on('exit', () => {
  function afterExitEvent(x) { return x * 7 + 1; }
  sum += afterExitEvent(1);
});
w.on('message', (r) => {
  console.log('worker ready', r);
  if (how === 'exit') process.exit(0);
  w.unref();  // the main thread's loop empties: node returns from main
});
JS

start_sessiond
n=0
for how in exit return; do
  n=$((n + 1))
  setup_session "exit$n" "$WORK/trace-$how"
  lttng start "exit$n" >/dev/null || fail "lttng start"
  (
    cd "$WORK" || exit 1
    exec env NODE_OPTIONS="--require=$ADDON/preload.js" \
      JITPROV_NODE="trigger=exit,perfmap=off,stats=$WORK/client-$how.json" node --always-sparkplug "$WORK/app.js" "$how"
  ) >"$WORK/node-$how.out" 2>&1 &
  NODE_PID=$!
  track_pid "$NODE_PID"
  wait "$NODE_PID"; rc=$?
  [ $rc -eq 0 ] && grep -q '^worker ready' "$WORK/node-$how.out" || { cat "$WORK/node-$how.out" >&2; fail "$how: node exit $rc"; }
  lttng stop "exit$n" >/dev/null && lttng destroy "exit$n" >/dev/null || fail "lttng stop/destroy"
  "$VERIFY" "$WORK/trace-$how" >"$WORK/verify-$how.out" 2>&1 || verify_failed "$WORK/verify-$how.out" $?
  res=$($PY - "$WORK/trace-$how" "$WORK/client-$how.json" <<'PY'
import json, sys
from bt2read import events
trace, stats = sys.argv[1:]
exit_ids, ends, worker_only, after = set(), {}, [], []
for name, f in events(trace, ("jitprov_rundown:", "jitprov_runtime:method_load")):
    if "afterExitEvent" in f.get("name", ""):
        after.append((name, f["host_tier"]))
    if name == "jitprov_rundown:rundown_begin" and f["trigger"] == "exit":
        exit_ids.add(f["rundown_id"])
    elif name == "jitprov_rundown:rundown_end":
        ends[f["rundown_id"]] = f
    elif name == "jitprov_rundown:method" and f["rundown_id"] in exit_ids and "workerOnly" in f["name"]:
        worker_only.append((f["name"], f["host_tier"]))
assert len(exit_ids) == 1, "exit rundowns: %s" % sorted(exit_ids)
(rid,) = exit_ids
end = ends.get(rid)
assert end is not None and end["cut_short"] == 0, "the exit rundown's end: %s" % end
# host_tier: 11 Sparkplug, 12 Maglev, 13 TurboFan (docs/node.md, "The model mapping")
assert any(t in (11, 12, 13) for _, t in worker_only), \
    "no baseline or optimized workerOnly in the exit rundown (%d versions in it): %s" % (end["versions"], worker_only)
# Made as the exit's work began: published (a method_load, and the exit rundown's record
# when it came before the walk).
assert any(n == "jitprov_runtime:method_load" and t == 11 for n, t in after), \
    "afterExitEvent, compiled after the 'exit' event, is not published: %s" % after
st = json.load(open(stats))
assert isinstance(st["after_exit"], int), st
o = st["own_cpu"]
# The exit's work's CPU time holds the exit rundown's (its wall time; a preemption aside).
assert o["exit_ns"] >= 0.3 * end["duration_ns"], (o, end["duration_ns"])
assert end["versions"] > 20000, end
print("exit rundown %d: %d versions in %.1f ms, workerOnly %s, afterExitEvent %s; the exit's work %.1f ms of "
      "CPU; %d events after it" % (rid, end["versions"], end["duration_ns"] / 1e6,
                                   sorted(set(t for _, t in worker_only)),
                                   "in it" if any(n != "jitprov_runtime:method_load" for n, _ in after) else "after it",
                                   o["exit_ns"] / 1e6, st["after_exit"]))
PY
  ) || fail "$how: the exit rundown"
  pass "$how (a worker alive at the end): $res; the trace verified"
done
