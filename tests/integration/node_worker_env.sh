#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Node.js client started by a worker thread alone (its execArgv --require), while the
# main thread's JavaScript runs on (docs/node.md, "The start"): the start reads and
# writes the environment (JITPROV_NODE, setLttngEnvironment, lttng-ust's constructor
# copying it for its threads), and a `process.env.X = ...` of the main thread meanwhile
# (glibc's setenv, which may move the array a getenv walks) would race with it. The start
# holds node's own lock of the environment, which process.env takes:
#  - the session daemon stopped (SIGSTOP) and LTTNG_UST_REGISTER_TIMEOUT=-1, the worker's
#    start waits in lttng-ust's registration (its threads there, no jitprov-rundown yet);
#    the main thread, asked then, sets a new variable: it waits, and has not set it a
#    second later (without the lock it sets it at once: the mutant this fails on);
#  - the daemon continued, the variable is set, the worker's client comes up and records,
#    the program ends normally, and the trace verifies.
# The probe comes once lttng-ust's threads exist, in its constructor: a lock taken only
# around the runtime's creation would pass too; that it is taken before the client reads
# JITPROV_NODE and writes lttng-ust's variables is the code's (startClient), as reviewed.
#   node_worker_env.sh ADDON_DIR VERIFY_BINARY
. "$(dirname "$0")/lib.sh"
USAGE="usage: node_worker_env.sh ADDON_DIR VERIFY"
ADDON=${1:?$USAGE}
VERIFY=${2:?$USAGE}
require_lttng
require_cmd node
enter_private_namespace "$@"
WORK=$(work_dir jitprov-node-worker-env)
trap 'kill -CONT "${SESSIOND_PID:-0}" 2>/dev/null; cleanup_pids; rm -rf "$WORK"' EXIT
[ -e "$ADDON/preload.js" ] || fail "$ADDON/preload.js not built"

cat >"$WORK/app.js" <<'JS'
const fs = require('fs');
const { Worker } = require('worker_threads');
const [d, preload] = process.argv.slice(2);
// The worker loads the client; its start then waits for the stopped session daemon.
const w = new Worker(`
  const { parentPort } = require('worker_threads');
  function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
  let r = 0; for (let i = 0; i < 20000; i++) r += hot(100);
  parentPort.postMessage(r);`, { eval: true, execArgv: ['--require=' + preload] });
w.on('message', (r) => { fs.writeFileSync(d + '/worker-done', String(r)); });
// The main thread's JavaScript runs on; asked (the file probe), it sets a new variable.
const poll = setInterval(() => {
  if (!fs.existsSync(d + '/probe')) return;
  clearInterval(poll);
  fs.writeFileSync(d + '/asked', '');
  process.env.JITPROV_WORKER_ENV_PROBE = 'set';
  fs.writeFileSync(d + '/env-set', '');
  w.on('exit', () => console.log('done', fs.readFileSync(d + '/worker-done', 'utf8')));
}, 20);
JS

start_sessiond
setup_session wenv "$WORK/trace"
lttng start wenv >/dev/null || fail "lttng start"
kill -STOP "$SESSIOND_PID" || fail "stop lttng-sessiond"
(
  cd "$WORK" || exit 1
  exec env LTTNG_UST_REGISTER_TIMEOUT=-1 JITPROV_NODE="trigger=exit,perfmap=off,stats=$WORK/client.json,verbose" \
    node "$WORK/app.js" "$WORK" "$ADDON/preload.js"
) >"$WORK/node.out" 2>&1 &
NODE_PID=$!
track_pid "$NODE_PID"
# The worker's start pending: lttng-ust's threads there, jitprov's engine not yet.
threads() { cat /proc/"$NODE_PID"/task/*/comm 2>/dev/null; }
# has_thread REGEX: a thread's name matches. Not `threads | grep -q`: under pipefail, grep
# leaving at its first match makes cat's next write fail (SIGPIPE, 141), and the pipeline
# false, whenever the matching thread is not the last listed (the flake seen twice in
# full checks, "seen last: 8 node 2 node-ust", then "no lttng-ust thread").
has_thread() {
  local t
  t=$(threads)
  grep -q -- "$1" <<<"$t"
}
# Alive, not a zombie not yet waited for (kill -0 succeeds on one, whose task/ shows only
# its main thread): lttng-ust's listener threads, once named "-ust", end only with the
# process (lttng-ust 2.13: lttng_ust_exit, or a fatal signal).
alive() {
  local state
  state=$(sed 's/.*) //' /proc/"$NODE_PID"/stat 2>/dev/null | cut -d' ' -f1)
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}
seen=
for _ in $(seq 300); do
  seen=$(threads | sort | uniq -c | tr '\n' ' ')
  grep -q -- '-ust ' <<<"$seen " && break
  alive || break
  sleep 0.1
done
if ! has_thread '-ust$'; then
  kill -CONT "$SESSIOND_PID"
  # Gone or going (a crash, a signal; a core being dumped keeps the process a while with
  # one thread) or still there: its status says which. (Once, under a full tools/check, a
  # '-ust' thread was seen and then gone: pipefail's SIGPIPE, see has_thread.)
  for _ in $(seq 100); do alive || break; sleep 0.1; done
  cat "$WORK/node.out" >&2
  alive &&
    fail "no lttng-ust thread in node in 30 s (seen last: $seen; now: $(threads | sort | uniq -c | tr '\n' ' '))"
  wait "$NODE_PID"
  fail "node ended before its worker's start, status $? ($(ls "$WORK"))"
fi
has_thread '^jitprov-rundown$' && { kill -CONT "$SESSIOND_PID"; fail "the worker's start was not pending"; }
touch "$WORK/probe"
for _ in $(seq 100); do [ -e "$WORK/asked" ] && break; sleep 0.1; done
[ -e "$WORK/asked" ] || { kill -CONT "$SESSIOND_PID"; cat "$WORK/node.out" >&2; fail "the main thread's JavaScript did not run while the worker's start was pending"; }
sleep 1
[ -e "$WORK/env-set" ] && { kill -CONT "$SESSIOND_PID"; fail "process.env took a new variable while the worker's start could be reading the environment"; }
has_thread '^jitprov-rundown$' && { kill -CONT "$SESSIOND_PID"; fail "the worker's start ended while the daemon was stopped"; }
pass "the main thread's JavaScript ran while the worker's start waited for the stopped session daemon; its process.env.X = ... waited (1 s)"

kill -CONT "$SESSIOND_PID" || fail "continue lttng-sessiond"
for _ in $(seq 300); do [ -e "$WORK/env-set" ] && break; sleep 0.1; done
[ -e "$WORK/env-set" ] || fail "process.env still waits 30 s after the session daemon went on"
node_end "$NODE_PID" "$WORK/node.out" "$WORK"
grep -q '^done [0-9]' "$WORK/node.out" || { cat "$WORK/node.out" >&2; fail "the program's output"; }
grep -q "^jitprov-node: loaded: .*; started under node's lock of the environment$" "$WORK/node.out" ||
  fail "the client's verbose line: $(grep 'jitprov-node: loaded' "$WORK/node.out")"
lttng stop wenv >/dev/null && lttng destroy wenv >/dev/null || fail "lttng stop/destroy"
"$VERIFY" "$WORK/trace" >"$WORK/verify.out" 2>&1 || verify_failed "$WORK/verify.out" $?
added=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["added"])' "$WORK/client.json" 2>/dev/null) ||
  fail "the client's stats: $(head -c 400 "$WORK/client.json")"
[ "$added" -gt 0 ] || fail "the worker's client added no code"
pass "the daemon continued: the variable set, the worker's client up ($added code objects), the trace verified"
