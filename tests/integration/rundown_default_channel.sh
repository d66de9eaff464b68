#!/usr/bin/env bash
# The short form a new user types, against a 1M-method application:
#   lttng create; lttng enable-event -u 'jitprov_*'; lttng start
# babeltrace2 shows the rundown with nothing discarded and as many method records as
# rundown_end.versions (the sim paces its rundown, --rundown-rate, to what lttng's
# default non-blocking channel drains).    rundown_default_channel.sh SIM_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: rundown_default_channel.sh SIM_BINARY}
require_lttng
enter_private_namespace "$@"
WORK=$(mktemp -d /tmp/jitprov-it.XXXXXX)

start_sessiond
start_sim --methods 1000000 --rundown-trigger session
lttng create short --output="$WORK/trace" >/dev/null || fail "lttng create"
lttng enable-event -u 'jitprov_*' >/dev/null || fail "lttng enable-event"
lttng start >/dev/null || fail "lttng start"
wait_rundowns 1 60
lttng stop >/dev/null && lttng destroy >/dev/null
babeltrace2 "$WORK/trace" >"$WORK/text" 2>"$WORK/warnings" || fail "babeltrace2 could not read the trace"
if grep -qi 'discarded' "$WORK/warnings"; then head -3 "$WORK/warnings"; fail "events were discarded"; fi
records=$(grep -c 'jitprov_rundown:method:' "$WORK/text")
versions=$(grep 'jitprov_rundown:rundown_end:' "$WORK/text" | sed -n 's/.*versions = \([0-9]*\).*/\1/p')
[ -n "$versions" ] || fail "no rundown_end in the trace"
[ "$records" -eq "$versions" ] || fail "$records method records, rundown_end.versions = $versions"
[ "$records" -ge 1000000 ] || fail "only $records method records for 1M methods"
pass "short form: $records method records = rundown_end.versions, nothing discarded"
kill "$SIM_PID"; wait "$SIM_PID" || fail "jitprov-sim exit status $?"
rm -rf "$WORK"
