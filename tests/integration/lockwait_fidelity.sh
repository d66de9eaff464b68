#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jitprov-lockwait (eBPF, from outside) against jitprov-sim's own in-process lock
# statistics over the same window: the sim stays idle after it is ready until the tool
# has attached (--jit-after: the test opens the gate once the tool says "attached"), then
# runs JIT threads, unloads and one locked rundown every second until it exits; the tool
# reports when its target exits.
# The runtime measures each acquisition once and hands the same figures to its
# statistics and to the lock_released probe, so what the tool reports must be exactly
# what the process recorded: per site and rundown state, the wait and hold counts,
# totals, maxima and every log2 bucket (nothing lost, nothing mislabelled, no
# histogram arithmetic wrong). Also: exit codes and the one-line errors for a missing
# pid and a binary without probes, the uprobe path, and blame.
#   lockwait_fidelity.sh SIM_BINARY LOCKWAIT_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: lockwait_fidelity.sh SIM LOCKWAIT}
LW=${2:?usage: lockwait_fidelity.sh SIM LOCKWAIT}
require_root
require_cmd lttng lttng-sessiond
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel without BTF"
enter_private_namespace "$@"
WORK=$(work_dir jitprov-it)

# Errors first.
"$LW" -p 999999 >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'pid 999999: No such process' "$WORK/err" || fail "missing pid: rc $rc, $(cat "$WORK/err")"
"$LW" -b /bin/true >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 1 ] && grep -q '/bin/true: no jitprov USDT probes in it' "$WORK/err" || fail "binary without probes: rc $rc, $(cat "$WORK/err")"
"$LW" -b /etc/passwd >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 1 ] && grep -q '/etc/passwd: no jitprov USDT probes in it (not an ELF file' "$WORK/err" ||
  fail "not an ELF file: rc $rc, $(cat "$WORK/err")"
"$LW" -p 1 >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'pid 1: neither its executable nor a library it maps has the jitprov USDT probes' "$WORK/err" ||
  fail "a process without probes: rc $rc, $(cat "$WORK/err")"
"$LW" --interval -1 >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] || fail "bad option: rc $rc"
for args in "--interval 1e309" "--count -1" "--pid -1"; do
  # shellcheck disable=SC2086
  "$LW" $args >/dev/null 2>"$WORK/err"; rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && [ "$(wc -c <"$WORK/err")" -lt 120 ] ||
    fail "jitprov-lockwait $args: rc $rc, $(cat "$WORK/err")"
done
pass "errors: missing pid, binary without probes, a file that is not ELF, a process without probes, bad option"

# await_attach LOG: waits for jitprov-lockwait's (LW_PID's) "attached" in LOG: loading
# its programs can take seconds on a loaded machine. Fails at once if it exited.
await_attach() {
  poll 30 attached_or_gone "$1" || fail "jitprov-lockwait did not attach within 30 s: $(cat "$1")"
  grep -q attached "$1" || fail "jitprov-lockwait exited before it attached: $(cat "$1")"
}
attached_or_gone() { grep -q attached "$1" || exited "$LW_PID"; }
# attach_then_open LOG GATE: then opens the sim's --jit-after gate.
attach_then_open() {
  await_attach "$1"
  touch "$2"
}

start_sim --methods 100000 --jit-after "$WORK/gate1" --duration 6 --rundown locked --rundown-trigger every:1
"$LW" -p "$SIM_PID" --json >"$WORK/bpf.json" 2>"$WORK/lw.err" &
LW_PID=$!
track_pid "$LW_PID"
attach_then_open "$WORK/lw.err" "$WORK/gate1"
# 5-byte NOP sites: a kernel with the uprobe nop5 optimization (6.18 here) maps a
# [uprobes-trampoline] in the traced process once the probes are hit.
sleep 4
trampoline=no
grep -q '\[uprobes-trampoline\]' "/proc/$SIM_PID/maps" && trampoline=yes
kver=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
if [ "${JITPROV_USDT_SITE:-nop5}" = nop5 ] && [ "$(uname -m)" = x86_64 ] &&
   [ "$(echo "$kver" | awk '{print ($1 > 6 || ($1 == 6 && $2 >= 18))}')" = 1 ]; then
  [ $trampoline = yes ] || fail "kernel $(uname -r) did not optimize the 5-byte NOP probes (no [uprobes-trampoline])"
fi
echo "uprobe trampoline in the traced process: $trampoline (kernel $(uname -r))"
wait "$SIM_PID" || fail "jitprov-sim exit status $?"
wait "$LW_PID"; rc=$?
[ $rc -eq 0 ] || fail "jitprov-lockwait exit status $rc: $(cat "$WORK/lw.err")"
last=$($PY -c 'import json,sys; j=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(j["target_exited"], j["uprobe_path"])' "$WORK/bpf.json")
[ "${last% *}" = True ] || fail "jitprov-lockwait --json did not report its target's exit: $last"
path=${last#* }
[ "$path" = "$([ $trampoline = yes ] && echo trampoline || echo int3)" ] ||
  fail "jitprov-lockwait --json uprobe_path '$path', but the process maps say trampoline=$trampoline"
$PY - "$WORK/stats.json" "$WORK/bpf.json" <<'PY' || fail "in-process and BPF figures disagree"
import json, sys
sim = json.load(open(sys.argv[1]))["lock"]["sites"]
bpf = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
errors = []
for k, v in bpf["drops"].items():
    if v:
        errors.append("drop %s = %d" % (k, v))
total = 0
for site, s in sim.items():
    b = bpf["sites"][site]
    for state in ["outside", "rundown"]:
        for kind in ["wait", "hold"]:
            x, y = s[state][kind], b[state][kind]
            want = (x["count"], x["total_ns"], x["max_ns"], x["log2_buckets"])
            got = (y["count"], y["total_ns"], y["max_ns"], y["log2_buckets"])
            if want != got:
                errors.append("%s %s %s: in-process (count, total, max, buckets) %s, BPF %s" % (site, state, kind, want, got))
    cs = s["outside"]["wait"]["count"] + s["rundown"]["wait"]["count"]
    ms = max(s["outside"]["wait"]["max_ns"], s["rundown"]["wait"]["max_ns"])
    print("%-14s count %7d   max wait %10.1f us" % (site, cs, ms / 1e3))
    total += cs
# JIT paths: each one published after the tool attached is a jit_end hit, timed by the
# runtime for the tool (the sim was idle until then): per tier, the tool's count is
# exactly the sim's compiles after ready.
compiled = json.load(open(sys.argv[1]))["jit"]
for tier, h in bpf["jit_path"].items():
    want = compiled["compiled"][tier] - compiled["compiled_before_ready"][tier]
    got = h["outside"]["count"] + h["rundown"]["count"]
    print("JIT paths %-12s sim %6d bpf %6d (%d during a rundown)" % (tier, want, got, h["rundown"]["count"]))
    if got != want:
        errors.append("JIT paths at %s: the sim published %d, the tool counted %d" % (tier, want, got))
    if got and not (0 < h["outside"]["max_ns"] + h["rundown"]["max_ns"] < 30e9):
        errors.append("JIT paths at %s: implausible latency %s" % (tier, h))
if bpf["unmeasured"] != {"lock": 0, "jit": 0}:
    errors.append("unmeasured %s: the runtime keeps statistics and the sim was idle as the tool attached" % bpf["unmeasured"])
jit = ["tier0_publish", "tier1_publish", "osr_publish", "rejit", "activate", "unload"]
ms = max(sim[x]["rundown"]["wait"]["max_ns"] for x in jit)
print("JIT paths' longest wait during a rundown: %.1f us" % (ms / 1e3))
if ms < 1000000:
    errors.append("JIT paths never waited 1 ms behind a locked rundown (%d ns)" % ms)
if total < 1000:
    errors.append("only %d acquisitions: the window was empty" % total)
# Blame: the JIT paths' waits that began while the locked rundown held the lock.
jb = bpf["jit_blocked_by_rundown"]
print("JIT time blocked by the rundown: %.1f ms in %d waits (max %.1f us)" % (
    jb["total_ns"] / 1e6, jb["count"], jb["max_ns"] / 1e3))
if jb["total_ns"] < 1000000 or jb["max_ns"] > max(bpf["sites"][x]["rundown"]["wait"]["max_ns"] for x in jit):
    errors.append("JIT time blocked by the locked rundown: %s" % jb)
if sum(bpf["sites"][x]["blocked_by"].get("rundown", {}).get("count", 0) for x in jit) != jb["count"]:
    errors.append("jit_blocked_by_rundown is not the sum of the JIT sites' blocked_by.rundown")
if sim["rundown"]["rundown"]["wait"]["count"] < 5:
    errors.append("expected a locked rundown's acquisition every second")
for e in errors:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
pass "per site and rundown state, wait and hold: counts, totals, maxima and buckets equal to the process's own; JIT paths per tier equal to its compiles"

# Without in-process statistics the runtime times an acquisition only while a tracer
# is attached to lock_released: the tool still gets every one (the sim idle as it
# attached), each with its hold time.
start_sim --methods 100000 --jit-after "$WORK/gate2" --duration 3 --no-lock-stats
"$LW" -p "$SIM_PID" --json >"$WORK/bpf0.json" 2>"$WORK/lw0.err" &
LW_PID=$!
track_pid "$LW_PID"
attach_then_open "$WORK/lw0.err" "$WORK/gate2"
wait "$SIM_PID" || fail "jitprov-sim exit status $?"
wait "$LW_PID" || fail "jitprov-lockwait exit status $?: $(cat "$WORK/lw0.err")"
$PY - "$WORK/stats.json" "$WORK/bpf0.json" <<'PY' || fail "without in-process statistics"
import json, sys
sim = json.load(open(sys.argv[1]))
bpf = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
in_process = sum(s[st]["hold"]["count"] for s in sim["lock"]["sites"].values() for st in ("outside", "rundown"))
holds = [s[st]["hold"] for s in bpf["sites"].values() for st in ("outside", "rundown")]
count, total = sum(h["count"] for h in holds), sum(h["total_ns"] for h in holds)
print("no lock stats: in-process %d acquisitions recorded; the tool %d, holds %.1f ms in all, unmeasured %s" % (
    in_process, count, total / 1e6, bpf["unmeasured"]))
assert in_process == 0, in_process
assert count > 1000 and total > count * 10, (count, total)
assert bpf["unmeasured"]["lock"] == 0 and not any(bpf["drops"].values()), (bpf["unmeasured"], bpf["drops"])
PY
pass "without in-process statistics the runtime times for the tool: every acquisition measured"

# The same with lock-free rundowns: JIT time blocked by the rundown is 0, exactly, while
# the JIT paths take the lock during the rundowns (whether two JIT threads also meet
# there is up to the scheduler: 0 contended waits in one run of a loaded check).
start_sim --methods 100000 --jit-after "$WORK/gate3" --duration 4 --rundown lockfree --rundown-trigger every:0.5
"$LW" -p "$SIM_PID" --json >"$WORK/bpf2.json" 2>"$WORK/lw2.err" &
LW_PID=$!
track_pid "$LW_PID"
attach_then_open "$WORK/lw2.err" "$WORK/gate3"
wait "$SIM_PID" || fail "jitprov-sim exit status $?"
wait "$LW_PID" || fail "jitprov-lockwait exit status $?: $(cat "$WORK/lw2.err")"
$PY - "$WORK/stats.json" "$WORK/bpf2.json" <<'PY' || fail "lock-free rundowns: blame"
import json, sys
rundowns = len(json.load(open(sys.argv[1]))["rundowns"])
bpf = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
jit = ["tier0_publish", "tier1_publish", "osr_publish", "rejit", "activate", "unload"]
waits = sum(sum(b["count"] for b in bpf["sites"][x]["blocked_by"].values()) for x in jit)
during = sum(bpf["sites"][x]["rundown"]["wait"]["count"] for x in jit)
jb = bpf["jit_blocked_by_rundown"]
print("lock-free: %d rundowns, %d JIT acquisitions during them, %d contended JIT waits, JIT time blocked by "
      "the rundown %d ns" % (rundowns, during, waits, jb["total_ns"]))
assert rundowns >= 4 and during > 0, (rundowns, during)
assert jb == {"count": 0, "total_ns": 0, "max_ns": 0}, jb
PY
pass "JIT time blocked by the rundown: the locked one's measured, the lock-free one's 0"

# Attached in the middle of a rundown: the later rundowns' waits are still labelled
# "rundown". (When the BPF side kept the rundown state from rundown_begin/_end, one
# global counter went to -1 here and labelled everything "outside"; the runtime now
# says it in lock_released, and this keeps it so.)
# A rundown on SIGUSR2 paced at 20 000 versions/s (the sim paces a rundown that a
# session records): 110k versions, 5.5 s. The tool starts 1 s into it; its attach, some
# moment between its launch and its "attached", must lie inside that rundown by the
# sim's own begin and duration. Two more rundowns follow.
start_sessiond
setup_session paced "$WORK/paced"
lttng start paced >/dev/null || fail "lttng start"
start_sim --methods 100000 --rundown lockfree --rundown-trigger signal --rundown-rate 20000
now_ns() { $PY -c 'import time; print(time.monotonic_ns())'; }
kill -USR2 "$SIM_PID"
sleep 1
launched=$(now_ns)
"$LW" -p "$SIM_PID" --json >"$WORK/bpf3.json" 2>"$WORK/lw3.err" &
LW_PID=$!
track_pid "$LW_PID"
await_attach "$WORK/lw3.err"
attached=$(now_ns)
wait_rundowns 1 60
kill -USR2 "$SIM_PID"
wait_rundowns 2 60
kill -USR2 "$SIM_PID"
wait_rundowns 3 60
kill "$SIM_PID"; wait "$SIM_PID" || fail "jitprov-sim exit status $?"
wait "$LW_PID" || fail "jitprov-lockwait exit status $?: $(cat "$WORK/lw3.err")"
$PY - "$WORK/stats.json" "$WORK/bpf3.json" "$launched" "$attached" <<'PY' || fail "attached mid-rundown"
import json, sys
rundowns = json.load(open(sys.argv[1]))["rundowns"]
bpf = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
launched, attached = int(sys.argv[3]), int(sys.argv[4])
mid = [r for r in rundowns if r["begin_ns"] <= launched and attached <= r["begin_ns"] + r["duration_ns"]]
later = [r for r in rundowns if r["begin_ns"] > attached]
during = sum(s["rundown"]["wait"]["count"] for s in bpf["sites"].values())
print("attached %.2f-%.2f s into the first rundown (%.2f s long): %s; %d later rundowns; %d acquisitions labelled "
      "'rundown'" % ((launched - rundowns[0]["begin_ns"]) / 1e9, (attached - rundowns[0]["begin_ns"]) / 1e9,
                     rundowns[0]["duration_ns"] / 1e9, "inside it" if mid else "NOT inside one", len(later), during))
assert mid, "the attach was not inside a rundown: the case proves nothing this time"
assert len(later) >= 2 and during > 0, "waits during the later rundowns were not labelled 'rundown'"
PY
pass "attached mid-rundown: the later rundowns' waits are still labelled 'rundown'"
rm -rf "$WORK"
