#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lttng-ust's base-address statedump in an agent's process (docs/tracing.md, "lttng-ust's
# statedump in the agents' processes"), on a real node with the client loaded from the
# environment, in a session that records lttng-ust's own statedump events beside
# jitprov's:
#  - by default the agent leaves the base-address part out: no
#    lttng_ust_statedump:bin_info event of that process, while the statedump's start
#    still comes and jitprov's per-session rundown, which hangs on it, still runs
#    (a rundown_begin with trigger session);
#  - with JITPROV_BADDR_STATEDUMP=1 the process keeps lttng-ust's default: bin_info
#    events of its libraries (libjitprov among them), and the rundown as well;
#  - a LTTNG_UST_WITHOUT_BADDR_STATEDUMP the user set is theirs: with
#    JITPROV_BADDR_STATEDUMP=1 beside it, still none.
#   agent_statedump.sh ADDON_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
USAGE="usage: agent_statedump.sh ADDON_DIR SOURCE_DIR"
ADDON=${1:?$USAGE}
SRC=${2:?$USAGE}
require_lttng
require_cmd node
enter_private_namespace "$@"
WORK=$(work_dir jitprov-agent-statedump)
trap 'cleanup_pids; rm -rf "$WORK"' EXIT
[ -e "$ADDON/preload.js" ] || fail "$ADDON/preload.js not built"

start_sessiond
setup_session sd "$WORK/trace"
lttng enable-event -u -s sd -c jitprov_runtime 'lttng_ust_statedump:*' >/dev/null || fail "enable statedump events"
lttng start sd >/dev/null || fail "lttng start"

# run NAME [VAR=VALUE...]: node living half a second (the session's rundown comes on
# jitprov's thread), the client preloaded; its pid in $WORK/NAME.pid.
run() {
  local name=$1; shift
  (cd "$WORK" && exec env NODE_OPTIONS="--require=$ADDON/preload.js" JITPROV_NODE="trigger=session,perfmap=off" \
    "$@" node -e 'setTimeout(() => {}, 500)') >"$WORK/$name.out" 2>&1 &
  local pid=$!
  track_pid "$pid"
  echo "$pid" >"$WORK/$name.pid"
  wait "$pid" || { cat "$WORK/$name.out" >&2; fail "$name: node exited $?"; }
}
run default
run kept JITPROV_BADDR_STATEDUMP=1
run user JITPROV_BADDR_STATEDUMP=1 LTTNG_UST_WITHOUT_BADDR_STATEDUMP=1
lttng stop sd >/dev/null || fail "lttng stop"
lttng destroy sd >/dev/null || fail "lttng destroy"

PYTHONPATH="$SRC/tests/integration" $PY - "$WORK/trace" "$(cat "$WORK/default.pid")" "$(cat "$WORK/kept.pid")" \
  "$(cat "$WORK/user.pid")" <<'PY' || fail "statedump events"
import collections, sys
from bt2read import events
trace, pids = sys.argv[1], {int(p): n for p, n in zip(sys.argv[2:], ("default", "kept", "user"))}
count = collections.Counter()
libs = collections.defaultdict(set)
for name, f in events(trace, ["lttng_ust_statedump:start", "lttng_ust_statedump:bin_info",
                              "jitprov_rundown:rundown_begin"]):
    who = pids.get(f.get("vpid"))
    if who is None:
        continue
    if name == "jitprov_rundown:rundown_begin":
        name += ":" + str(f.get("trigger"))
    count[(who, name)] += 1
    if name == "lttng_ust_statedump:bin_info":
        libs[who].add(f.get("path", "").rsplit("/", 1)[-1])
for who in ("default", "kept", "user"):
    print("  %-8s statedump start %d, bin_info %d, rundowns (session trigger) %d" % (
        who, count[(who, "lttng_ust_statedump:start")], count[(who, "lttng_ust_statedump:bin_info")],
        count[(who, "jitprov_rundown:rundown_begin:session")]))
bad = []
for who in ("default", "kept", "user"):
    if count[(who, "lttng_ust_statedump:start")] < 1:
        bad.append("%s: no lttng_ust_statedump:start" % who)
    if count[(who, "jitprov_rundown:rundown_begin:session")] < 1:
        bad.append("%s: no rundown for the session" % who)
for who in ("default", "user"):
    if count[(who, "lttng_ust_statedump:bin_info")] != 0:
        bad.append("%s: %d bin_info events, expected none" % (who, count[(who, "lttng_ust_statedump:bin_info")]))
if not any(l.startswith("libjitprov.so") for l in libs["kept"]):
    bad.append("kept: no bin_info for libjitprov (%d events: %s)" % (count[("kept", "lttng_ust_statedump:bin_info")],
                                                                     sorted(libs["kept"])[:8]))
if bad:
    sys.exit("\n".join(bad))
PY
pass "the base-address statedump left out by default, kept on request, the user's choice kept; rundowns on every session start"
