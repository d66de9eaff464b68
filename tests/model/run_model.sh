#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_model.sh MODEL_DIR [correct|plain-walk|FAULT]: the spin model of the publication
# protocol (registry.pml, docs/model.md). `correct` (walkComplete) and `plain-walk`
# (Runtime::walk) must verify exhaustively with no error; a protocol fault of
# meson_options.txt (relaxed-head, ...) must be refuted, and its counterexample is
# printed as a readable interleaving (trail.py). Exit 77 (skip) without spin or a C
# compiler. Bounds: W1OPS, W2OPS, LOOKUPS in the environment (defaults 1, 2, 1).
# MODEL_SHORTEST=1: a mutant's search breadth-first, so that its counterexample is the
# shortest (2-3x fewer steps; up to 20x the time and 1.8 GB: docs/model.md).
set -uo pipefail
dir=$(cd "$1" && pwd) || exit 2
what=${2:-correct}
command -v spin >/dev/null || { echo "spin not found (apt-get install spin): skipped"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || cc=gcc
command -v "$cc" >/dev/null || { echo "no C compiler for pan: skipped"; exit 77; }
w1=${W1OPS:-1} w2=${W2OPS:-2} lookups=${LOOKUPS:-1}

defs=(-DW1OPS="$w1" -DW2OPS="$w2" -DLOOKUPS="$lookups")
case $what in
  correct) mutant=0 ;;
  plain-walk) mutant=0; defs+=(-DPLAIN_WALK) ;;
  *)
    mutant=1
    macro=FAULT_$(tr 'a-z-' 'A-Z_' <<<"$what")
    grep -q "^#ifdef $macro\$" "$dir/faults.pml" || { echo "no $macro in faults.pml"; exit 1; }
    defs+=(-D"$macro")
    # code_size after code_start shows only to a reader that does not filter by
    # publish_seq: Runtime::walk (docs/model.md).
    [ "$what" = relaxed-code-start ] && defs+=(-DPLAIN_WALK)
    ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$dir/registry.pml" "$dir/faults.pml" "$work/" && cd "$work" || exit 1
spin "${defs[@]}" -a registry.pml >spin.log 2>&1 || { cat spin.log; exit 1; }
# Exhaustive (no bitstate): DFS with state compression for the correct model; DFS for
# a mutant too, stopping at its first counterexample (BFS with MODEL_SHORTEST=1, the
# shortest one). MEMLIM: stop, do not swap, past 3 GB.
if [ $mutant -eq 0 ]; then
  copts=(-DSAFETY -DCOLLAPSE -DMEMLIM=3000)
elif [ "${MODEL_SHORTEST:-0}" = 1 ]; then
  copts=(-DSAFETY -DBFS -DMEMLIM=3000)
else
  copts=(-DSAFETY -DMEMLIM=3000)
fi
"$cc" -O2 -w "${copts[@]}" -o pan pan.c || exit 1
./pan -m100000 >pan.log 2>&1
rc=$?
summary() {
  grep -E "^State-vector|states, stored|total actual memory|elapsed time" pan.log | sed 's/^ */  /'
}
echo "model: $what, bounds: writer 1 x $w1 ops, writer 2 x $w2 ops, 1 walker, 1 lookup x $lookups (${defs[*]})"
errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
if [ -z "$errors" ]; then
  echo "pan did not finish (exit $rc):"; tail -20 pan.log; exit 1
fi
summary
if grep -qE "max search depth too small|Search not completed|out of memory" pan.log && [ $mutant -eq 0 ]; then
  echo "FAIL: the search was not exhaustive:"; grep -E "max search depth|Search not completed|out of memory" pan.log
  exit 1
fi
if [ $mutant -eq 0 ]; then
  if [ "$errors" -ne 0 ]; then
    echo "FAIL: the protocol model has $errors error(s); its trail:"
    spin "${defs[@]}" -t -p registry.pml | python3 "$dir/trail.py" registry.pml
    exit 1
  fi
  echo "verified: no assertion violated in any interleaving"
  exit 0
fi
if [ "$errors" -eq 0 ]; then
  echo "FAIL: protocol fault $what is not refuted by the model"
  exit 1
fi
echo "refuted: $(grep -m1 'assertion violated' pan.log)"
echo "its counterexample ($([ "${MODEL_SHORTEST:-0}" = 1 ] && echo "shortest, BFS" || echo "first found, DFS; MODEL_SHORTEST=1 for the shortest")):"
spin "${defs[@]}" -t -p registry.pml | python3 "$dir/trail.py" registry.pml
exit 0
