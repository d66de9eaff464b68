#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The jitprov USDT probes are in the binary, bpftrace lists them, and attaching to them
# (which raises their semaphores) reports exactly the lock acquisitions a known
# workload makes, with the right site numbers.
#   usdt_probes.sh UNIT_TEST_BINARY
. "$(dirname "$0")/lib.sh"
bin=${1:?usage: usdt_probes.sh UNIT_TEST_BINARY}
require_root
require_cmd bpftrace
enter_private_namespace "$@"

listed=$(bpftrace -l "usdt:$bin:jitprov:*") || fail "bpftrace -l on $bin"
for p in lock_wait_begin lock_acquired lock_released jit_begin jit_end rundown_begin rundown_end; do
  grep -qx "usdt:$bin:jitprov:$p" <<<"$listed" || fail "probe jitprov:$p not listed by bpftrace -l:\n$listed"
done
pass "bpftrace -l lists the jitprov probes"

# Each site is a 5-byte NOP (0f 1f 44 00 00) on x86-64 unless built with usdt_site=nop1.
nop=${JITPROV_USDT_SITE:-nop5}
if [ "$(uname -m)" = x86_64 ] && [ "$nop" = nop5 ]; then
  n=0
  while read -r loc; do
    bytes=$(objdump -d --start-address=$((loc)) --stop-address=$((loc + 5)) "$bin" |
            sed -n 's/^ *[0-9a-f]*:\t\(\([0-9a-f][0-9a-f] \)*\).*/\1/p' | tr -d ' \n')
    [ "$bytes" = 0f1f440000 ] || fail "probe site at $loc is '$bytes', not the 5-byte NOP 0f1f440000"
    n=$((n + 1))
  done < <(readelf -n "$bin" | sed -n 's/.*Location: \(0x[0-9a-f]*\),.*/\1/p')
  [ "$n" -ge 7 ] || fail "only $n USDT sites found"
  pass "all $n USDT sites are 5-byte NOPs"
fi

# RuntimeTest.LockStatsCountEverySiteAndSplitByRundown takes the lock at: tier0
# publish x2, tier1 publish x2, activate x2, rejit x1, lookup x1; jit_end for tier 0
# and tier 1 once each. One thread: every acquisition is uncontended (contended 0, no
# lock_wait_begin, a wait of 0 ns, blocked_by 0). The tier1 path runs while the
# test marks a rundown active: its three acquisitions (tier1 publish x2, activate x1)
# and its jit_end say in_rundown 1. Every duration is measured (the unit tests keep lock
# statistics; the tracer was on jit_end before the paths began) and below 1 s.
out=$(timeout 120 bpftrace -e "
usdt:$bin:jitprov:lock_wait_begin { @wait_begin = count(); }
usdt:$bin:jitprov:lock_acquired { @acquired[arg0] = count(); @contended[arg2] = count(); }
usdt:$bin:jitprov:lock_released {
  @released[arg0] = count(); @blocked_by[arg5] = count();
  @in_rundown[arg0, arg4] = count(); @wait_max = max(arg2); @hold_ok[arg3 > 0 && arg3 < 1000000000] = count(); }
usdt:$bin:jitprov:jit_end { @jit_end[arg1] = count(); @jit_rundown[arg1, arg5] = count();
  @jit_ok[arg4 > 0 && arg4 < 1000000000] = count(); }" \
  -c "$bin --gtest_filter=RuntimeTest.LockStatsCountEverySiteAndSplitByRundown" 2>&1) || fail "bpftrace run: $out"
echo "$out" | grep '^@'
for want in '@acquired\[1\]: 2' '@acquired\[2\]: 2' '@acquired\[5\]: 2' '@acquired\[4\]: 1' '@acquired\[8\]: 1' \
            '@released\[1\]: 2' '@released\[5\]: 2' '@jit_end\[0\]: 1' '@jit_end\[1\]: 1' '@contended\[0\]: 8' \
            '@blocked_by\[0\]: 8' '@wait_max: 0' '@hold_ok\[1\]: 8' \
            '@in_rundown\[2, 1\]: 2' '@in_rundown\[5, 1\]: 1' '@in_rundown\[1, 0\]: 2' '@in_rundown\[5, 0\]: 1' \
            '@jit_rundown\[0, 0\]: 1' '@jit_rundown\[1, 1\]: 1' '@jit_ok\[1\]: 2'; do
  grep -qE "^$want\$" <<<"$out" || fail "expected '$want' in bpftrace output"
done
[ "$(grep -c '^@acquired' <<<"$out")" -eq 5 ] || fail "unexpected lock sites: $(grep '^@acquired' <<<"$out")"
grep -qE '^(@wait_begin: [1-9]|@contended\[1\]|@hold_ok\[0\]|@jit_ok\[0\])' <<<"$out" &&
  fail "an uncontended acquisition fired lock_wait_begin or contended=1, or a duration was unmeasured or absurd"
pass "attached probes count every acquisition by site, with the runtime's durations, rundown state and blame"

# jit_end's jit_ns belongs to its own path: of the interleaved paths A, B (begun after A
# on the same thread) and C (published by another thread), only B's is measured; A's
# and C's are all ones (-1 as a signed value), never a time taken for another path.
out=$(timeout 120 bpftrace -e "
usdt:$bin:jitprov:jit_end { @measured[(int64)arg4 >= 0] = count(); @unmeasured_is_all_ones[(int64)arg4 == -1] = count(); }" \
  -c "$bin --gtest_filter=RuntimeTest.InterleavedJitPathsPublishTheirOwnVersions" 2>&1) || fail "bpftrace run: $out"
echo "$out" | grep '^@'
for want in '@measured\[1\]: 1' '@measured\[0\]: 2' '@unmeasured_is_all_ones\[1\]: 2' '@unmeasured_is_all_ones\[0\]: 1'; do
  grep -qE "^$want\$" <<<"$out" || fail "interleaved JIT paths: expected '$want' in bpftrace output"
done
pass "jit_end: a path is timed from its own jit_begin only (interleaved and cross-thread paths unmeasured)"
