#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jitprov-verify on hostile or unreadable input answers at once, with one line on stderr
# naming the path and exit 2: never a hang, unbounded memory or a verdict on part of the
# input. From a good trace of the sim (a real session), copies where
#   - `metadata` is a symlink to /dev/zero, an 8 GiB sparse file, a FIFO or a socket;
#   - a stream file, or a stream's index, is a FIFO (babeltrace2 would wait in open);
#   - a stream's index is 8 GiB (sparse): the verdict as on the good trace;
#   - one of two sessions in a directory is unreadable by the user (mode 000, the verifier
#     run as nobody), and such a directory is given directly.
# Each run under `timeout 20` (a hang fails the test) and 4 GiB of address space.
#   verify_hostile.sh SIM_BINARY VERIFY_BINARY
. "$(dirname "$0")/lib.sh"
SIM=${1:?usage: verify_hostile.sh SIM VERIFY}
VERIFY=${2:?usage: verify_hostile.sh SIM VERIFY}
require_lttng
require_cmd setpriv mkfifo truncate
enter_private_namespace "$@"
WORK=$(work_dir jitprov-it)
start_sessiond

# A good trace: one rundown of a small sim.
setup_session good "$WORK/good"
lttng start good >/dev/null || fail "lttng start"
start_sim --methods 2000 --rundown-trigger signal --unload-rate 0
kill -USR2 "$SIM_PID"
wait_rundowns 1 30
kill "$SIM_PID"; wait "$SIM_PID" || fail "sim exit status $?"
lttng stop good >/dev/null && lttng destroy good >/dev/null || fail "lttng stop/destroy"

# Copies readable by nobody (for the cases run as that user), the verifier beside them.
H=$WORK/h
mkdir -p "$H/bin"
install -m 755 "$VERIFY" "$H/bin/jitprov-verify"
VERIFY=$H/bin/jitprov-verify
chmod 755 "$WORK"
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# copy NAME: a copy of the good trace at $H/NAME; sets META (its rundown trace's metadata)
# and TRACE (that trace's directory).
copy() {
  cp -r "$WORK/good" "$H/$1"
  chmod -R a+rX "$H/$1"
  META=$(find "$H/$1" -name metadata -path '*ust*' | sort | head -1)
  [ -n "$META" ] || fail "$1: no metadata in the copy"
  TRACE=$(dirname "$META")
}
# refused NAME PATTERN [PREFIX...]: jitprov-verify on $H/NAME (run through PREFIX, e.g.
# as nobody) exits 2 within 20 s, with one line on stderr matching PATTERN.
refused() {
  local name=$1 pattern=$2 rc out=$WORK/${1//\//_}; shift 2
  (ulimit -v 4194304; exec timeout 20 "$@" "$VERIFY" "$H/$name") >"$out.out" 2>"$out.err"; rc=$?
  [ $rc -ne 124 ] || fail "$name: jitprov-verify still running after 20 s"
  [ $rc -eq 2 ] || { cat "$out.out" "$out.err"; fail "$name: exit $rc, expected 2"; }
  [ "$(wc -l <"$out.err")" -eq 1 ] || fail "$name: not one line: $(cat "$out.err")"
  grep -qE "$pattern" "$out.err" || fail "$name: no '$pattern' in: $(cat "$out.err")"
  pass "$name: exit 2, $(cat "$out.err")"
}

copy ok
"${AS_NOBODY[@]}" "$VERIFY" "$H/ok" >"$WORK/ok.out" 2>&1 || { cat "$WORK/ok.out"; fail "the good trace, as nobody"; }
pass "the good trace verifies, as nobody too"

# A stream's index of 8 GiB (sparse): only its header and last entry are read (it was
# read whole: 8 GiB of memory, refused by the 4 GiB limit); a last entry that points at
# no packet is no index: the verdict stands, as on the good trace.
copy bigindex
IDX=$(find "$TRACE/index" -name '*.idx' | sort | head -1)
[ -n "$IDX" ] || fail "bigindex: no index in the copy"
truncate -s 8G "$IDX"
(ulimit -v 4194304; exec timeout 20 "$VERIFY" "$H/bigindex") >"$WORK/bigindex.out" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/bigindex.out"; fail "bigindex: exit $rc, expected 0"; }
pass "a stream index of 8 GiB: $(tail -1 "$WORK/bigindex.out")"

copy devzero
ln -sf /dev/zero "$META"
refused devzero "read trace $TRACE: metadata: not a regular file \(a character device\)"

copy sparse
truncate -s 8G "$META"
refused sparse "read trace $TRACE: metadata: 8589934592 bytes, more than the 256 MiB"

copy fifo
rm "$META" && mkfifo "$META"
refused fifo "read trace $TRACE: metadata: not a regular file \(a FIFO\)"

copy socket
rm "$META" && $PY -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$META"
refused socket "read trace $TRACE: metadata: not a regular file \(a socket\)"

copy streamfifo
stream=$(find "$TRACE" -maxdepth 1 -type f -name 'jitprov_rundown_*' | sort | head -1)
[ -n "$stream" ] || fail "no rundown stream file in $TRACE"
rm "$stream" && mkfifo "$stream"
refused streamfifo "read trace $TRACE: ${stream##*/}: not a regular file \(a FIFO\)"

copy indexfifo
index=$(find "$TRACE/index" -type f -name '*.idx' | sort | head -1)
[ -n "$index" ] || fail "no stream index in $TRACE/index"
rm "$index" && mkfifo "$index"
refused indexfifo "read trace $TRACE: index/${index##*/}: not a regular file \(a FIFO\)"

# Two sessions, one unreadable: an error naming it, never a verdict on the other alone.
mkdir "$H/two" && chmod 755 "$H/two"
cp -r "$WORK/good" "$H/two/a" && cp -r "$WORK/good" "$H/two/b" && chmod -R a+rX "$H/two"
"${AS_NOBODY[@]}" "$VERIFY" "$H/two" >"$WORK/two.out" 2>&1 || { cat "$WORK/two.out"; fail "two sessions, as nobody"; }
chmod 000 "$H/two/b"
refused two "read trace $H/two: $H/two/b: Permission denied" "${AS_NOBODY[@]}"
refused two/b "read trace $H/two/b: Permission denied" "${AS_NOBODY[@]}"
chmod 755 "$H/two/b"
rm -rf "$WORK"
