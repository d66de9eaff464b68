#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The short form a new user types, against a 1M-method application:
#   lttng create; lttng enable-event -u 'jitprov_*'; lttng add-context -u -t vpid; lttng start
# jitprov-verify reads the rundown with nothing discarded and as many method records as
# rundown_end.versions (the sim paces its rundown, --rundown-rate, to what lttng's
# default non-blocking channel drains), with a busy loop on the other core.    rundown_default_channel.sh SIM_BINARY VERIFY_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: rundown_default_channel.sh SIM_BINARY VERIFY_BINARY}
VERIFY=${2:?usage: rundown_default_channel.sh SIM_BINARY VERIFY_BINARY}
require_lttng
enter_private_namespace "$@"
WORK=$(mktemp -d /tmp/jitprov-it.XXXXXX)

start_sessiond
# The other core busy (a user's machine is rarely idle): the consumer daemon drains the
# channel with what is left, and the pacing must still hold.
( while :; do :; done ) &
track_pid $!
start_sim --methods 1000000 --rundown-trigger session ${SIM_RATE:+--rundown-rate $SIM_RATE}
lttng create short --output="$WORK/trace" >/dev/null || fail "lttng create"
lttng enable-event -u 'jitprov_*' >/dev/null || fail "lttng enable-event"
lttng add-context -u -t vpid >/dev/null || fail "lttng add-context"
lttng start >/dev/null || fail "lttng start"
wait_rundowns 1 60
lttng stop >/dev/null && lttng destroy >/dev/null
# jitprov-verify (libbabeltrace2): nothing discarded (else exit 3), method records equal
# rundown_end.versions (else exit 1); exit 4 is fine here: versions published before
# the session started have no method_load in it to check G2 against.
"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 4 ] || { head -c 3000 "$WORK/verify.json"; fail "jitprov-verify exit $rc"; }
read -r records versions < <($PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sessions"][0]
assert s["discarded_events"] == 0 and s["discarded_packets"] == 0, s
r = s["processes"][0]["rundowns"][0]
print(r["method_records"], r["rundown_end"]["versions"])' "$WORK/verify.json") || fail "verify report"
[ "$records" -eq "$versions" ] || fail "$records method records, rundown_end.versions = $versions"
[ "$records" -ge 1000000 ] || fail "only $records method records for 1M methods"
pass "short form: $records method records = rundown_end.versions, nothing discarded"
kill "$SIM_PID"; wait "$SIM_PID" || fail "jitprov-sim exit status $?"
rm -rf "$WORK"
