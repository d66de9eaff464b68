#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jitprov-sim refuses options it cannot honour, at once, with one line and exit 2:
# NaN or overflowing durations and rates (at:1e11 used to fire at once, every:1e11 to run
# rundowns back to back), a compile time that would spin for 71 minutes, a negative seed
# or one past 2^64 - 1 (strtoull took it as 2^64 - 1);
# output files at a device, a symlink or in a missing directory.
#   sim_options.sh SIM_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: sim_options.sh SIM_BINARY}
WORK=$(work_dir jitprov-opt)
for args in "--duration nan" "--jit-delay nan" "--unload-rate nan" "--duration 1e300" \
            "--tier0-us 4294967295" "--tier1-us 2000000" "--seed -1" "--seed 18446744073709551616" \
            "--seed 99999999999999999999999" "--seed 0x10000000000000000" "--rundown-rate -3" \
            "--rundown-rate 18446744073709551616" \
            "--rundown-trigger at:1e11" "--rundown-trigger every:1e11" "--rundown-trigger every:inf" \
            "--jit-delay 1 --jit-after $WORK/gate"; do
  # shellcheck disable=SC2086
  timeout 10 "$SIM" --methods 10 $args >/dev/null 2>"$WORK/err"; rc=$?
  [ $rc -eq 2 ] || fail "jitprov-sim $args: exit $rc, not 2 ($(head -c 300 "$WORK/err"))"
  [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q '^jitprov-sim: ' "$WORK/err" ||
    fail "jitprov-sim $args: not one line: $(cat "$WORK/err")"
done
pass "bad durations, rates, compile times, seeds and trigger periods: one line, exit 2"
timeout 10 "$SIM" --methods 10 --seed 18446744073709551616 >/dev/null 2>"$WORK/err"
grep -q "'18446744073709551616' is more than 18446744073709551615" "$WORK/err" ||
  fail "--seed 2^64: no clear message: $(cat "$WORK/err")"
# The largest seed is still one.
timeout 20 "$SIM" --methods 100 --duration 0.2 --seed 18446744073709551615 2>"$WORK/err" ||
  fail "jitprov-sim --seed 18446744073709551615: $(cat "$WORK/err")"
pass "--seed 18446744073709551615 (2^64 - 1) runs"
timeout 20 "$SIM" --methods 1000 --duration 0.5 --rundown-trigger every:1e9 --seed 7 2>"$WORK/err" ||
  fail "jitprov-sim with good options: $(cat "$WORK/err")"
pass "good options run"

# --jit-after: the application waits for the file (no compile, no periodic rundown
# after ready until then),
# and --duration counts from its appearance (a tracer attaches first, however long that
# takes). An empty file name is refused.
timeout 10 "$SIM" --methods 10 --jit-after "" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--jit-after: an empty file name" "$WORK/err" ||
  fail "jitprov-sim --jit-after '': exit $rc: $(cat "$WORK/err")"
"$SIM" --methods 1000 --duration 0.3 --jit-after "$WORK/gate" --rundown-trigger every:0.1 \
  --ready-file "$WORK/gated.ready" --stats-json "$WORK/gated.json" 2>"$WORK/err" &
gated=$!
track_pid "$gated"
poll 30 test -s "$WORK/gated.ready" || fail "jitprov-sim --jit-after: not ready: $(cat "$WORK/err")"
sleep 1
kill -0 "$gated" 2>/dev/null || fail "jitprov-sim --jit-after ended before its gate opened: $(cat "$WORK/err")"
kill -USR1 "$gated"
poll 30 test -s "$WORK/gated.json" || fail "jitprov-sim --jit-after: no --stats-json on SIGUSR1"
compiled='import json, sys; j = json.load(open(sys.argv[1])); print(sum(j["jit"]["compiled"][t] - j["jit"]["compiled_before_ready"][t] for t in j["jit"]["compiled"]), len(j["rundowns"]))'
before=$($PY -c "$compiled" "$WORK/gated.json")
[ "$before" = "0 0" ] || fail "jitprov-sim --jit-after: compiles and rundowns before the gate opened: $before"
touch "$WORK/gate"
poll 30 exited "$gated" || fail "jitprov-sim --jit-after did not end 0.3 s after its gate opened"
wait "$gated" || fail "jitprov-sim --jit-after: exit $?: $(cat "$WORK/err")"
after=$($PY -c "$compiled" "$WORK/gated.json")
echo "--jit-after: (compiles, rundowns) after ready: $before before the gate, $after at the end"
[ "${after% *}" -gt 0 ] || fail "jitprov-sim --jit-after: no compiles after the gate opened"
pass "--jit-after: idle until the file exists, then --duration from there; an empty name refused"

# $JITPROV_PROVIDER naming another library, or nothing at all: said, not "loaded".
JITPROV_PROVIDER=$(ldd "$SIM" | awk '/libc\.so/ {print $3}') timeout 20 "$SIM" --methods 10 --duration 0.2 2>"$WORK/err" ||
  fail "jitprov-sim with JITPROV_PROVIDER=libc: $(cat "$WORK/err")"
grep -q 'not loaded, running untraced: $JITPROV_PROVIDER: .*libc.* is not the jitprov LTTng provider' "$WORK/err" ||
  fail "JITPROV_PROVIDER=libc: $(head -1 "$WORK/err")"
JITPROV_PROVIDER=/nonexistent/libjitprov-lttng.so timeout 20 "$SIM" --methods 10 --duration 0.2 2>"$WORK/err" ||
  fail "jitprov-sim with a missing JITPROV_PROVIDER: $(cat "$WORK/err")"
grep -q 'not loaded, running untraced: $JITPROV_PROVIDER: /nonexistent/libjitprov-lttng.so: cannot open' "$WORK/err" ||
  fail "JITPROV_PROVIDER=/nonexistent: $(head -1 "$WORK/err")"
pass "a wrong or missing \$JITPROV_PROVIDER is reported, with no fall-back"

# Output files: a device, a symlink or a missing directory is refused at start-up (one
# line, exit 2); a symlink planted at the old temporary's name is never followed.
echo victim >"$WORK/victim"
ln -s "$WORK/victim" "$WORK/link.json"
for args in "--stats-json /dev/full" "--stats-json $WORK/link.json" "--ready-file $WORK/nodir/ready" \
            "--stats-json $WORK"; do
  # shellcheck disable=SC2086
  timeout 10 "$SIM" --methods 10 --duration 5 $args >/dev/null 2>"$WORK/err"; rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "jitprov-sim $args: exit $rc: $(cat "$WORK/err")"
done
[ -c /dev/full ] || fail "/dev/full is no longer a device"
ln -s "$WORK/victim" "$WORK/stats.json.tmp"
timeout 20 "$SIM" --methods 10 --duration 0.2 --stats-json "$WORK/stats.json" --ready-file "$WORK/ready" 2>"$WORK/err" ||
  fail "jitprov-sim with output files: $(cat "$WORK/err")"
[ "$(cat "$WORK/victim")" = victim ] || fail "the planted symlink's target was overwritten"
[ -f "$WORK/stats.json" ] && [ ! -L "$WORK/stats.json" ] && $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/stats.json" ||
  fail "stats.json is not a regular JSON file"
[ "$(cat "$WORK/ready")" -gt 0 ] || fail "ready file"
pass "output files: devices, symlinks and missing directories refused at start-up; planted temporaries ignored"
# A --ready-file that cannot be written once the JIT threads run (its file system full):
# one line and exit 1, the threads stopped (it used to end in std::terminate, exit 134).
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
  mkdir "$WORK/full"
  unshare -m --propagation private -- sh -c 'mount -t tmpfs -o size=4k none "$1" &&
    dd if=/dev/zero of="$1/fill" bs=4k count=4 2>/dev/null; exec timeout 20 "$2" --methods 10 --duration 5 --ready-file "$1/ready"' \
    sh "$WORK/full" "$SIM" >/dev/null 2>"$WORK/err"; rc=$?
  [ $rc -eq 1 ] && grep -q "^jitprov-sim: write --ready-file $WORK/full/ready: " "$WORK/err" ||
    fail "--ready-file on a full file system: exit $rc: $(cat "$WORK/err")"
  pass "a --ready-file write failing after start: one line, exit 1, no abort"
else
  skip "a full file system for --ready-file needs root and unshare"
fi
rm -rf "$WORK"
