#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rules_cited.sh SOURCE_ROOT: the model keeps step with the code. Fails when
# runtime/registry.h states a rule (P1, P2, ...) that tests/model/registry.pml does not
# cite in a step's comment, or when a protocol fault of meson_options.txt has no mutant
# in the model or no test in tests/model/meson.build.
set -uo pipefail
root=$1
h=$root/runtime/registry.h model=$root/tests/model/registry.pml build=$root/tests/model/meson.build
faults_pml=$root/tests/model/faults.pml
fail=0
rules=$(grep -oE '^//  P[0-9]+ ' "$h" | tr -d '/ ' | sort -u -V)
[ -n "$rules" ] || { echo "no rule found in $h"; exit 1; }
for r in $rules; do
  n=$(grep -cE "/\*.*\b$r\b.*\*/" "$model")
  if [ "$n" -eq 0 ]; then echo "registry.h states $r: no step of registry.pml cites it"; fail=1
  else echo "$r: cited by $n lines of the model"; fi
done
faults=$(sed -n "/option('protocol_fault'/,/description/{s/.*choices : \[\(.*\)\],*/\1/p}" "$root/meson_options.txt" |
  tr -d "' " | tr , '\n' | grep -vxE 'none|runtime')
[ -n "$faults" ] || { echo "no protocol_fault choices in meson_options.txt"; exit 1; }
for f in $faults; do
  macro=FAULT_$(tr 'a-z-' 'A-Z_' <<<"$f")
  grep -q "^#ifdef $macro\$" "$faults_pml" || { echo "fault $f: no $macro mutant in faults.pml"; fail=1; }
  grep -q "'$f'" "$build" || { echo "fault $f: no test in tests/model/meson.build"; fail=1; }
done
echo "faults with a mutant and a test: $(echo $faults | wc -w)"
exit $fail
