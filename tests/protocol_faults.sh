#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shows that the stress test catches a broken publication protocol: builds the stress
# test once per fault (meson option protocol_fault) under a sanitizer and runs it three
# times. Every line should say FAIL. Not part of tools/check (one build per fault).
#   tests/protocol_faults.sh            # all faults
#   FAULTS="relaxed-head:thread" tests/protocol_faults.sh
set -u
cd "$(dirname "$0")/.."
dir=${BUILD_DIR:-build-fault}
for spec in ${FAULTS:-relaxed-head:thread link-before-init:thread relaxed-code-start:thread unload-reuse-without-grace:thread unload-reuse-without-grace:address retire-reuse-without-grace:thread retire-reuse-without-grace:address unlink-poison-next:thread no-catch-up:thread unload-names-without-grace:thread relaxed-il-head:thread}; do
  f=${spec%%:*}; san=${spec##*:}
  if [ "$san" = address ]; then setup=asan; else setup=tsan; fi
  rm -rf "$dir"
  meson setup "$dir" -Db_sanitize="$san" -Dbenchmarks=disabled -Dprotocol_fault="$f" >/dev/null || exit 1
  ninja -C "$dir" tests/jitprov-stress-tests >/dev/null || exit 1
  for i in 1 2 3; do
    out=$(meson test -C "$dir" --setup "$setup" registry-stress 2>&1 | grep -E "^ *1/1")
    echo "$f/$san run $i: $out"
    grep -m1 -E "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|G[234]\+?:" "$dir/meson-logs/testlog-$setup.txt"
  done
done
rm -rf "$dir"
