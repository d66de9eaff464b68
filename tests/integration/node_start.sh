#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Node.js client's start off node's main thread (docs/node.md, "The start"): the
# jitprov runtime loads lttng-ust, whose constructor waits for the session daemon's
# answer to its registration; the client does that on its publisher thread while node
# runs the program, its handler queueing V8's events until the runtime is there.
#  - With the session daemon stopped (SIGSTOP) and LTTNG_UST_REGISTER_TIMEOUT=-1 (wait
#    for it without end), node runs the program: it compiles 400 functions up the tiers
#    and writes a file, while the client's start is still pending (no jitprov-rundown
#    thread in the process yet). A start on the main thread never lets it run there:
#    the test then fails after 60 s.
#    The program then sets a new variable in process.env: it waits until the start is
#    done, since lttng-ust's constructor reads the environment on the client's thread
#    under node's lock of it (glibc's setenv may move the array a getenv walks).
#  - The daemon continued, the program compiles as many functions again and ends; the
#    client's stats say the start ran on the publisher thread with events queued before
#    it; jitprov-verify passes the trace and V8's own code log, replayed whole, is in
#    the exit rundown: the code compiled before the start is not lost (v8log_check.py).
#    The exit rundown alone (trigger=exit): the session's rundown, which the start
#    brings once it is up, would be cut short by the program's end when the start comes
#    late (jitprov-verify: not complete, exit 4).
#   node_start.sh ADDON_DIR VERIFY_BINARY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
USAGE="usage: node_start.sh ADDON_DIR VERIFY SOURCE_DIR"
ADDON=${1:?$USAGE}
VERIFY=${2:?$USAGE}
SRC=${3:?$USAGE}
require_lttng
require_cmd node
enter_private_namespace "$@"
WORK=$(work_dir jitprov-node-start)
[ -e "$ADDON/preload.js" ] || fail "$ADDON/preload.js not built"

cat >"$WORK/app.js" <<'JS'
const fs = require('fs');
const d = process.argv[2];
// n functions of their own, called until V8 has compiled them up the tiers.
function hotWork(tag, n) {
  const fns = [];
  for (let i = 0; i < n; i++)
    fns.push(new Function('n', `let s = ${i}; for (let k = 0; k < n; k++) s += k * ${i % 7 + 1}; return s; // ${tag}`));
  let r = 0;
  for (let round = 0; round < 400; round++) for (const f of fns) r += f(40);
  return r;
}
fs.writeFileSync(d + '/ran', String(hotWork('before', 400)));
// A new variable (glibc's setenv may move the array lttng-ust's constructor walks):
// node's lock of the environment, which the client's start holds, makes it wait.
process.env.JITPROV_START_PROBE = 'set';
fs.writeFileSync(d + '/env-set', '');
const wait = setInterval(() => {
  if (!fs.existsSync(d + '/go')) return;
  clearInterval(wait);
  console.log('done', hotWork('after', 400));
}, 20);
JS

start_sessiond
setup_session start "$WORK/trace"
lttng start start >/dev/null || fail "lttng start"
kill -STOP "$SESSIOND_PID" || fail "stop lttng-sessiond"
(
  cd "$WORK" || exit 1
  exec env LTTNG_UST_REGISTER_TIMEOUT=-1 NODE_OPTIONS="--require=$ADDON/preload.js" \
    JITPROV_NODE="trigger=exit,perfmap=off,stats=$WORK/client.json" \
    node --always-sparkplug --log-code --logfile="$WORK/v8.log" "$WORK/app.js" "$WORK"
) >"$WORK/node.out" 2>&1 &
NODE_PID=$!
track_pid "$NODE_PID"
for _ in $(seq 600); do [ -f "$WORK/ran" ] && break; kill -0 "$NODE_PID" 2>/dev/null || break; sleep 0.1; done
if [ ! -f "$WORK/ran" ]; then
  kill -CONT "$SESSIOND_PID"
  cat "$WORK/node.out" >&2
  fail "the program did not run while the session daemon was stopped: the client's start holds node's main thread"
fi
threads=$(cat /proc/"$NODE_PID"/task/*/comm 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')
grep -qx jitprov-rundown /proc/"$NODE_PID"/task/*/comm 2>/dev/null &&
  { kill -CONT "$SESSIOND_PID"; fail "the client's start was not pending while the program ran (threads:$threads)"; }
pass "node ran the program (400 functions compiled) while lttng-ust waited for the stopped session daemon; threads:$threads"
sleep 1
[ -e "$WORK/env-set" ] && { kill -CONT "$SESSIOND_PID"; fail "process.env took a new variable while lttng-ust's constructor could be reading the environment on the client's thread"; }
pass "the program's process.env.X = ... waited for lttng-ust's start (1 s)"

kill -CONT "$SESSIOND_PID" || fail "continue lttng-sessiond"
for _ in $(seq 300); do [ -e "$WORK/env-set" ] && break; sleep 0.1; done
[ -e "$WORK/env-set" ] || fail "process.env still waits 30 s after the session daemon went on"
touch "$WORK/go"
node_end "$NODE_PID" "$WORK/node.out" "$WORK"
grep -q '^done [0-9]' "$WORK/node.out" || { cat "$WORK/node.out" >&2; fail "the program's output"; }
lttng stop start >/dev/null && lttng destroy start >/dev/null || fail "lttng stop/destroy"
$PY - "$WORK/client.json" <<'PY' || fail "the client's start in its stats"
import json, sys
s = json.load(open(sys.argv[1]))["start"]
print("start:", json.dumps(s))
sys.exit(0 if s["on"] == "publisher" and s["queued_before"] > 0 else 1)
PY
node_check_trace "$WORK/trace" node-start "$WORK" 200 --program
pass "the code V8 made before the client's start is in the exit rundown, as V8's log has it"
