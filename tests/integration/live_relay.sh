#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Live streaming through lttng-relayd, between two "machines": two network namespaces
# this test creates, joined by a veth pair with addresses that exist only inside them
# (10.213.7.1: the collector, 10.213.7.2: the application host; nothing else is
# addressed). lttng-relayd runs in the collector; lttng-sessiond and jitprov-sim (200 000
# methods) in the application's namespace. The session is created --live with the
# documented lossless channels; jitprov-verify follows it from the collector
# (net://10.213.7.1/host/HOST/SESSION), reports the rundown as it ends and verifies it
# when the session is destroyed.
# Fault: the relay daemon is killed in the middle of a paced rundown. The application
# and its JIT threads go on; the loss is reported (jitprov-verify: exit 3 and the lost
# connection; the session daemon: the session is no longer active); a new relay daemon
# and a new session give a complete rundown.
#   live_relay.sh SIM_BINARY VERIFY_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: live_relay.sh SIM_BINARY VERIFY_BINARY}
VERIFY=${2:?usage: live_relay.sh SIM_BINARY VERIFY_BINARY}
require_lttng
require_cmd ip lttng-relayd
enter_private_namespace "$@"
WORK=$(work_dir jitprov-it)

COLL=jpcoll$$ APP=jpapp$$ COLL_IP=10.213.7.1 APP_IP=10.213.7.2
cleanup_net() {
  cleanup_pids
  ip netns del "$COLL" 2>/dev/null
  ip netns del "$APP" 2>/dev/null
  return 0
}
trap cleanup_net EXIT
ip netns add "$COLL" && ip netns add "$APP" || fail "ip netns add"
ip link add "jpc$$" type veth peer name "jpa$$" || fail "ip link add veth"
ip link set "jpc$$" netns "$COLL" && ip link set "jpa$$" netns "$APP" || fail "move veth ends"
ip -n "$COLL" addr add "$COLL_IP/24" dev "jpc$$" && ip -n "$COLL" link set "jpc$$" up && ip -n "$COLL" link set lo up ||
  fail "collector address"
ip -n "$APP" addr add "$APP_IP/24" dev "jpa$$" && ip -n "$APP" link set "jpa$$" up && ip -n "$APP" link set lo up ||
  fail "application address"
# The collector's namespace does not reach anything else: no route out.
ip -n "$COLL" route | grep default >/dev/null && fail "the collector namespace has a default route"

# Starts a relay daemon in the collector, listening on its address only; sets RELAY_PID.
start_relay() {
  ip netns exec "$COLL" lttng-relayd -o "$WORK/relay$1" -C "tcp://$COLL_IP:5342" -D "tcp://$COLL_IP:5343" \
    -L "tcp://$COLL_IP:5344" 2>"$WORK/relayd$1.err" &
  RELAY_PID=$!
  track_pid "$RELAY_PID"
  for _ in $(seq 100); do
    ip netns exec "$COLL" ss -ltn 2>/dev/null | grep "$COLL_IP:5344" >/dev/null && return 0
    kill -0 "$RELAY_PID" 2>/dev/null || { cat "$WORK/relayd$1.err" >&2; fail "lttng-relayd exited"; }
    sleep 0.1
  done
  fail "lttng-relayd does not listen"
}

# The documented live set-up (docs/tracing.md "Live, to a collector").
setup_live_session() {
  CREATE_OPTS="--live=100000 --set-url=net://$COLL_IP" setup_session "$1" unused
}

# jitprov-verify on the collector, following session $1; output in $WORK/$1.*
follow() {
  ip netns exec "$COLL" "$VERIFY" --json --timeout 240 "net://$COLL_IP/host/$(hostname)/$1" \
    >"$WORK/$1.json" 2>"$WORK/$1.progress" &
  FOLLOW_PID=$!
  track_pid "$FOLLOW_PID"
}

start_relay 1
ip netns exec "$APP" timeout 5 bash -c "exec 3<>/dev/tcp/$COLL_IP/5342" ||
  fail "the application namespace does not reach the collector's relay daemon"
start_sessiond ip netns exec "$APP"

# The application, in its own namespace.
# Paced (60 000 versions/s): a rundown of 200 000 methods takes seconds, time to kill
# the relay daemon in the middle of one.
SIM_NETNS=$APP start_sim --methods 200000 --jit-threads 2 --rundown-trigger session --rundown-rate 60000
# --- 1: a lossless 200k-method rundown, streamed live and verified on the collector ---
setup_live_session live1
follow live1
sleep 1  # attached before the streams exist: it reads them from their beginning
lttng start live1 >/dev/null || fail "lttng start live1"
wait_rundowns 1 120
# The progress line comes while the session still records.
for _ in $(seq 100); do grep -q "rundown 1 ended" "$WORK/live1.progress" && break; sleep 0.2; done
grep -q "rundown 1 ended" "$WORK/live1.progress" || { cat "$WORK/live1.progress"; fail "no live report of the rundown"; }
lttng destroy live1 >/dev/null || fail "lttng destroy live1"
wait "$FOLLOW_PID"; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/live1.progress" "$WORK/live1.json"; fail "jitprov-verify (live) exit $rc"; }
$PY - "$WORK/live1.json" <<'PY' || fail "live verification"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sessions"][0]; p = s["processes"][0]
rs = p["rundowns"]
assert d["exit"] == 0 and len(rs) == 1, (d["exit"], len(rs))
r = rs[0]
assert r["method_records"] == r["rundown_end"]["versions"] >= 200000, r["method_records"]
assert s["discarded_events"] == 0 and s["discarded_packets"] == 0
print("live: %d method records, G2 %s, G3+ %s (%d checked), G4 %s" % (
    r["method_records"], r["G2"]["status"], r["G3"]["status"], r["G3"]["versions_checked"], r["G4"]["status"]))
PY
pass "a 200k-method rundown streamed live to the collector and verified there: $(cat "$WORK/live1.progress")"

# --- 2: the relay daemon dies in the middle of a rundown ---
published='sum(d["jit"]["compiled"].values())'
jit_before=$(sim_stat "$published")
rundowns_before=$(sim_stat 'len(d["rundowns"])')
setup_live_session live2
follow live2
sleep 1
lttng start live2 >/dev/null || fail "lttng start live2"
# Paced: the rundown takes over 3 s; kill the relay 1.5 s into it.
sleep 1.5
[ "$(sim_stat 'len(d["rundowns"])')" -eq "$rundowns_before" ] || fail "the rundown ended before the relay was killed"
kill -9 "$RELAY_PID"
wait "$RELAY_PID" 2>/dev/null
# The application goes on: its JIT threads publish code during the next 3 s.
sleep 3
jit_after=$(sim_stat "$published")
[ "$jit_after" -gt "$jit_before" ] || fail "the JIT threads stopped after the relay daemon died ($jit_before -> $jit_after)"
kill -0 "$SIM_PID" || fail "jitprov-sim died with the relay daemon"
# The loss is reported, not silent: the follower ends with exit 3 and says why.
wait "$FOLLOW_PID"; rc=$?
[ $rc -eq 3 ] || { cat "$WORK/live2.progress" "$WORK/live2.json"; fail "jitprov-verify after the relay died: exit $rc, not 3"; }
lost=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["sessions"][0].get("live_connection_lost",""))' "$WORK/live2.json")
[ -n "$lost" ] || fail "the lost connection is not in the report"
lttng destroy live2 >/dev/null 2>&1
pass "relay daemon killed mid-rundown: the JIT threads went on ($jit_before -> $jit_after publications), jitprov-verify exit 3: $lost"

# --- 3: a new relay daemon and a new session: a complete rundown ---
start_relay 2
setup_live_session live3
follow live3
sleep 1
lttng start live3 >/dev/null || fail "lttng start live3"
n=$(sim_stat 'len(d["rundowns"])')
wait_rundowns $((n + 1)) 120
for _ in $(seq 100); do grep -q "ended" "$WORK/live3.progress" && break; sleep 0.2; done
lttng destroy live3 >/dev/null || fail "lttng destroy live3"
wait "$FOLLOW_PID"; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/live3.progress" "$WORK/live3.json"; fail "jitprov-verify (live, new relay) exit $rc"; }
pass "a new relay daemon and session: complete again: $(tail -1 "$WORK/live3.progress")"
kill "$SIM_PID"; wait "$SIM_PID" || fail "jitprov-sim exit status $?"
rm -rf "$WORK"
