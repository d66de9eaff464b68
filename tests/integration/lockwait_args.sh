#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jitprov-lockwait reads each operand form a USDT argument can take: a register (the
# library's optimized build), a memory operand and a constant (jitprov-usdt-argforms,
# built without optimization). The target makes 2000 JIT paths at site 3 (osr_publish),
# tier 2, with known durations, rundown states and blame (usdt_argforms.cc); the tool's
# JSON report, printed when the target exits, must give exactly their counts, totals and
# maxima, and count the unmeasured ones apart; its --waits file must hold exactly the
# measured acquisitions that waited (blocked_by != 0), one line each, with their values.
# Stopped by SIGINT while the target waits on, its waits file holds the waits its final
# figures count.
#   lockwait_args.sh ARGFORMS_BINARY LOCKWAIT_BINARY
. "$(dirname "$0")/lib.sh"
PROG=${1:?usage: lockwait_args.sh ARGFORMS LOCKWAIT}
LW=${2:?usage: lockwait_args.sh ARGFORMS LOCKWAIT}
PROG=$(realpath "$PROG") LW=$(realpath "$LW")
require_root
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel without BTF"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
WORK=$(work_dir jitprov-it)
trap 'cleanup_pids; rm -rf "$WORK"' EXIT

readelf -n "$PROG" >"$WORK/notes" || fail "readelf -n $PROG"
grep -q 'Arguments: -4@-[0-9]*(%rbp)' "$WORK/notes" || fail "no memory operand among the target's arguments: $(grep Arguments "$WORK/notes")"
grep -q 'Arguments: .*-4@\$2' "$WORK/notes" || fail "no constant operand among the target's arguments: $(grep Arguments "$WORK/notes")"

cat >"$WORK/check.py" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = 2000
measured = [i for i in range(n) if i % 100 != 99]
def want(state, f):  # count and total of f(i) over the measured paths in a rundown state
    xs = [f(i) for i in measured if (i & 1) == (state == "rundown")]
    return len(xs), sum(xs), max(xs)
bad = []
for name, s in r["sites"].items():
    for state in ("outside", "rundown"):
        for kind, f in (("wait", lambda i: i), ("hold", lambda i: 1000 + i)):
            h = s[state][kind]
            got = (h["count"], h["total_ns"], h["max_ns"])
            exp = want(state, f) if name == "osr_publish" else (0, 0, 0)
            if got != exp: bad.append(f"site {name} {state} {kind} (count, total, max) {got}, expected {exp}")
    by = s["blocked_by"]
    exp = {}
    if name == "osr_publish":
        for holder, rest in (("rundown", 1), ("unknown", 2)):  # i % 3 == 0: no wait, no blame
            xs = [i for i in measured if i % 3 == rest]
            exp[holder] = {"count": len(xs), "total_ns": sum(xs), "max_ns": max(xs)}
    if by != exp: bad.append(f"site {name} blocked_by {by}, expected {exp}")
for tier, h in r["jit_path"].items():
    for state in ("outside", "rundown"):
        got = (h[state]["count"], h[state]["total_ns"], h[state]["max_ns"])
        exp = want(state, lambda i: 5000 + i) if tier == "tier1_osr" else (0, 0, 0)
        if got != exp: bad.append(f"JIT path {tier} {state} (count, total, max) {got}, expected {exp}")
if r["drops"] != {"bad_argument": 0, "wait_records": 0}: bad.append(f"drops {r['drops']}")
import csv
rows = list(csv.DictReader(open(sys.argv[2])))
got = sorted((int(w["wait_ns"]), int(w["hold_ns"]), w["site"], w["blocked_by"], int(w["in_rundown"])) for w in rows)
exp = sorted((i, 1000 + i, "osr_publish", "rundown" if i % 3 == 1 else "unknown", i & 1) for i in measured if i % 3)
if got != exp: bad.append(f"waits file: {len(got)} records, expected {len(exp)}; first differences "
                          f"{[x for x in got if x not in exp][:3]} / {[x for x in exp if x not in got][:3]}")
if len({w["tid"] for w in rows}) != 1 or any(int(w["begin_ns"]) <= 0 for w in rows): bad.append("waits file: tid or begin_ns")
if r["unmeasured"] != {"lock": n // 100, "jit": n // 100}: bad.append(f"unmeasured {r['unmeasured']}, expected {n // 100} each")
for b in bad: print(b)
sys.exit(1 if bad else 0)
PY

# run_case NAME [WRAPPER...]: the target and the tool, both under WRAPPER (a new pid
# namespace), checked exactly.
run_case() {
  local name=$1
  shift
  rm -f "$WORK/prog.out" "$WORK/lw.json" "$WORK/lw.err" "$WORK/waits.csv"
  "$@" bash -c '
    if [ -n "$5" ]; then  # the target alone in a pid namespace of its own: its pid out here
      unshare --pid --fork --mount-proc "$1" 2000 >"$2/prog.out" 2>&1 & outer=$!
      prog=
      for _ in $(seq 200); do
        prog=$(cat /proc/$outer/task/$outer/children 2>/dev/null | tr -d " ")
        [ -n "$prog" ] && break
        sleep 0.05
      done
    else
      "$1" 2000 >"$2/prog.out" 2>&1 & prog=$!
      outer=$prog
    fi
    for _ in $(seq 200); do grep -q waiting "$2/prog.out" && break; sleep 0.05; done
    [ -n "$4" ] && rm -f "$1"  # the target'"'"'s file removed while it runs (a redeploy)
    "$3" -p $prog --json --waits "$2/waits.csv" >"$2/lw.json" 2>"$2/lw.err" & lw=$!
    for _ in $(seq 200); do grep -q attached "$2/lw.err" && break; sleep 0.05; done
    grep -q attached "$2/lw.err" || { echo "jitprov-lockwait did not attach: $(cat "$2/lw.err")"; kill $prog; exit 1; }
    kill -USR1 $prog
    wait $outer || { echo "target: $(cat "$2/prog.out")"; exit 1; }
    wait $lw; rc=$?
    [ $rc -eq 0 ] || { echo "jitprov-lockwait exit $rc: $(cat "$2/lw.err")"; exit 1; }
  ' run_case "$PROG_RUN" "$WORK" "$LW" "${DELETE:-}" "${TARGET_NS:-}" >"$WORK/case.out" 2>&1 ||
    fail "$name: $(cat "$WORK/case.out")"
  python3 "$WORK/check.py" "$WORK/lw.json" "$WORK/waits.csv" || fail "$name: jitprov-lockwait's report or waits file is wrong (above)"
}
PROG_RUN=$PROG
run_case "the target as it is"
# The tool in a container's pid namespace, the target beside it: pids as the tool sees
# them (was: every hit filtered out by the host's pid, a report of zeros, exit 0).
PROG_RUN=$PROG run_case "in a new pid namespace" unshare --pid --fork --mount-proc
# The target alone in a pid namespace of its own (a container), the tool outside it, given
# the target's pid as the tool sees it (was: bpf_get_ns_current_pid_tgid, which numbers a
# task only in its own namespace, failed on every hit: a report of zeros, exit 0).
PROG_RUN=$PROG TARGET_NS=1 run_case "the target in a pid namespace of its own"
# The target's file removed on disk while it runs: found by /proc/PID/exe (was: "open
# binary ... (deleted)").
cp "$PROG" "$WORK/argforms-copy" || fail "copy $PROG"
PROG_RUN=$WORK/argforms-copy DELETE=1 run_case "its file removed on disk"

# Stopped (SIGINT) in the middle of the target's waits: the waits file holds the waits
# the final figures count, no more and no fewer (records the ring buffer dropped counted
# apart). The probes ran on between the last read of the maps and the file's last drain:
# the file held waits the figures did not.
"$PROG" 50000000 >"$WORK/long.out" 2>&1 &
long=$!
track_pid "$long"
for _ in $(seq 200); do grep -q waiting "$WORK/long.out" && break; sleep 0.05; done
"$LW" -p "$long" --json --waits "$WORK/long.csv" >"$WORK/long.json" 2>"$WORK/long.err" &
lw=$!
track_pid "$lw"
for _ in $(seq 200); do grep -q attached "$WORK/long.err" && break; sleep 0.05; done
kill -USR1 "$long"
sleep 1
kill -INT "$lw"
wait "$lw"
rc=$?
kill "$long" 2>/dev/null
wait "$long" 2>/dev/null
[ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "jitprov-lockwait stopped mid-stream: exit $rc: $(cat "$WORK/long.err")"
counts=$(python3 - "$WORK/long.json" "$WORK/long.csv" <<'PY'
import csv, json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
counted = sum(h["count"] for h in r["sites"]["osr_publish"]["blocked_by"].values())
rows = sum(1 for _ in csv.DictReader(open(sys.argv[2])))
dropped = r["drops"]["wait_records"]
print("%d waits counted, %d in the file, %d dropped" % (counted, rows, dropped))
sys.exit(0 if counted > 0 and rows + dropped == counted else 1)
PY
) || fail "jitprov-lockwait stopped mid-stream: the waits file is not the figures': $counts"
pass "stopped mid-stream by SIGINT: $counts (exit $rc)"

# Arguments that would have traced nothing, or spun.
"$PROG" 0 >"$WORK/idle.out" 2>&1 & idle=$!
python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(30,)).start(); time.sleep(30)' & threaded=$!
tid=
for _ in $(seq 100); do
  tid=$(ls /proc/$threaded/task 2>/dev/null | grep -vx "$threaded" | head -1)
  [ -n "$tid" ] && break
  sleep 0.05
done
[ -n "$tid" ] || fail "no second thread in python3 $threaded"
for a in "-i 0.0005:2:at least 0.001" "-c 3:2:give --interval"; do
  IFS=: read -r opt want text <<<"$a"
  # shellcheck disable=SC2086
  "$LW" -p $idle $opt >/dev/null 2>"$WORK/arg.err"; rc=$?
  [ $rc -eq "$want" ] && grep -q "$text" "$WORK/arg.err" || fail "jitprov-lockwait $opt: exit $rc: $(cat "$WORK/arg.err")"
done
"$LW" -p "$tid" >/dev/null 2>"$WORK/arg.err"; rc=$?
[ $rc -eq 1 ] && grep -q "is a thread of process $threaded: give -p $threaded" "$WORK/arg.err" ||
  fail "jitprov-lockwait -p THREAD: exit $rc: $(cat "$WORK/arg.err")"
LIB=$(realpath "$(dirname "$LW")/../../runtime/libjitprov.so.1")
# -p PID -b FILE where PID does not map FILE: refused (was: a report of zeros, exit 0).
"$LW" -p "$idle" -b "$LIB" >/dev/null 2>"$WORK/arg.err"; rc=$?
[ $rc -eq 1 ] && grep -q "pid $idle does not map $LIB (neither its executable nor a file it maps is that one)" "$WORK/arg.err" ||
  fail "jitprov-lockwait -p $idle -b $LIB: exit $rc: $(cat "$WORK/arg.err")"
# --tree PID of no process: refused (was: accepted, a report of zeros).
true & gone=$!
wait "$gone"
"$LW" -b "$LIB" --tree "$gone" >/dev/null 2>"$WORK/arg.err"; rc=$?
[ $rc -eq 1 ] && grep -q "^jitprov-lockwait: --tree $gone: No such process$" "$WORK/arg.err" ||
  fail "jitprov-lockwait --tree $gone (gone): exit $rc: $(cat "$WORK/arg.err")"
# --tree PID: once PID exits nothing descends from it, and the tool ends with its report
# (was: on until Ctrl-C; here, until timeout's 15 s).
sleep 1 &
root=$!
timeout 15 "$LW" -b "$LIB" --tree "$root" --json >"$WORK/tree.json" 2>"$WORK/arg.err"
rc=$?
[ $rc -eq 0 ] && python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); sys.exit(0 if r["final"] and r["target_exited"] else 1)' "$WORK/tree.json" ||
  fail "jitprov-lockwait --tree $root, which exits after 1 s: exit $rc: $(cat "$WORK/arg.err" "$WORK/tree.json")"
wait "$root"
# A bare -b NAME is the file in the current directory, attached by that path (was: checked
# there, then looked up by libbpf in LD_LIBRARY_PATH and the system's directories).
(cd "$(dirname "$PROG")" && "$LW" -p "$idle" -b "$(basename "$PROG")" -i 0.2 -c 1 >/dev/null 2>"$WORK/arg.err") ||
  fail "jitprov-lockwait -b $(basename "$PROG") from its directory: $(cat "$WORK/arg.err")"
# A report that cannot be written: exit 1, said (was: exit 0 on a full disk; killed by
# SIGPIPE, 141, on a closed pipe, the waits file lost with it).
"$LW" -p "$idle" -i 0.2 -c 2 --json >/dev/full 2>"$WORK/arg.err"; rc=$?
[ $rc -eq 1 ] && grep -q "the report could not be written to stdout" "$WORK/arg.err" ||
  fail "jitprov-lockwait >/dev/full: exit $rc: $(cat "$WORK/arg.err")"
"$LW" -p "$idle" -i 0.2 -c 50 --json --waits "$WORK/pipe-waits.csv" 2>"$WORK/arg.err" | head -c 1 >/dev/null
rc=${PIPESTATUS[0]}
[ $rc -eq 1 ] && [ -s "$WORK/pipe-waits.csv" ] && grep -q "the report could not be written to stdout" "$WORK/arg.err" ||
  fail "jitprov-lockwait | head -c 1: exit $rc, waits $(ls -la "$WORK/pipe-waits.csv" 2>&1): $(cat "$WORK/arg.err")"
# A waits file that cannot be written (a file system of 16 KiB): said when it happens, the
# ring buffer still drained and every record counted, the file removed, exit 1 (was: the
# error at the end only, and the tool polling at 100 % CPU from the failed write on).
mkdir -p "$WORK/tiny" && mount -t tmpfs -o size=16k none "$WORK/tiny" || fail "mount a small tmpfs"
trap 'cleanup_pids; umount "$WORK/tiny" 2>/dev/null; rm -rf "$WORK"' EXIT
"$PROG" 2000 >"$WORK/full.out" 2>&1 & full=$!
for _ in $(seq 200); do grep -q waiting "$WORK/full.out" && break; sleep 0.05; done
"$LW" -p "$full" --json --waits "$WORK/tiny/w.csv" >"$WORK/full.json" 2>"$WORK/full.err" & lw=$!
for _ in $(seq 200); do grep -q attached "$WORK/full.err" && break; sleep 0.05; done
kill -USR1 "$full"
wait "$full" || fail "the target of the full waits file: $(cat "$WORK/full.out")"
wait "$lw"; rc=$?
said=$(grep -c "the waits from here on are not written" "$WORK/full.err")
counts=$(sed -n 's/.*(\([0-9]*\) waits written before it, \([0-9]*\) not written; the file removed)$/\1 \2/p' "$WORK/full.err")
[ $rc -eq 1 ] && [ "$said" -eq 1 ] && [ -n "$counts" ] && [ $((${counts% *} + ${counts#* })) -eq 1320 ] &&
  [ -z "$(ls -A "$WORK/tiny")" ] ||
  fail "jitprov-lockwait --waits on a full file system: exit $rc, said $said, counts '$counts', left $(ls -A "$WORK/tiny"): $(cat "$WORK/full.err")"
umount "$WORK/tiny"
kill $threaded 2>/dev/null
kill $idle 2>/dev/null
wait $idle $threaded 2>/dev/null
echo "ok: register, memory and constant operands read right (2000 paths at osr_publish, tier tier1_osr: counts, totals, maxima, rundown state, blame on the rundown and on an unknown holder, 20 unmeasured of each; every wait in --waits), as they are, from a new pid namespace, on a target in a pid namespace of its own and with the target's file removed; -i below 1 ms, -c without -i, a thread's id and a file the target does not map refused; a bare -b NAME; --tree ends with its root; stdout full or closed: exit 1; a full waits file: said, drained, counted"
