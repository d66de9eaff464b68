#!/usr/bin/env bash
# jitprov-lockwait reads each operand form a USDT argument can take: a register (the
# library's optimized build), a memory operand and a constant (jitprov-usdt-argforms,
# built without optimization). The target makes 2000 JIT paths at site 3 (osr_publish),
# tier 2; the tool's JSON report, printed when the target exits, must count each of
# them under that site and tier, with no drops.
#   lockwait_args.sh ARGFORMS_BINARY LOCKWAIT_BINARY
. "$(dirname "$0")/lib.sh"
PROG=${1:?usage: lockwait_args.sh ARGFORMS LOCKWAIT}
LW=${2:?usage: lockwait_args.sh ARGFORMS LOCKWAIT}
require_root
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel without BTF"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
WORK=$(mktemp -d /tmp/jitprov-it.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

readelf -n "$PROG" >"$WORK/notes" || fail "readelf -n $PROG"
grep -q 'Arguments: -4@-[0-9]*(%rbp)' "$WORK/notes" || fail "no memory operand among the target's arguments: $(grep Arguments "$WORK/notes")"
grep -q 'Arguments: .*-4@\$2' "$WORK/notes" || fail "no constant operand among the target's arguments: $(grep Arguments "$WORK/notes")"

"$PROG" 2000 >"$WORK/prog.out" 2>&1 & prog=$!
for _ in $(seq 200); do grep -q waiting "$WORK/prog.out" && break; sleep 0.05; done
"$LW" -p $prog --json >"$WORK/lw.json" 2>"$WORK/lw.err"; rc=$?
wait $prog || fail "target: $(cat "$WORK/prog.out")"
[ $rc -eq 0 ] || fail "jitprov-lockwait exit $rc: $(cat "$WORK/lw.err")"
python3 - "$WORK/lw.json" <<'PY' || fail "jitprov-lockwait's report is wrong (above)"
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
bad = []
for name, s in r["sites"].items():
    want = 2000 if name == "osr_publish" else 0
    for kind in ("wait", "hold"):
        got = s["outside"][kind]["count"] + s["rundown"][kind]["count"]
        if got != want: bad.append(f"site {name} {kind} count {got}, expected {want}")
for tier, h in r["jit_path"].items():
    want = 2000 if tier == "tier1_osr" else 0
    got = h["outside"]["count"] + h["rundown"]["count"]
    if got != want: bad.append(f"JIT path {tier} count {got}, expected {want}")
if any(r["drops"].values()): bad.append(f"drops {r['drops']}")
for b in bad: print(b)
sys.exit(1 if bad else 0)
PY
echo "ok: register, memory and constant operands read right (2000 paths at osr_publish, tier tier1_osr, no drops)"
