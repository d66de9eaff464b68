#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `jitprov attach PID` on a running node (docs/node.md, "Attach"), over its inspector:
#  - the generated workload (tools/node/workload, with its two worker threads) starts
#    WITHOUT jitprov, with V8's own code log (--log-code, one per isolate) and its
#    inspector port moved off 9229 (--inspect-port: no clash with anyone's node); while
#    it still compiles (6 of its 20 files loaded), `jitprov attach` opens the inspector
#    with SIGUSR1, loads the client into the main isolate and into each worker thread
#    running then (each enumerates the code already there) and closes the inspector:
#    exit 0, its line gives the window and the worker threads loaded;
#  - nothing listens on the port afterwards (/proc/PID/net/tcp), and `jitprov ps` lists
#    the node (Node.js, its version) with jitprov loaded;
#  - a second attach: exit 9, nothing sent (no SIGUSR1: the port stays closed);
#  - its rundowns (session, every:1) go into a real lttng session (private
#    lttng-sessiond) and pass jitprov-verify, and at the quiet moment V8's own account
#    (the main thread's log replayed to the marker, the steady worker's whole, the early
#    worker's code dead) is in the last rundown (v8log_check.py): every Sparkplug/TurboFan
#    object with the same address, size, name and kind, none stale.
# Bad targets, each one line on stderr and its own exit status, left as they were: a
# node started with --inspect (13, its inspector still open), a node whose inspector
# port another process holds (13, never signalled: no "Debugger listening" on its
# stderr), a node that cannot open its inspector (--disable-sigusr1 where node has it;
# node 20.20.2 has not: a process named node that does not catch SIGUSR1) (7), a node
# with the client preloaded (9). A node in a network namespace of its own is attached
# over that namespace's loopback (root enters it), never over ours.
#   node_attach.sh ADDON_DIR JITPROV VERIFY SOURCE_DIR
. "$(dirname "$0")/lib.sh"
USAGE="usage: node_attach.sh ADDON_DIR JITPROV VERIFY SOURCE_DIR"
ADDON=${1:?$USAGE}
ATTACH=${2:?$USAGE}
VERIFY=${3:?$USAGE}
SRC=${4:?$USAGE}
require_lttng
require_cmd node
require_cmd ip
require_cmd unshare setpriv
enter_private_namespace "$@"
WORK=$(work_dir jitprov-node-attach)
AGENT=$ADDON/jitprov_node.node
# Ports nobody else uses here: free now, and distinct per run. Below the kernel's range of
# ephemeral ports (ip_local_port_range): a port node binds only at SIGUSR1, seconds after
# it was chosen, and a connection made meanwhile (an attach's own, to another inspector)
# could have taken one from that range as its local port ("Starting inspector on
# 127.0.0.1:35598 failed: address already in use", CI of e3fe87b). No socket of any state
# on it, IPv4 or IPv6.
read -r EPHEMERAL_LO _ </proc/sys/net/ipv4/ip_local_port_range
free_port() {
  local p top=$((EPHEMERAL_LO > 21000 ? EPHEMERAL_LO : 40000))
  while :; do
    p=$((20000 + RANDOM % (top - 20000)))
    grep -qiE ":$(printf '%04X' "$p") " /proc/net/tcp /proc/net/tcp6 || { echo "$p"; return; }
  done
}
# listening PID PORT: PID's network namespace has a listener on 127.0.0.1:PORT.
listening() { grep -qi "0100007F:$(printf '%04X' "$2") 00000000:0000 0A" "/proc/$1/net/tcp"; }

# run_script NAME PORT JS_LINE...: $WORK/NAME.js of those lines, run by node in a process
# group of its own (its children end with it: kill -- -PID) with its inspector on
# 127.0.0.1:PORT (on CPU $RUN_ON alone if set), stderr in $WORK/NAME.err; its pid in
# SCRIPT_PID.
run_script() {
  local name=$1 port=$2
  shift 2
  printf '%s\n' "$@" >"$WORK/$name.js"
  (exec setsid ${RUN_ON:+taskset -c "$RUN_ON"} node --inspect-port="127.0.0.1:$port" "$WORK/$name.js") 2>"$WORK/$name.err" &
  SCRIPT_PID=$!
  track_pid "$SCRIPT_PID"
}

# watch_at_exit COUNT...: a line of JavaScript for run_script: at the main thread's exit,
# "watch: connected BOOL, COUNT N[, COUNT N]" on stderr from the attach's worker watch
# (each COUNT one of its counts: pending, missed or late), or "watch: none".
watch_at_exit() {
  local counts="" c
  for c in "$@"; do counts+=" + ', $c ' + (typeof w.$c === 'function' ? w.$c() : 'none')"; done
  printf '%s' "if (require('worker_threads').isMainThread) process.on('exit', () => {" \
    " const w = globalThis[Symbol.for('jitprov.node.watch')]; process.stderr.write('watch: ' +" \
    " (w ? 'connected ' + w.connected()$counts : 'none') + '\\n'); });"
}

# await_node PID: until node catches SIGUSR1 (the inspector's handler, which node installs
# in its start before any script runs; `jitprov attach` refuses a node without it), up to
# 30 s; at once if PID is gone. The sleeps after it leave the script its time to run:
# alone, a fixed sleep after the start could end before node's start on a loaded machine.
usr1_caught_or_gone() {
  local mask
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null)
  [ -z "$mask" ] || (((16#$mask >> 9) & 1))
}
await_node() { poll 30 usr1_caught_or_gone "$1" || true; }

# attach_with_stats NAME PID WHAT: 0.5 s after run_script NAME started, attached with
# no rundown, no perf map and its stats in $WORK/NAME.json; the command's output in
# $WORK/NAME.out and $WORK/NAME.cmd.
attach_with_stats() {
  await_node "$2"
  sleep 0.5
  "$ATTACH" attach "$2" --agent "$AGENT" --timeout 10 --options "trigger=none,perfmap=off,stats=$WORK/$1.json" \
    >"$WORK/$1.out" 2>"$WORK/$1.cmd" || fail "attach to $3: exit $?: $(cat "$WORK/$1.cmd")"
}

# expect STATUS LINE_REGEX PID: `jitprov attach` exits STATUS, one line on stderr, nothing on stdout.
expect() {
  local want=$1 re=$2 pid=$3; shift 3
  "$ATTACH" attach "$pid" --agent "$AGENT" --timeout 10 "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err"; local rc=$?
  [ $rc -eq "$want" ] || fail "attach $pid $*: exit $rc, not $want: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  [ ! -s "$WORK/cmd.out" ] && [ "$(wc -l <"$WORK/cmd.err")" -eq 1 ] && grep -qE "$re" "$WORK/cmd.err" ||
    fail "attach $pid $*: output: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  echo "  exit $rc: $(cat "$WORK/cmd.err")"
}

# --- the workload, attached while it compiles -------------------------------------------
start_sessiond
RUNTIME_CHANNEL_OPTS="--subbuf-size=8M --num-subbuf=8" setup_session nodeattach "$WORK/trace"
lttng start nodeattach >/dev/null || fail "lttng start"
PORT=$(free_port)
mkdir -p "$WORK/d"
(
  # V8's logs, one per isolate (isolate-ADDR-PID-v8.log), in DIR: the main thread's and
  # its two worker threads' (one ends early, one stays until the end), and a third
  # worker's, started once DIR/late exists (after the attach).
  cd "$WORK/d" || exit 1
  exec node --inspect-port="127.0.0.1:$PORT" --compact-on-every-full-gc --log-code --logfile=v8.log \
    "$SRC/tools/node/workload/workload.js" "$WORK/d" 20 150 12 2+late
) >"$WORK/node.out" 2>&1 &
NODE_PID=$!
track_pid "$NODE_PID"
for _ in $(seq 600); do [ -f "$WORK/d/gen/m6.js" ] && break; kill -0 "$NODE_PID" 2>/dev/null || break; sleep 0.05; done
[ -f "$WORK/d/gen/m6.js" ] || { cat "$WORK/node.out" >&2; fail "the workload did not start"; }
"$ATTACH" ps >"$WORK/ps0"
grep -qE "^ *$NODE_PID +[0-9]+ +Node\.js +20\.[0-9.]+ +- " "$WORK/ps0" || fail "jitprov ps before the attach: $(cat "$WORK/ps0")"
"$ATTACH" attach "$NODE_PID" --agent "$AGENT" --timeout 10 \
  --options "trigger=session,every:1,perfmap=off,stats=$WORK/d/client.json" >"$WORK/attach.out" 2>"$WORK/attach.err" ||
  fail "attach: exit $?: $(cat "$WORK/attach.out" "$WORK/attach.err")"
listening "$NODE_PID" "$PORT" && fail "the inspector still listens on 127.0.0.1:$PORT after the attach"
[ ! -s "$WORK/attach.err" ] && grep -qE "^jitprov: attached to PID $NODE_PID: Node.js 20\.[0-9.]+, agent .*; inspector on 127.0.0.1:$PORT open [0-9]+ ms .*; worker threads: [1-9][0-9]* of [1-9][0-9]* loaded" "$WORK/attach.out" ||
  fail "attach output (the main thread and at least the steady worker thread loaded): $(cat "$WORK/attach.out" "$WORK/attach.err")"
cat "$WORK/attach.out"
[ -f "$WORK/d/compiled" ] && fail "the workload was past its compiling when attached: no test of an attach during it"
touch "$WORK/d/late"  # a worker thread started after the attach: the client reaches it too
"$ATTACH" ps --json >"$WORK/ps1.json"
$PY - "$WORK/ps1.json" "$NODE_PID" <<'PYCHECK' || fail "jitprov ps after the attach: $(cat "$WORK/ps1.json")"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["processes"] if r["pid"] == int(sys.argv[2])]
sys.exit(0 if rows and rows[0]["runtime"] == "Node.js" and rows[0]["jitprov"] is True else 1)
PYCHECK
pass "attached while the workload compiled; nothing listens on its inspector port after; jitprov ps says loaded"
expect 9 "client is loaded already \(nothing done\)" "$NODE_PID"
listening "$NODE_PID" "$PORT" && fail "a second attach opened the inspector"
pass "a second attach: exit 9, nothing sent"
# --timeout 0 would give the attach no time at all (before: accepted, then "timed out"):
# a usage error, nothing sent.
"$ATTACH" attach "$NODE_PID" --timeout 0 >"$WORK/t0.out" 2>"$WORK/t0.err"; rc=$?
[ $rc -eq 2 ] && [ ! -s "$WORK/t0.out" ] && grep -qx "jitprov: --timeout: '0' is not a number above 0 and at most 3600 (see --help)" "$WORK/t0.err" ||
  fail "attach --timeout 0: exit $rc: $(cat "$WORK/t0.out" "$WORK/t0.err")"
pass "attach --timeout 0: exit 2 (usage), nothing sent"

node_quiet_window "$WORK/d" "$NODE_PID" "$WORK/node.out" "$WORK/d/window"
lttng stop nodeattach >/dev/null && lttng destroy nodeattach >/dev/null || fail "lttng stop/destroy"
touch "$WORK/d/stop"
node_end "$NODE_PID" "$WORK/node.out" "$WORK/d"
node_check_trace "$WORK/trace" node-attach "$WORK/d" 1000 --late
# The main thread's, the workers loaded at the attach (the early one may have ended
# before) and the late worker's.
AT_ATTACH=$(grep -oE "worker threads: [0-9]+ of" "$WORK/attach.out" | grep -oE "[0-9]+")
$PY - "$WORK/d/client.json" "$AT_ATTACH" <<'PY' || fail "the client's isolates: $(grep -a isolates "$WORK/d/client.json")"
import json, sys
c = json.load(open(sys.argv[1]))
sys.exit(0 if c["isolates"] == int(sys.argv[2]) + 2 else "isolates %d, not %d + 2" % (c["isolates"], int(sys.argv[2])))
PY
grep "^jitprov-node:" "$WORK/node.out" && fail "a worker thread started after the attach was not traced"
pass "the attached node's rundowns (main thread, worker threads at the attach and one started after it) verified and identical to V8's own account of live code"

# Workers of workers started after the attach: each thread that took the client passes
# its new workers to the main thread's inspector session (the only one with the
# NodeWorker domain): a worker started once $WORK/go exists starts one, which starts one
# more; all three take the client (4 isolates with the main thread's), no line says a
# worker went untraced, and the process ends by itself. Each worker makes its own at
# once, before its load (50 ms after its report) can have hooked node's 'worker' event:
# that one is reported to the main thread's session only once its inspector is up, and
# with node and a busy loop sharing one CPU that came after the session had gone (10 of
# 10 runs lost both nested workers, silently, before the watch looked again 200 ms and 2
# s after a load; the looks found them: late 2). The main thread stays 2.5 s after its
# worker, past those looks.
P14=$(free_port)
taskset -c 0 bash -c 'while :; do :; done' &
BUSY=$!
track_pid "$BUSY"
RUN_ON=0 run_script nested "$P14" "const { Worker, isMainThread, workerData } = require('worker_threads');" \
  "const fs = require('fs'), spin = () => { let x = 0; for (let i = 0; i < 5e6; i++) x += i; return x; };" \
  "if (isMainThread) { const t = setInterval(() => { if (!fs.existsSync('$WORK/go')) return; clearInterval(t);" \
  "  new Worker(__filename, { workerData: 1 }).on('exit', () => setTimeout(() => {}, 2500)); }, 20); }" \
  "else { spin(); if (workerData < 3) new Worker(__filename, { workerData: workerData + 1 }); setTimeout(() => {}, 200); }" \
  "$(watch_at_exit pending late)"
NESTED=$SCRIPT_PID
attach_with_stats nested "$NESTED" "the nested-workers node"
touch "$WORK/go"
ended() { local st; st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1); [ -z "$st" ] || [ "$st" = Z ]; }
# ends_alone NAME PID: the node of run_script NAME ends by itself within 15 s, exit 0.
ends_alone() {
  for _ in $(seq 300); do ended "$2" && break; sleep 0.05; done
  ended "$2" || fail "the $1 node did not end by itself"
  wait "$2" || fail "the $1 node: exit $?: $(cat "$WORK/$1.err")"
}
# isolates_are NAME N: its client's stats ($WORK/NAME.json) count N isolates.
isolates_are() {
  $PY - "$WORK/$1.json" "$2" <<'PY' || fail "the $1 node's isolates: $(grep -a isolates "$WORK/$1.json")"
import json, sys
c = json.load(open(sys.argv[1]))
print("  client: %d isolates, %d added" % (c["isolates"], c["added"]))
sys.exit(0 if c["isolates"] == int(sys.argv[2]) else 1)
PY
}
ends_alone nested "$NESTED"
kill "$BUSY"
grep "^jitprov-node:" "$WORK/nested.err" && fail "a nested worker thread was not traced"
isolates_are nested 4
# The watch's session is gone once no worker is pending (connected, node passes every
# console call to the inspector too: console.log 2.4x slower).
grep -qE "^watch: connected false, pending 0, late [0-9]+$" "$WORK/nested.err" ||
  fail "the watch's inspector session stayed connected: $(grep '^watch' "$WORK/nested.err")"
pass "workers of workers started after the attach take the client too (4 isolates; $(grep -oE "late [0-9]+" "$WORK/nested.err") found by the watch's later looks), and node ends as before"

# Workers that end before they can take the client are said and counted, not lost
# silently: once $WORK/go2 exists the main thread starts five that exit at once and stays
# busy 1 s (its loop, which sends the loads, runs only after they are gone), then starts
# one that lives until it has the client. The first three are named, the total said at
# exit, the watch counts five (missed 5); the last takes the client (2 isolates with the
# main thread's).
P15=$(free_port)
run_script short "$P15" "const { Worker } = require('worker_threads'), fs = require('fs');" \
  "const t = setInterval(() => { if (!fs.existsSync('$WORK/go2')) return; clearInterval(t);" \
  "  for (let i = 0; i < 5; i++) new Worker('process.exit(0)', { eval: true });" \
  "  const e = Date.now() + 1000; while (Date.now() < e);" \
  "  setTimeout(() => new Worker('const t0 = Date.now(), i = setInterval(() => {' +" \
  "    ' if (globalThis[Symbol.for(\"jitprov.node.attach\")] || Date.now() - t0 > 5000) clearInterval(i); }, 20);'," \
  "    { eval: true }), 100); }, 20);" \
  "$(watch_at_exit missed)"
SHORT=$SCRIPT_PID
attach_with_stats short "$SHORT" "the short-worker node"
touch "$WORK/go2"
ends_alone short "$SHORT"
grep "^jitprov-node:" "$WORK/short.err"
[ "$(grep -c "^jitprov-node: \[worker [1-5]\], started after the attach, ended before it took the client: not traced$" \
  "$WORK/short.err")" -eq 3 ] &&
  grep -qx "jitprov-node: 5 worker threads started after the attach ran without the client: not traced" "$WORK/short.err" &&
  [ "$(grep -c "^jitprov-node:" "$WORK/short.err")" -eq 4 ] ||
  fail "the workers that ended before they took the client were not said: $(cat "$WORK/short.err")"
grep -qx "watch: connected false, missed 5" "$WORK/short.err" ||
  fail "the watch's count: $(grep '^watch' "$WORK/short.err")"
isolates_are short 2
pass "five workers that ended before they took the client: three named, all counted (missed 5), the next one traced"

# A title with control characters (the program's to set): node 20.20.2 writes it into
# /json/list unescaped (for a program given by -e; for a script file, its path), which is
# then not JSON. The attach loads all the same and closes the inspector (it used to stop
# there, exit 1, the inspector left open).
# Its port in NODE_OPTIONS: a new title overwrites the command line /proc shows.
P7=$(free_port)
(NODE_OPTIONS="--inspect-port=127.0.0.1:$P7" exec setsid node -e \
  'process.title = "jp\ntitle\x1b[31m\ttab"; setInterval(() => {}, 1000);') 2>"$WORK/title.err" &
TITLED=$!
track_pid "$TITLED"
await_node "$TITLED"
sleep 0.5
"$ATTACH" attach "$TITLED" --agent "$AGENT" --timeout 10 --options "trigger=none,perfmap=off" \
  >"$WORK/title.out" 2>"$WORK/title.cmd" || fail "attach to a node titled with control characters: exit $?: $(cat "$WORK/title.cmd")"
! listening "$TITLED" "$P7" || fail "a node titled with control characters: its inspector is still open after the attach"
grep -q "jitprov_node.node" "/proc/$TITLED/maps" || fail "a node titled with control characters: the client is not loaded"
# jitprov ps shows that title (its command line now) on one row, its control characters
# as '?': nothing of it reaches the terminal.
"$ATTACH" ps >"$WORK/ps-title" || fail "jitprov ps: exit $?"
grep -qE "^ *$TITLED +[0-9]+ +Node\.js +20\.[0-9.]+ +loaded +jp\?title\?\[31m\?tab$" "$WORK/ps-title" &&
  ! grep -q $'\e' "$WORK/ps-title" && ! grep -qvE '^ *(PID|[0-9]+) ' "$WORK/ps-title" ||
  fail "jitprov ps of a node titled with control characters: $(cat -A "$WORK/ps-title")"
kill -- -"$TITLED"
pass "a title with a newline, an ESC and a tab: attached, its inspector closed; jitprov ps shows it on one row, no ESC"

# An attach whose options the client refuses (exit 11, its reason on node's stderr)
# leaves the addon mapped (node cannot unload it) but nothing started: jitprov ps shows
# no client, and a second attach with good options loads it (it used to say "loaded
# already", exit 9, for the rest of the process's life).
P9=$(free_port)
(exec setsid node --inspect-port="127.0.0.1:$P9" -e \
  "setInterval(() => { if (require('fs').existsSync('$WORK/retry.stop')) process.exit(0); }, 50)") 2>"$WORK/retry.err" &
RETRY=$!
track_pid "$RETRY"
await_node "$RETRY"
sleep 0.5
expect 11 "the client refused to start \(its reason on the target's stderr; inspector on 127\.0\.0\.1:$P9 open" \
  "$RETRY" --options "trigger=none,bogus=1"
grep -q "^jitprov-node: .*bogus" "$WORK/retry.err" || fail "a refused attach: no reason on node's stderr: $(cat "$WORK/retry.err")"
! listening "$RETRY" "$P9" || fail "a refused attach: the inspector is still open"
"$ATTACH" ps >"$WORK/ps-retry" || fail "jitprov ps: exit $?"
grep -qE "^ *$RETRY +[0-9]+ +Node\.js +20\.[0-9.]+ +- " "$WORK/ps-retry" ||
  fail "jitprov ps after a refused attach: $(grep -E "^ *$RETRY " "$WORK/ps-retry")"
"$ATTACH" attach "$RETRY" --agent "$AGENT" --timeout 10 --options "trigger=none,perfmap=off,stats=$WORK/retry.json" \
  >"$WORK/retry.out" 2>"$WORK/retry.cmd" || fail "attach after a refused one: exit $?: $(cat "$WORK/retry.cmd")"
! listening "$RETRY" "$P9" || fail "the attach after a refused one: the inspector is still open"
"$ATTACH" ps >"$WORK/ps-retry" || fail "jitprov ps: exit $?"
grep -qE "^ *$RETRY +[0-9]+ +Node\.js +20\.[0-9.]+ +loaded " "$WORK/ps-retry" ||
  fail "jitprov ps after the second attach: $(grep -E "^ *$RETRY " "$WORK/ps-retry")"
expect 9 "loaded already \(nothing done\)" "$RETRY"
touch "$WORK/retry.stop"
ends_alone retry "$RETRY"
isolates_are retry 1
pass "options refused: exit 11, no client in jitprov ps; attached again with good ones: loaded (1 isolate), a third: exit 9"

# --- bad targets ----------------------------------------------------------------------
P2=$(free_port)
node --inspect="127.0.0.1:$P2" -e 'setInterval(() => {}, 1000)' 2>"$WORK/insp.err" &
INSP=$!
track_pid "$INSP"
for _ in $(seq 100); do listening "$INSP" "$P2" && break; sleep 0.05; done
expect 13 "inspector is open already on 127.0.0.1:$P2 \(--inspect\): in use, left as it is" "$INSP"
listening "$INSP" "$P2" && kill -0 "$INSP" || fail "the --inspect node was not left as it was"
pass "--inspect: exit 13, its inspector left open"

P3=$(free_port)
node -e "require('net').createServer().listen($P3, '127.0.0.1')" &
HOLDER=$!
track_pid "$HOLDER"
node --inspect-port="127.0.0.1:$P3" -e 'setInterval(() => {}, 1000)' 2>"$WORK/taken.err" &
TAKEN=$!
track_pid "$TAKEN"
for _ in $(seq 100); do listening "$HOLDER" "$P3" && break; sleep 0.05; done
sleep 0.3
expect 13 "another process listens on its inspector's port 127.0.0.1:$P3: node could not open it, nothing sent" "$TAKEN"
sleep 0.3
kill -0 "$TAKEN" && ! grep -q "inspector" "$WORK/taken.err" || fail "the node whose port was taken was signalled: $(cat "$WORK/taken.err")"
pass "its inspector port taken: exit 13, never signalled"

if node --disable-sigusr1 -e 1 2>/dev/null; then
  node --disable-sigusr1 -e 'setInterval(() => {}, 1000)' &
else
  cp "$(command -v sleep)" "$WORK/node"  # node 20.20.2 has no --disable-sigusr1
  "$WORK/node" 60 &
fi
NOUSR1=$!
track_pid "$NOUSR1"
sleep 0.3
expect 7 "does not catch SIGUSR1 .*nothing sent" "$NOUSR1"
kill -0 "$NOUSR1" || fail "the node that cannot open its inspector died"
pass "no SIGUSR1 handler: exit 7, left running"

# Attached the moment it was launched (`node app.js & jitprov attach $!`): node installs
# its SIGUSR1 handler in its bootstrap, and the command asks again until it has (before:
# exit 7, "does not catch SIGUSR1"). Then the inspector is closed again.
P17=$(free_port)
node --inspect-port="127.0.0.1:$P17" -e 'setInterval(() => {}, 1000)' 2>"$WORK/early.err" &
EARLY=$!
track_pid "$EARLY"
"$ATTACH" attach "$EARLY" --agent "$AGENT" --timeout 10 --options "trigger=none,perfmap=off" \
  >"$WORK/early.out" 2>"$WORK/early.cmd" || fail "attach at node's launch: exit $?: $(cat "$WORK/early.out" "$WORK/early.cmd")"
grep -q "^jitprov: attached to PID $EARLY: Node.js" "$WORK/early.out" && ! listening "$EARLY" "$P17" ||
  fail "attach at node's launch: $(cat "$WORK/early.out" "$WORK/early.cmd")"
kill "$EARLY"
pass "attached at node's launch: $(grep -o 'it was starting: attached after [0-9]* tries in [0-9]* ms' "$WORK/early.out" || echo 'ready at the first try')"

# An --inspect-port among the program's own arguments (after the script) is not node's:
# the command watches the port node's options give, attaches, and the inspector closes.
P5=$(free_port)
P6=$(free_port)
printf 'setInterval(() => {}, 1000);\n' >"$WORK/idle.js"
node --inspect-port="127.0.0.1:$P6" "$WORK/idle.js" --inspect-port="127.0.0.1:$P5" &
ARGS=$!
track_pid "$ARGS"
await_node "$ARGS"
sleep 0.5
"$ATTACH" attach "$ARGS" --agent "$AGENT" --timeout 10 --options perfmap=off >"$WORK/args.out" 2>"$WORK/args.err" ||
  fail "attach to a node with --inspect-port after its script: exit $?: $(cat "$WORK/args.out" "$WORK/args.err")"
grep -q "inspector on 127.0.0.1:$P6 open" "$WORK/args.out" || fail "not attached over 127.0.0.1:$P6: $(cat "$WORK/args.out")"
grep -q "worker threads" "$WORK/args.out" && fail "a node without worker threads, yet the line names some: $(cat "$WORK/args.out")"
listening "$ARGS" "$P6" && fail "its inspector still listens on 127.0.0.1:$P6 after the attach"
pass "--inspect-port after the script is the program's: attached over node's own port, closed after"

# A worker thread blocked in a native call (execSync: no V8 interrupt reaches it) cannot
# take the client: the command gives it until a second before --timeout, then closes the
# inspector all the same: exit 10, the main thread loaded, nothing left listening.
P10=$(free_port)
run_script blocked "$P10" "const { Worker, isMainThread } = require('worker_threads');" \
  "if (isMainThread) { new Worker(__filename); setInterval(() => {}, 1000); }" \
  "else { require('child_process').execSync('sleep 30'); }"
BLOCKED=$SCRIPT_PID
await_node "$BLOCKED"
sleep 0.7
"$ATTACH" attach "$BLOCKED" --agent "$AGENT" --timeout 3 --options perfmap=off >"$WORK/blocked.out" 2>"$WORK/blocked.cmd"; rc=$?
[ $rc -eq 10 ] && grep -q "the client is loaded in the main thread, but 1 of its 1 worker threads did not answer in time" "$WORK/blocked.cmd" ||
  fail "a blocked worker thread: exit $rc: $(cat "$WORK/blocked.out" "$WORK/blocked.cmd")"
echo "  exit $rc: $(cat "$WORK/blocked.cmd")"
listening "$BLOCKED" "$P10" && fail "a blocked worker thread kept the inspector open on 127.0.0.1:$P10"
kill -- -"$BLOCKED" 2>/dev/null  # its process group: node and the worker's sleep
pass "a worker thread blocked in a native call: exit 10, the inspector closed all the same"

# The main thread blocked in a native call right after its inspector opened (it polls
# inspector.url() and then runs execSync('sleep 4')): no answer can come by --timeout 2;
# the command says so and that the inspector is still open. Once the thread is free the
# load runs, and with it the close the load arranged for the command's deadline (the
# command's own close went with its session), twice: SIGUSR1's second start, pending in
# node's loop, opens the inspector again after the first. Then nothing listens.
# The load and the close can both come before the poll sees the inspector open (seen
# once in a fresh check: "session over after 30" ms, exit 0): the block did not happen,
# so that try says nothing; up to three tries with a new node.
for try in 1 2 3; do
  P11=$(free_port)
  run_script mainblocked "$P11" "const i = require('inspector');" \
    "(function poll() { if (i.url()) require('child_process').execSync('sleep 4'); else setImmediate(poll); })();" \
    "setInterval(() => {}, 1000);"
  MAINB=$SCRIPT_PID
  await_node "$MAINB"
  sleep 0.5
  "$ATTACH" attach "$MAINB" --agent "$AGENT" --timeout 2 --options perfmap=off >"$WORK/mainb.out" 2>"$WORK/mainb.cmd"; rc=$?
  [ $rc -eq 0 ] || break
  echo "  try $try: attached before the main thread blocked (exit 0): again"
  kill -- -"$MAINB" 2>/dev/null
done
# (Which of the two: whether node's interrupt ran the load before the block began.)
[ $rc -eq 10 ] && grep -qE "(Runtime.evaluate: no answer in time \(its main thread blocked in a native call\?\); the load and the close wait for it|the client answered 'loaded', but inspector.close\(\) got no answer in time \(its main thread blocked in a native call\?\); the inspector closes itself once that thread is free); ITS INSPECTOR IS STILL OPEN on 127.0.0.1:$P11" "$WORK/mainb.cmd" ||
  fail "a blocked main thread: exit $rc: $(cat "$WORK/mainb.out" "$WORK/mainb.cmd")"
echo "  exit $rc: $(cat "$WORK/mainb.cmd")"
sleep 3
for _ in $(seq 100); do listening "$MAINB" "$P11" || break; sleep 0.1; done
listening "$MAINB" "$P11" && fail "the inspector of the once-blocked main thread is still open: $(cat "$WORK/mainblocked.err")"
"$ATTACH" ps | grep -E "^ *$MAINB +[0-9]+ +Node\.js +20\.[0-9.]+ +loaded " >/dev/null || fail "the load queued behind the block did not run"
kill -- -"$MAINB" 2>/dev/null
pass "a main thread blocked once its inspector opened: exit 10, STILL OPEN said; then loaded, and closed ($(grep -c 'Debugger listening' "$WORK/mainblocked.err") openings)"

# The inspector opening late, near --timeout: the main thread blocked in a native call
# (execSync('sleep 2')) when SIGUSR1 comes opens it once free (the interrupt at its next
# call), 2 s into a --timeout of 2.5 s, and is blocked again for 0.3 s
# (execSync('sleep 0.3')) before it can answer. The exchange still gets its two seconds
# from the opening, so the load and the close are sent and answered: exit 0, listening
# after 1.5 s or more. Without those two seconds the answer is due within 0.25 s of the
# opening: exit 10.
P18=$(free_port)
run_script late "$P18" "const fs = require('fs'), cp = require('child_process');" \
  "setTimeout(() => { fs.writeFileSync('$WORK/late.blocking', ''); cp.execSync('sleep 2'); cp.execSync('sleep 0.3'); }, 200);" \
  "setInterval(() => {}, 1000);"
LATE=$SCRIPT_PID
poll 30 test -e "$WORK/late.blocking" || fail "the late node did not block in 30 s"
"$ATTACH" attach "$LATE" --agent "$AGENT" --timeout 2.5 --options perfmap=off >"$WORK/late.out" 2>&1 ||
  fail "an inspector opening 2 s into a --timeout of 2.5 s: exit $?: $(cat "$WORK/late.out")"
after=$(sed -n 's/.* open [0-9]* ms (listening after \([0-9]*\), .*/\1/p' "$WORK/late.out")
[ -n "$after" ] && [ "$after" -ge 1500 ] || fail "the inspector was not late (listening after '$after' ms): $(cat "$WORK/late.out")"
listening "$LATE" "$P18" && fail "the late inspector is still open on 127.0.0.1:$P18"
echo "  $(cat "$WORK/late.out")"
kill -- -"$LATE" 2>/dev/null
pass "an inspector opening $after ms into a --timeout of 2.5 s: attached and closed within the two seconds it gets from then"

# --inspect-publish-uid=stderr: its inspector would serve no /json/list, so the command
# could not find its WebSocket URL and close it again (before: exit 1, "ITS INSPECTOR IS
# STILL OPEN"): refused, never signalled.
P12=$(free_port)
node --inspect-port="127.0.0.1:$P12" --inspect-publish-uid=stderr -e 'setInterval(() => {}, 1000)' 2>"$WORK/uid.err" &
UID_PID=$!
track_pid "$UID_PID"
await_node "$UID_PID"
sleep 0.5
expect 7 "would not serve its WebSocket URL over HTTP \(--inspect-publish-uid=stderr\): refused, nothing sent" "$UID_PID"
sleep 0.3
listening "$UID_PID" "$P12" || grep -q "Debugger listening" "$WORK/uid.err" && fail "the --inspect-publish-uid=stderr node was signalled"
pass "--inspect-publish-uid=stderr: exit 7, never signalled"
# idle_node NAME HOST:PORT: an idle node with its inspector's address there (not open),
# stderr in $WORK/NAME.err, its pid in IDLE_PID once it catches SIGUSR1 (0.5 s).
idle_node() {
  node --inspect-port="$2" -e 'setInterval(() => {}, 1000)' 2>"$WORK/$1.err" &
  IDLE_PID=$!
  track_pid "$IDLE_PID"
  await_node "$IDLE_PID"
  sleep 0.5
}
# attached_over NAME PID HOST PORT: attached over HOST:PORT (as the line writes it), the
# client loaded, nothing listening on PORT any more (IPv4 or IPv6).
attached_over() {
  local name=$1 pid=$2 host=$3 port=$4
  "$ATTACH" attach "$pid" --agent "$AGENT" --timeout 10 >"$WORK/$name.out" 2>&1 ||
    fail "attach over $host:$port: exit $?: $(cat "$WORK/$name.out")"
  grep -qF "inspector on $host:$port open " "$WORK/$name.out" || fail "not attached over $host:$port: $(cat "$WORK/$name.out")"
  grep -qiE ":$(printf '%04X' "$port") [0-9A-F]+:0000 0A" "/proc/$pid/net/tcp" "/proc/$pid/net/tcp6" &&
    fail "the inspector still listens on $host:$port"
  "$ATTACH" ps | grep -E "^ *$pid +[0-9]+ +Node\.js +20\.[0-9.]+ +loaded " >/dev/null || fail "$host:$port: the client is not loaded"
  echo "  $(cat "$WORK/$name.out")"
}
# An IPv6 inspector address (--inspect-port=[::1]:PORT, /proc/PID/net/tcp6), and another
# loopback address than 127.0.0.1: attached there and closed again.
P13=$(free_port)
idle_node v6 "[::1]:$P13"
attached_over v6 "$IDLE_PID" "[::1]" "$P13"
kill "$IDLE_PID"
P17=$(free_port)
idle_node lo2 "127.0.0.2:$P17"
attached_over lo2 "$IDLE_PID" 127.0.0.2 "$P17"
kill "$IDLE_PID"
# On :: (every address): refused, never signalled.
P16=$(free_port)
idle_node v6any "[::]:$P16"
expect 7 "would listen on \[::\]:$P16, beyond loopback: refused, nothing sent" "$IDLE_PID"
sleep 0.3
grep -q "Debugger listening" "$WORK/v6any.err" && fail "the node whose inspector would listen on :: was signalled"
# Another process on [::1]:PORT: node could not open its inspector there: exit 13, never
# signalled.
P19=$(free_port)
node -e "require('net').createServer().listen($P19, '::1'); setInterval(() => {}, 1000)" &
HOLDER6=$!
track_pid "$HOLDER6"
idle_node v6busy "[::1]:$P19"
expect 13 "another process listens on its inspector's port \[::1\]:$P19: node could not open it, nothing sent" "$IDLE_PID"
sleep 0.3
grep -q "Debugger listening" "$WORK/v6busy.err" && fail "the node whose IPv6 port was taken was signalled"
kill "$HOLDER6" "$IDLE_PID"
# An agent path or options that are not UTF-8 text cannot go into the load's JavaScript
# (before: the command aborted after SIGUSR1, the inspector left open): refused first.
P15=$(free_port)
node --inspect-port="127.0.0.1:$P15" -e 'setInterval(() => {}, 1000)' 2>"$WORK/utf.err" &
UTF_PID=$!
track_pid "$UTF_PID"
await_node "$UTF_PID"
sleep 0.5
expect 1 "the agent's path or the options are not UTF-8 text \(\"stats=/tmp/.*\"\): nothing sent" "$UTF_PID" \
  --options "$(printf 'stats=/tmp/\xff')"
sleep 0.3
grep -q "Debugger listening" "$WORK/utf.err" && fail "the node given non-UTF-8 options was signalled"
pass "--inspect-port=[::1]:PORT and 127.0.0.2:PORT: attached and closed; [::]:PORT: exit 7; [::1]:PORT taken: exit 13; options that are not UTF-8: exit 1; neither signalled"

# A program with a global `require` of its own, which shadows the inspector's command-line
# API (V8 installs none of its names the global object has): the load and the close use
# no `require` (process.dlopen, process._debugEnd), so it is attached and closed again.
P14=$(free_port)
node --inspect-port="127.0.0.1:$P14" -e "globalThis.require = () => { throw new Error('not node\\'s require'); }; setInterval(() => {}, 1000)" 2>"$WORK/shadow.err" &
SHADOW=$!
track_pid "$SHADOW"
await_node "$SHADOW"
sleep 0.5
"$ATTACH" attach "$SHADOW" --agent "$AGENT" --timeout 10 --options perfmap=off >"$WORK/shadow.out" 2>>"$WORK/shadow.err" ||
  fail "attach to a node with its own global require: exit $?: $(cat "$WORK/shadow.out" "$WORK/shadow.err")"
listening "$SHADOW" "$P14" && fail "its own global require: the inspector still listens on 127.0.0.1:$P14"
pass "a program's own global require: attached, and its inspector closed"

# --inspect=0: the inspector opened at start on a port node chose, which the command
# cannot tell from the program's own: left alone, never signalled (13).
node --inspect=127.0.0.1:0 -e 'setInterval(() => {}, 1000)' 2>"$WORK/insp0.err" &
INSP0=$!
track_pid "$INSP0"
await_node "$INSP0"
sleep 0.5
expect 13 "opened at start \(--inspect\) on a port node chose: in use, left as it is" "$INSP0"
pass "--inspect=0: exit 13, left as it is"

# --inspect-port=0: node picks the port as it opens; the command takes the target's first
# new listener on that address, attaches, and the inspector closes again.
node --inspect-port=0 -e 'setInterval(() => {}, 1000)' 2>"$WORK/port0.err" &
PORT0=$!
track_pid "$PORT0"
await_node "$PORT0"
sleep 0.5
"$ATTACH" attach "$PORT0" --agent "$AGENT" --timeout 10 --options perfmap=off >"$WORK/port0.out" 2>>"$WORK/port0.err" ||
  fail "attach to a node with --inspect-port=0: exit $?: $(cat "$WORK/port0.out" "$WORK/port0.err")"
P0=$(sed -n 's/.*; inspector on 127\.0\.0\.1:\([0-9]*\) open .*/\1/p' "$WORK/port0.out")
[ -n "$P0" ] && [ "$P0" != 0 ] && grep -q "Debugger listening on ws://127.0.0.1:$P0/" "$WORK/port0.err" ||
  fail "--inspect-port=0: not the port node opened: $(cat "$WORK/port0.out" "$WORK/port0.err")"
listening "$PORT0" "$P0" && fail "--inspect-port=0: its inspector still listens on 127.0.0.1:$P0 after the attach"
pass "--inspect-port=0: attached over the port node picked ($P0), closed after"

# An inspector that opens elsewhere than the command can know (process.debugPort set at
# run time): exit 1, and the line names the port still open instead of "did not open".
P7=$(free_port)
P8=$(free_port)
NODE_OPTIONS="--inspect-port=127.0.0.1:$P8" node -e "process.debugPort = $P7; setInterval(() => {}, 1000)" &
MOVED=$!
track_pid "$MOVED"
await_node "$MOVED"
sleep 0.5
"$ATTACH" attach "$MOVED" --agent "$AGENT" --timeout 2 >"$WORK/moved.out" 2>"$WORK/moved.err"
rc=$?
[ $rc -eq 1 ] && grep -q "did not open on 127.0.0.1:$P8 .* but it listens on 127.0.0.1:$P7 since: an inspector may be STILL OPEN" "$WORK/moved.err" ||
  fail "an inspector opened on another port: exit $rc: $(cat "$WORK/moved.out" "$WORK/moved.err")"
echo "  exit $rc: $(cat "$WORK/moved.err")"
pass "an inspector opened on a port the command could not know: exit 1, the open port named"

# A node in a network namespace of its own (a container's): its inspector listens on
# its own loopback, which the command reaches by entering the namespace. A decoy listens
# on the same port in ours, where a command that stayed in its own namespace would go:
# it must see no connection.
P9=$(free_port)
$PY - "$P9" "$WORK/decoy" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
open(sys.argv[2] + ".up", "w").close()
while True:
    c, a = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write("connection from %s:%d\n" % a)
    c.close()
PY
DECOY=$!
track_pid "$DECOY"
(exec unshare --net sh -c 'ip link set lo up && exec node --inspect-port="127.0.0.1:$0" -e "setInterval(() => {}, 1000)"' "$P9") \
  2>"$WORK/netns.err" &
NETNS=$!
track_pid "$NETNS"
for _ in $(seq 100); do [ "$(cat "/proc/$NETNS/comm" 2>/dev/null)" = node ] && [ -f "$WORK/decoy.up" ] && break; sleep 0.05; done
await_node "$NETNS"
sleep 0.5
NETNS_NS=$(readlink "/proc/$NETNS/ns/net")
[ -n "$NETNS_NS" ] && [ "$NETNS_NS" != "$(readlink /proc/self/ns/net)" ] || fail "the node is not in a network namespace of its own"
"$ATTACH" attach "$NETNS" --agent "$AGENT" --timeout 10 --options perfmap=off >"$WORK/netns.out" 2>>"$WORK/netns.err" ||
  fail "attach to a node in another network namespace: exit $?: $(cat "$WORK/netns.out" "$WORK/netns.err")"
grep -qF "; inspector on 127.0.0.1:$P9 in $NETNS_NS open " "$WORK/netns.out" &&
  grep -qE "^jitprov: attached to PID $NETNS: Node.js " "$WORK/netns.out" ||
  fail "attach in another network namespace: $(cat "$WORK/netns.out")"
cat "$WORK/netns.out"
listening "$NETNS" "$P9" && fail "its inspector still listens on 127.0.0.1:$P9 in its namespace after the attach"
[ -s "$WORK/decoy" ] && fail "the decoy in our network namespace was connected to: $(cat "$WORK/decoy")"
"$ATTACH" ps >"$WORK/ps-netns"
grep -qE "^ *$NETNS +[0-9]+ +Node\.js +20\.[0-9.]+ +loaded " "$WORK/ps-netns" || fail "jitprov ps after the attach in a network namespace: $(cat "$WORK/ps-netns")"
pass "a node in another network namespace: attached over its own loopback, closed after, the decoy in ours untouched"

# The same without the right to enter it: a user's own node in its own user and network
# namespace, attached by that user (no CAP_SYS_ADMIN in ours): exit 5, never signalled.
(cd / && exec setpriv --reuid=65534 --regid=65534 --clear-groups unshare --user --map-root-user --net \
  node -e 'setInterval(() => {}, 1000)') 2>"$WORK/userns.err" &
USERNS=$!
track_pid "$USERNS"
for _ in $(seq 100); do [ "$(cat "/proc/$USERNS/comm" 2>/dev/null)" = node ] && break; sleep 0.05; done
await_node "$USERNS"
sleep 0.5
setpriv --reuid=65534 --regid=65534 --clear-groups "$ATTACH" attach "$USERNS" --agent "$AGENT" --timeout 10 \
  >"$WORK/userns.out" 2>"$WORK/userns.cmd"; rc=$?
[ $rc -eq 5 ] && [ ! -s "$WORK/userns.out" ] &&
  grep -qE "is in another network namespace \(net:\[[0-9]+\]\), which this command cannot enter: .*CAP_SYS_ADMIN.*; nothing sent$" "$WORK/userns.cmd" ||
  fail "attach by its user to a node in its own network namespace: exit $rc: $(cat "$WORK/userns.out" "$WORK/userns.cmd")"
echo "  exit $rc: $(cat "$WORK/userns.cmd")"
sleep 0.3
kill -0 "$USERNS" && ! grep -q "Debugger listening" "$WORK/userns.err" ||
  fail "the node whose namespace could not be entered was signalled: $(cat "$WORK/userns.err")"
pass "its network namespace not ours to enter: exit 5, never signalled"

NODE_OPTIONS="--require=$ADDON/preload.js" JITPROV_NODE=perfmap=off node -e 'setInterval(() => {}, 1000)' &
PRE=$!
track_pid "$PRE"
# Until the preloaded client has started (its publisher thread runs: what the attach
# reads as loaded; the addon mapped alone is not), up to 30 s.
client_threads() { cat /proc/"$1"/task/*/comm 2>/dev/null | grep -x jitprov-publish >/dev/null; }
poll 30 client_threads "$PRE"
expect 9 "client is loaded already" "$PRE"
pass "the client preloaded: exit 9"
# Preloaded with options it refused: disabled for the process's life, which the attach
# hears from the load and says (exit 11), its inspector closed again.
P21=$(free_port)
NODE_OPTIONS="--require=$ADDON/preload.js" JITPROV_NODE=bogus=1 node --inspect-port="127.0.0.1:$P21" \
  -e 'setInterval(() => {}, 1000)' 2>"$WORK/dis.err" &
DIS=$!
track_pid "$DIS"
poll 30 grep -q "runs untraced" "$WORK/dis.err"
grep -q "^jitprov-node: .*bogus.*runs untraced" "$WORK/dis.err" || fail "JITPROV_NODE=bogus=1: $(cat "$WORK/dis.err")"
expect 11 "jitprov's client is disabled in this process for its life \(options refused at its start" "$DIS"
! listening "$DIS" "$P21" || fail "the attach to a disabled client: the inspector is still open"
pass "the client preloaded with options it refused: exit 11, disabled for the process's life, the inspector closed"

# jitprov record -p on a running node: the client attached over its inspector, its
# rundowns recorded and verified (the session's holding the code there was at the attach),
# and summary.json names the runtime (it said dotnet).
# 20 000 functions compiled by Sparkplug first: V8's enumeration at the attach (31 000 code
# objects, tens of ms) outlasts the session's start.
node --inspect-port="127.0.0.1:$(free_port)" --always-sparkplug -e 'const fs = [];
  for (let i = 0; i < 20000; i++) fs.push(new Function("x", "return x + " + i));
  for (const f of fs) f(1); require("fs").writeFileSync(process.argv[1], "");
  setInterval(() => { for (let i = 0; i < 1e5; i++) Math.sqrt(i); }, 50)' "$WORK/rp.compiled" &
RP=$!
track_pid "$RP"
# Until the 20 000 are compiled (was a fixed 2 s), up to 60 s.
poll 60 test -e "$WORK/rp.compiled" || fail "the node of record -p did not compile its 20 000 functions"
"$ATTACH" record -p "$RP" -d 2 -o "$WORK/rec" >"$WORK/rec.out" 2>"$WORK/rec.err"; rc=$?
[ $rc -eq 0 ] || fail "record -p $RP: exit $rc: $(cat "$WORK/rec.out" "$WORK/rec.err")"
$PY - "$WORK/rec/summary.json" "$RP" <<'PY' || fail "record -p on node: $(cat "$WORK/rec.out")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["pid"] == int(sys.argv[2]) and s["runtime"] == "node" and s["verify_exit"] == 0, (s["pid"], s["runtime"], s["verify_exit"])
# The session's rundown holds the code that existed at the attach, all but what was
# compiled in these 2 s (tens of 31 000): it waits for the client's enumeration at install
# (it held none: 0 records of 31 196 code bodies, with the wait removed).
(p,) = s["processes"]
r = p["rundowns"][0]
assert r["trigger"] == "session" and r["method_records"] > 20000, p["rundowns"]
assert r["method_records"] >= 0.99 * p["code_bodies"], (r["method_records"], p["code_bodies"])
print("  the session's rundown: %d records of %d code bodies" % (r["method_records"], p["code_bodies"]))
PY
kill -0 "$RP" || fail "the node died during record -p"
pass "record -p $RP -d 2 on a running node: verified, its session rundown holds the node's code, summary.json's runtime node, the node still runs"
# Again: the client is loaded already; what it published before has no method_load in
# this trace, and the verdict says why G2 went unchecked (it hinted at enabling events).
"$ATTACH" record -p "$RP" -d 1 -o "$WORK/rec2" >"$WORK/rec2.out" 2>"$WORK/rec2.err"; rc=$?
[ $rc -eq 0 ] || fail "record -p $RP again: exit $rc: $(cat "$WORK/rec2.out" "$WORK/rec2.err")"
$PY - "$WORK/rec2/summary.json" <<'PY' || fail "record -p again: $(cat "$WORK/rec2.out")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["attach"].startswith("jitprov's agent was loaded already"), s["attach"]
assert s["verify_exit"] == 0 or (s["verify_exit"] == 4 and "loaded before this recording" in s["verdict"]), s["verdict"]
PY
pass "record -p $RP again: $(grep verdict: "$WORK/rec2.out" | sed 's/^ *//' | cut -c1-160)"
rm -rf "$WORK"
