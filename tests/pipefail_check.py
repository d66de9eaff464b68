#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""No shell script of the tree pipes into `grep -q`. Under `set -o pipefail` (the
integration tests' lib.sh, tools/check, the benchmarks), grep -q leaves at its first
match, the writer's next write fails with SIGPIPE (exit 141), and the pipeline is false
although the line was there: a test that fails, or skips, at random (node-worker-env's
flake, 46a091d). Write `CMD | grep PATTERN >/dev/null`, which reads everything, or grep
a captured string.
    pipefail_check.py SOURCE_ROOT"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
try:
    files = subprocess.check_output(["git", "-C", root, "ls-files"], text=True).split()
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
             if "/build" not in d and "/.git" not in d]


def is_shell(path):
    if path.endswith((".sh", ".bash")):
        return True
    try:
        with open(os.path.join(root, path), "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and (b"bash" in first or first.rstrip().endswith(b"/sh"))


# A pipe (not `||`) into grep with -q among its first options.
pipe_grep_q = re.compile(r"(?<!\|)\|(?!\|)\s*grep\s+(-[a-zA-Z]*q[a-zA-Z]*\b|(-[a-zA-Z]+\s+)+-q\b)")
errors, scanned = [], 0
for f in files:
    if not is_shell(f):
        continue
    scanned += 1
    for n, line in enumerate(open(os.path.join(root, f), errors="replace"), 1):
        code = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
        if pipe_grep_q.search(code):
            errors.append("%s:%d: %s" % (f, n, line.strip()))
for e in errors:
    print(e)
if errors:
    print("FAIL: %d pipes into grep -q (false under pipefail when the writer gets SIGPIPE): "
          "write `| grep PATTERN >/dev/null`" % len(errors))
    sys.exit(1)
print("pipefail: %d shell scripts, no pipe into grep -q" % scanned)
