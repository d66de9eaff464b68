#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The layers include downward only. From the bottom:
  common   common/: the common library and its headers (common/include/jitprov: the
           trace ABI, the UTF-8 rules, names, histograms, triggers), each header beside
           the code that implements it. Includes only itself and system headers.
  provider provider/, probes/: the LTTng-UST providers, USDT and BPF probes. Include the
           common layer and their own headers, never the runtime (its public headers
           included) or tools.
  runtime  runtime/*, its public headers (runtime/include/jitprov: the C API, the C++
           API) with it: includes the layers below, never tools/ or tests/.
  tools    tools/**: includes the layers below and tools/ headers, never tests/.
  tests    anything.
No source includes by a relative path that climbs out of its directory ("../x.h"): a
target names its include directories instead.
    layering_check.py SOURCE_ROOT"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
try:
    files = subprocess.check_output(["git", "-C", root, "ls-files", "*.c", "*.cc", "*.h"], text=True).split()
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
             if f.endswith((".c", ".cc", ".h")) and "/build" not in d]


def layer(path):
    if path.startswith("common/"):
        return 0, "common"
    if path.startswith(("provider/", "probes/")):
        return 1, "provider"
    if path.startswith("runtime/"):
        return 2, "runtime"
    if path.startswith("tools/"):
        return 3, "tools"
    return 4, "tests"


by_name = {}
for f in files:
    by_name.setdefault(os.path.basename(f), []).append(f)
by_name.setdefault("jitprov", [])

errors = []
for f in files:
    mine, mine_name = layer(f)
    for n, line in enumerate(open(os.path.join(root, f), errors="replace"), 1):
        m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
        if not m:
            continue
        name = m.group(2)
        if name.startswith("../"):
            errors.append("%s:%d: includes %s by a relative path out of its directory" % (f, n, name))
            continue
        if name.startswith("jitprov/"):
            targets = [d + name for d in ("runtime/include/", "common/include/") if d + name in files]
            if not targets:
                errors.append("%s:%d: includes %s, which is in neither runtime/include nor common/include" % (f, n, name))
        else:
            targets = by_name.get(os.path.basename(name), [])
            # A quoted name in the file's own directory is that file.
            here = os.path.join(os.path.dirname(f), name)
            if here in files:
                targets = [here]
        for t in targets:
            theirs, theirs_name = layer(t)
            if theirs > mine:
                errors.append("%s:%d: the %s layer includes %s, of the %s layer above it" % (f, n, mine_name, t, theirs_name))
for e in errors:
    print("FAIL:", e)
print("layering: %d files, %d upward or relative includes" % (len(files), len(errors)))
sys.exit(1 if errors else 0)
