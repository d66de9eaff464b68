#!/usr/bin/env bash
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

# RuntimeTest.LockStatsCountEverySiteAndSplitByRundown takes the lock at: tier0
# publish x2, tier1 publish x2, activate x2, rejit x1, lookup x1; jit_end for tier 0
# and tier 1 once each.
out=$(timeout 120 bpftrace -e "
usdt:$bin:jitprov:lock_acquired { @acquired[arg0] = count(); }
usdt:$bin:jitprov:lock_released { @released[arg0] = count(); }
usdt:$bin:jitprov:jit_end { @jit_end[arg1] = count(); }" \
  -c "$bin --gtest_filter=RuntimeTest.LockStatsCountEverySiteAndSplitByRundown" 2>&1) || fail "bpftrace run: $out"
echo "$out" | grep '^@'
for want in '@acquired\[1\]: 2' '@acquired\[2\]: 2' '@acquired\[5\]: 2' '@acquired\[4\]: 1' '@acquired\[8\]: 1' \
            '@released\[1\]: 2' '@released\[5\]: 2' '@jit_end\[0\]: 1' '@jit_end\[1\]: 1'; do
  grep -qE "^$want\$" <<<"$out" || fail "expected '$want' in bpftrace output"
done
[ "$(grep -c '^@acquired' <<<"$out")" -eq 5 ] || fail "unexpected lock sites: $(grep '^@acquired' <<<"$out")"
pass "attached probes count every acquisition by site"
