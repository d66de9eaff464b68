#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every C and C++ source of the tree is as clang-format (.clang-format) leaves it.
#   format_check.sh SOURCE_ROOT
root=${1:?usage: format_check.sh SOURCE_ROOT}
command -v clang-format >/dev/null || { echo "clang-format not installed"; exit 77; }
cd "$root" || exit 2
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.h' 2>/dev/null || find runtime provider probes tools tests -name '*.[ch]' -o -name '*.cc')
[ "${#files[@]}" -gt 0 ] || { echo "no sources found under $root"; exit 2; }
if ! out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1); then
  echo "$out" | grep -E 'error:' | head -20
  echo "FAIL: $(echo "$out" | grep -c 'error:') places not formatted; run: clang-format -i \$(git ls-files '*.c' '*.cc' '*.h')"
  exit 1
fi
echo "format: ${#files[@]} files as clang-format leaves them"
