# SPDX-License-Identifier: MIT
# Helpers for the integration tests (bash). Source it first.
# shellcheck shell=bash
set -uo pipefail
# Under pipefail `CMD | grep -q X` is false when grep leaves at its first match and CMD's
# next write fails (SIGPIPE): write `CMD | grep X >/dev/null` (tests/pipefail_check.py).
# shellcheck source=tools/lib/lttng.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lib/lttng.sh"
# shellcheck source=tools/lib/dotnet.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lib/dotnet.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
# A missing prerequisite skips (77) on a developer's machine and fails under CI=true.
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL (CI=true, would skip): $*" >&2; exit 1; fi
  echo "SKIP: $*" >&2; exit 77
}
require_cmd() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "$c not installed"; done; }
require_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (BPF, uprobes, a private mount namespace)"; }

# Runs the rest of the script inside a private mount namespace with a tmpfs over
# /var/run/lttng (so a test never meets a system or another test's session daemon)
# and tracefs mounted (bpftrace detaches its uprobes through it): tools/lib/lttng.sh.
enter_private_namespace() {
  command -v unshare >/dev/null || skip "unshare not installed"
  lttng_enter_namespace "$@" || fail "private mount namespace"
}

# Kills, by pid, only processes this test started; then removes the perf maps
# (/tmp/perf-PID.map, which the agents write for perf) made since the test began whose
# process is gone, so that the check leaves none behind (about 50 a check before
# 2026-12-06), and likewise the diagnostics sockets of .NET processes that did not end
# on their own (/tmp/dotnet-diagnostic-PID-KEY-socket, which CoreCLR removes only at a
# normal exit: two a check, 439 in /tmp here on 2026-12-06). A test's EXIT trap calls it.
STARTED_PIDS=()
PERF_MAPS_AT_START=" $(cd /tmp && echo perf-*.map) "
DOTNET_SOCKETS_AT_START=" $(cd /tmp && echo dotnet-diagnostic-*-socket) "
track_pid() { STARTED_PIDS+=("$1"); }
# poll SECS CMD...: runs CMD every 0.05 s until it succeeds (true) or SECS have passed
# (false): a wait for a condition, where a fixed sleep could end before it on a loaded
# machine.
poll() {
  local secs=$1
  shift
  for _ in $(seq $((secs * 20))); do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}
# exited PID: PID is gone (bash reaps its own children as they end).
exited() { ! kill -0 "$1" 2>/dev/null; }
cleanup_pids() {
  local p f
  for p in "${STARTED_PIDS[@]+"${STARTED_PIDS[@]}"}"; do kill "$p" 2>/dev/null; done
  for p in "${STARTED_PIDS[@]+"${STARTED_PIDS[@]}"}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  for f in /tmp/perf-*.map; do
    [ -e "$f" ] || continue
    case $PERF_MAPS_AT_START in *" ${f#/tmp/} "*) continue ;; esac
    p=${f#/tmp/perf-}
    p=${p%.map}
    kill -0 "$p" 2>/dev/null || rm -f "$f"
  done
  for f in /tmp/dotnet-diagnostic-*-socket; do
    [ -S "$f" ] || continue
    case $DOTNET_SOCKETS_AT_START in *" ${f#/tmp/} "*) continue ;; esac
    p=${f#/tmp/dotnet-diagnostic-}
    p=${p%%-*}
    kill -0 "$p" 2>/dev/null || rm -f "$f"
  done
  return 0
}
trap cleanup_pids EXIT

# --- lttng ---------------------------------------------------------------------------
PY=/usr/bin/python3  # Debian's interpreter (JSON checks)

# Root, the lttng daemons and tools, babeltrace2.
require_lttng() {
  require_root
  require_cmd lttng lttng-sessiond babeltrace2 "$PY"
}

# Starts a private lttng-sessiond (inside enter_private_namespace) and waits for it;
# with a prefix (e.g. `ip netns exec NS`), under it. Sets SESSIOND_PID.
start_sessiond() {
  lttng_sessiond_start "$@" || fail "lttng-sessiond did not come up"
  SESSIOND_PID=$LTTNG_SESSIOND_PID
  track_pid "$SESSIOND_PID"
}

# The documented lossless set-up (docs/tracing.md, tools/lib/lttng.sh): rundown events
# in their own channel that may block, runtime events in a channel that never blocks.
#   setup_session NAME OUTPUT_DIR [rundown channel options...]
# CREATE_OPTS replaces --output (e.g. a live session: --live=... --set-url=net://...);
# RUNTIME_CHANNEL_OPTS replaces the runtime channel's options; VPID=0 leaves out the
# vpid context (per-UID buffers mix processes: jitprov-verify tells them apart by vpid;
# VPID=0 is for the test that the verifier refuses to guess; VPID=pidns adds the pid_ns
# context: processes of several pid namespaces).
setup_session() {
  local name=$1 out=$2; shift 2
  local opts=(--runtime)
  [ $# -gt 0 ] && opts+=(--rundown-opts "$*")
  [ -n "${RUNTIME_CHANNEL_OPTS:-}" ] && opts+=(--runtime-opts "$RUNTIME_CHANNEL_OPTS")
  [ -n "${CREATE_OPTS:-}" ] && opts+=(--create "$CREATE_OPTS")
  [ "${VPID:-1}" = 1 ] && opts+=(--vpid)
  [ "${VPID:-1}" = pidns ] && opts+=(--pidns)
  lttng_lossless_session "$name" "$out" "${opts[@]}" || fail "lttng session $name set-up"
}

# Starts jitprov-sim with --ready-file and --stats-json in $WORK; sets SIM_PID. With
# SIM_NETNS set, inside that network namespace (ip netns exec: the same pid).
start_sim() {
  rm -f "$WORK/ready" "$WORK/stats.json"
  local prefix=()
  [ -n "${SIM_NETNS:-}" ] && prefix=(ip netns exec "$SIM_NETNS")
  "${prefix[@]}" "$SIM" --ready-file "$WORK/ready" --stats-json "$WORK/stats.json" "$@" 2>"$WORK/sim.err" &
  SIM_PID=$!
  track_pid "$SIM_PID"
  for _ in $(seq 600); do
    [ -s "$WORK/ready" ] && return 0
    kill -0 "$SIM_PID" 2>/dev/null || { cat "$WORK/sim.err" >&2; fail "jitprov-sim exited during start-up"; }
    sleep 0.1
  done
  fail "jitprov-sim not ready after 60 s"
}

# Asks the sim for fresh stats (SIGUSR1) and prints the Python expression EXPR over
# them (the JSON is `d`), e.g. sim_stat 'len(d["rundowns"])'.
sim_stat() {
  local before
  before=$(stat -c %Y.%Z "$WORK/stats.json" 2>/dev/null; cat "$WORK/stats.json" 2>/dev/null | md5sum)
  kill -USR1 "$SIM_PID" 2>/dev/null || fail "jitprov-sim (pid $SIM_PID) is gone"
  for _ in $(seq 50); do
    sleep 0.05
    [ "$(stat -c %Y.%Z "$WORK/stats.json" 2>/dev/null; md5sum <"$WORK/stats.json" 2>/dev/null)" != "$before" ] && break
  done
  [ -e "$WORK/stats.json" ] || return 1  # not written yet: a busy machine
  $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$WORK/stats.json"
}

# Waits until the sim completed at least N rundowns (or fails after SECONDS).
wait_rundowns() {
  local n=$1 secs=${2:-60}
  for _ in $(seq $((secs * 4))); do
    local done
    done=$(sim_stat 'len(d["rundowns"])') && [ "$done" -ge "$n" ] && return 0
    sleep 0.2
  done
  fail "fewer than $n rundowns after $secs s"
}

# The generated .NET workload (CLASSES x METHODS) in $WORK/wl/out/JitWork.dll and
# CoreCLR's own view, $WORK/cr/out/jitprov-clr-rundown, each built from a copy (no obj/
# in the source tree). Sets CLR. Built once per build tree for the same sources, sizes
# and SDK (three tests use the same; 10-20 s of two cores each build): kept in
# JITPROV_TEST_CACHE (tests/meson.build sets it in the build directory) under a key of
# all three, and copied into $WORK; built in $WORK when the variable is unset.
#   build_dotnet_workload SOURCE_DIR CLASSES METHODS
build_dotnet_workload() {
  local cache=${JITPROV_TEST_CACHE:-} key dir
  if [ -z "$cache" ]; then
    build_dotnet_workload_in "$@" "$WORK"
  else
    key=$( { find "$1/tools/dotnet/workload" "$1/tools/dotnet/clr-rundown" "$1/tools/lib/dotnet.sh" -type f \
               -print0 | sort -z | xargs -0 sha256sum; echo "$2 $3"; dotnet --version; } | sha256sum | cut -c1-16)
    dir=$cache/dotnet-workload-$key
    mkdir -p "$cache" || fail "mkdir $cache"
    # One builder at a time; the others wait and copy. A build that failed leaves nothing.
    (
      flock 9
      [ -f "$dir/done" ] && exit 0
      rm -rf "$dir" "$dir.tmp"
      build_dotnet_workload_in "$1" "$2" "$3" "$dir.tmp" && touch "$dir.tmp/done" && mv "$dir.tmp" "$dir"
    ) 9>"$cache/dotnet-workload.lock" || fail "build the .NET workload"
    mkdir -p "$WORK/wl" "$WORK/cr" && cp -r "$dir/wl/out" "$WORK/wl/" && cp -r "$dir/cr/out" "$WORK/cr/" ||
      fail "copy the .NET workload from $dir"
  fi
  CLR="$WORK/cr/out/jitprov-clr-rundown"
}

# build_dotnet_workload_in SOURCE_DIR CLASSES METHODS DIR: the two builds into DIR/wl/out
# and DIR/cr/out (logs in DIR).
build_dotnet_workload_in() {
  $PY "$1/tools/dotnet/workload/gen_workload.py" "$4/wl" "$2" "$3" || { echo "generate the workload" >&2; return 1; }
  dotnet build -c Release -o "$4/wl/out" "$4/wl" >"$4/build.log" 2>&1 ||
    { tail -20 "$4/build.log" >&2; echo "dotnet build the workload" >&2; return 1; }
  dotnet_build_copy "$1/tools/dotnet/clr-rundown" "$4/cr" "$4/build-cr.log" ||
    { echo "dotnet build jitprov-clr-rundown" >&2; return 1; }
}

# --- node ----------------------------------------------------------------------------
# install_typescript: TypeScript $TS_VERSION from the npm registry, once per build tree
# (JITPROV_TEST_CACHE, else under $WORK), shared by the node tests under a lock; sets TSC.
install_typescript() {
  local cache=${JITPROV_TEST_CACHE:-$WORK/cache}
  local ts=$cache/typescript-$TS_VERSION
  mkdir -p "$cache" || fail "mkdir $cache"
  (
    flock 9
    [ -f "$ts/done" ] && exit 0
    rm -rf "$ts" "$ts.tmp"
    npm install --no-audit --no-fund --prefix "$ts.tmp" "typescript@$TS_VERSION" >"$WORK/npm.log" 2>&1 &&
      touch "$ts.tmp/done" && mv "$ts.tmp" "$ts"
  ) 9>"$cache/typescript.lock" || { cat "$WORK/npm.log" >&2; fail "npm install typescript@$TS_VERSION"; }
  TSC=$ts/node_modules/typescript/bin/tsc
  [ -f "$TSC" ] || fail "no tsc in $ts"
}

# node_quiet_window D NODE_PID OUT WINDOW: waits for the generated workload's quiet moment
# (D/quiet, tools/node/workload), then 2.5 s (at least two every:1 rundowns); WINDOW gets
# the window's start and end (ns).
node_quiet_window() {
  for _ in $(seq 1200); do [ -f "$1/quiet" ] && break; kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  [ -f "$1/quiet" ] || { cat "$3" >&2; fail "the workload did not reach its quiet moment"; }
  date -r "$1/quiet" +%s%N >"$4"
  sleep 2.5
  date +%s%N >>"$4"
}

# node_end NODE_PID OUT DIR: waits for node (exit 0, else its output and a failure), and
# leaves its pid in DIR/pid beside the client's DIR/client.json for v8log_check.py.
node_end() {
  local rc
  wait "$1"; rc=$?
  [ $rc -eq 0 ] || { cat "$2" >&2; fail "node exit status $rc"; }
  echo "$1" >"$3/pid"
  [ -f "$3/client.json" ] || { cat "$2" >&2; fail "no stats file"; }
}

# verify_failed FILE RC: jitprov-verify's output (text or --json) on stderr, its start and
# every line that names a failure (a failed check is often thousands of lines in), then
# fails the test.
verify_failed() {
  head -c 1500 "$1" >&2
  echo "... the lines that name a failure:" >&2
  grep -n -m 40 -iE 'fail|error|missing|stale|lost|not ' "$1" | cut -c1-400 >&2
  fail "jitprov-verify exit $2"
}

# stop_cut_only JSON: true when jitprov-verify's exit 4 (--json report in JSON) has one
# reason only: `lttng stop` caught a periodic rundown in flight, so that the trace ends
# before that rundown's end, or the application's shutdown cut one short (its
# rundown_end says cut_short: a .NET app that exits during an every:1 rundown, once in
# dotnet-attach). Each such rundown must be its process's last, or be cut short and
# followed by its exit rundown alone (the shutdown cuts the rundown in flight, then runs
# the exit's), with G2 and G4 passing; every other rundown passes whole, and nothing
# else is unchecked.
stop_cut_only() {
  $PY - "$1" <<'PY'
import json, re, sys
v = json.load(open(sys.argv[1]))
assert v["exit"] == 4 and v["violations"] == 0, "exit %s, %s violations" % (v["exit"], v["violations"])
cut = set()
for s in v["sessions"]:
    for p in s["processes"]:
        rs = sorted(p["rundowns"], key=lambda r: r["rundown_id"])
        last = rs[-1]["rundown_id"]
        for i, r in enumerate(rs):
            before_exit = (i == len(rs) - 2 and rs[-1].get("trigger") == "exit" and r.get("cut_short"))
            if (r["rundown_id"] == last and ("rundown_end" not in r or r["cut_short"])) or before_exit:
                assert r["G2"]["status"] == r["G4"]["status"] == "pass" and not r["violations"], r
                cut.add(r["rundown_id"])
            else:
                assert r["G2"]["status"] == r["G3"]["status"] == r["G4"]["status"] == "pass", r
for line in v["not_checked"]:
    m = re.search(r"rundown (\d+): (the trace ends before its rundown_end|G3\+: the rundown lacks"
                  r"|G3\+: cut short by the application's shutdown)", line)
    assert m and int(m.group(1)) in cut, line
print("jitprov-verify exit 4: only a process's last rundown (or the one before its exit rundown) cut by lttng stop or its shutdown (rundown %s) not checked whole"
      % ", ".join(map(str, sorted(cut))))
PY
}

# node_check_trace TRACE LABEL DIR MIN_LIVE [v8log_check.py options...]: jitprov-verify
# ($VERIFY) passes the trace, and V8's own code log (DIR) agrees with its rundowns.
node_check_trace() {
  local trace=$1 label=$2 dir=$3 min=$4 rc
  shift 4
  "$VERIFY" --json "$trace" >"$WORK/verify.json"; rc=$?
  # A periodic rundown (every:1) under way when the test stopped the session has no end in
  # the trace (node-attach, once in a fresh clone's check): accepted for a process's last
  # rundown alone (stop_cut_only), which the V8-log check never uses (it takes complete
  # rundowns in the quiet window).
  [ $rc -eq 4 ] && stop_cut_only "$WORK/verify.json" && rc=0
  [ $rc -eq 0 ] || verify_failed "$WORK/verify.json" $rc
  "$VERIFY" "$trace" | head -1
  PYTHONPATH="$SRC/tests/integration" $PY "$SRC/tests/integration/v8log_check.py" "$trace" "$label" "$dir" "$min" "$@" ||
    fail "V8 code log cross-check"
}
