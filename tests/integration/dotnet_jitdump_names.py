#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The .NET jitdump test's judge (dotnet_jitdump.sh). The samples of one perf run, read
# through the .NET client's perf map and after `perf inject --jit` of its jitdump, are
# judged by jitdump_names.judge against CoreCLR's own record of the run: the
# MethodLoadVerbose, MethodUnloadVerbose and ModuleUnload events of a startup EventPipe
# file session, read by Microsoft's TraceEvent (jitprov-clr-rundown loads). That truth
# shares nothing with jitprov: CoreCLR stamps each event (CLOCK_MONOTONIC, the clock of
# `perf record -k 1`) before the client sees it. A body's code is freed at its method's
# unload or at its collectible module's unload (CoreCLR reports no method unload for
# the code of an unloaded collectible context). CoreCLR reused no code address in the
# runs tried (12 905 loads, 149 collectible contexts unloaded in 10 s): the judge asks
# that the injected reading name every judged sample right and more than the perf map.
# Samples less than 10 us after the load that decides them are not judged (CoreCLR
# stamps its event before the client publishes and writes the dump's record; 100 us,
# the JVM judge's margin, would leave out most samples of the collectible contexts'
# methods, which run at once after their JIT).
#   dotnet_jitdump_names.py LOADS.tsv UNLOADS.tsv T0 T1 MAP_SCRIPT INJECT_SCRIPT
import sys
from collections import defaultdict

from jitdump_names import judge


def truth(loads_path, unloads_path):
    evs, by_module, size_at = [], defaultdict(list), {}
    for line in open(loads_path, encoding="utf-8"):
        c = line.rstrip("\n").split("\t")
        start, size, ns, name, t, module = int(c[0], 16), int(c[1], 16), c[5], c[6], int(c[8]), int(c[9], 16)
        evs.append((t, start, size, ns + "::" + name if ns else name))
        by_module[module].append((t, start, size))
        size_at[start] = size
    for line in open(unloads_path, encoding="utf-8"):
        kind, ident, t = line.split("\t")
        ident, t = int(ident, 16), int(t)
        if kind == "method":
            evs.append((t, ident, size_at.get(ident, 1), None))
        else:  # a module's unload frees the bodies it loaded before
            evs.extend((t, start, size, None) for lt, start, size in by_module.get(ident, ()) if lt <= t)
    return evs


if __name__ == "__main__":
    loads, unloads, t0, t1, map_script, inject_script = sys.argv[1:7]
    r = judge(truth(loads, unloads), map_script, inject_script, int(t0), int(t1),
              "CoreCLR's own load and unload events", norm=lambda s: s, grace_ns=10_000)
    sys.exit(0 if r["clock_ok"] and r["named"] and (r["beats_map_reused"] or r["reused"] == 0 and r["beats_map"])
             else 1)
