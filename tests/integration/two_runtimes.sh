#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two jitprov runtimes in one process traced together, and a third made after the first
# was destroyed (tests/integration/two_runtimes.c): they hand out the same ids, so the
# trace tells them apart only by the runtime instance every event carries. Checks:
# instances 1, 2, 3; jitprov-verify keys by process and instance and passes every
# rundown of each (1 for the first, 2 for the second and the third); the second
# reader's G2 too.
#   two_runtimes.sh HOST_BINARY VERIFY_BINARY
. "$(dirname "$0")/lib.sh"
HOST=${1:?usage: two_runtimes.sh HOST VERIFY}
VERIFY=${2:?usage: two_runtimes.sh HOST VERIFY}
require_lttng
enter_private_namespace "$@"
WORK=$(work_dir jitprov-two)

start_sessiond
setup_session two "$WORK/trace"
lttng start two >/dev/null || fail "lttng start"
"$HOST" "$WORK" 2>"$WORK/host.err" &
HOST_PID=$!
track_pid "$HOST_PID"
for _ in $(seq 300); do [ -f "$WORK/ready" ] && break; sleep 0.1; done
[ -f "$WORK/ready" ] || { cat "$WORK/host.err" >&2; fail "the host did not get its session rundowns"; }
touch "$WORK/go"
wait "$HOST_PID" || { cat "$WORK/host.err" >&2; fail "the host exited $?"; }
read -r ia ib ic <"$WORK/done"
[ "$ia $ib $ic" = "1 2 3" ] || fail "instances $ia $ib $ic, expected 1 2 3"
lttng stop two >/dev/null && lttng destroy two >/dev/null || fail "lttng stop/destroy"

"$VERIFY" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
[ $rc -eq 0 ] || { "$VERIFY" "$WORK/trace" >&2; fail "jitprov-verify exit $rc"; }
$PY - "$WORK/verify.json" <<'PY' || fail "the verifier's view of the three runtimes"
import json, sys
d = json.load(open(sys.argv[1]))
ps = d["sessions"][0]["processes"]
by = {p["runtime_instance"]: p for p in ps}
assert sorted(by) == [1, 2, 3] and len({p["vpid"] for p in ps}) == 1, [(p["vpid"], p.get("runtime_instance")) for p in ps]
want = {1: 1, 2: 2, 3: 2}  # each engine: its session rundown; the 2nd and 3rd: a run_now too
for inst, p in sorted(by.items()):
    rs = p["rundowns"]
    assert len(rs) == want[inst], (inst, len(rs))
    n = 201 if inst == 3 else 200  # the third: one method with overlong names more
    for r in rs:
        assert r["method_records"] == n and r["rundown_end"]["versions"] == n, (inst, r)
print("verify: one process, runtimes", sorted(by), "rundowns", [len(by[i]["rundowns"]) for i in sorted(by)],
      "200 records each (the third 201)")
PY
pass "three runtimes of one process, same ids, told apart by instance; every rundown verified"
# The overlong names, in each of the third runtime's rundowns: each cut to at most
# JITPROV_MAX_TRACE_STRING bytes on a UTF-8 boundary, each its own (not another's buffer).
PYTHONPATH="$(dirname "$0")" $PY - "$WORK/trace" <<'PY' || fail "the overlong names in the events"
import sys
import bt2read
want = ("a" * 4095, "b" * 4096, "c" * 4096)
got = {}
for n, f in bt2read.events(sys.argv[1], ["jitprov_rundown:method", "jitprov_runtime:method_load"]):
    if f["runtime_instance"] == 3 and len(f["name"]) > 1000:
        got.setdefault(n, []).append((f["namespace"], f["name"], f["signature"]))
# Two rundowns (the walk's record filled in place) and the publication's method_load
# (the record from a view).
counts = {n: len(g) for n, g in got.items()}
assert counts == {"jitprov_rundown:method": 2, "jitprov_runtime:method_load": 1}, counts
for g in sum(got.values(), []):
    assert g == want, "names cut to %s, expected %s" % ([(x[:1], len(x.encode())) for x in g],
                                                        [(x[:1], len(x)) for x in want])
print("overlong names: %s, each cut to 4095 / 4096 / 4096 bytes" % counts)
PY
pass "overlong names cut on a UTF-8 boundary, each in its own buffer"
PYTHONPATH="$(dirname "$0")" $PY "$(dirname "$0")/g2check.py" --min-records 1000 "$WORK/trace" ||
  fail "G2 by the second reader (g2check.py)"
pass "G2 by the second reader"
rm -rf "$WORK"
