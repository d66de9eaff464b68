#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The .NET client's rundowns against CoreCLR's own view (dotnet_client.sh):
  - R1, jitprov's last rundown that ended before CoreCLR's rundown began: every body
    in it is in CoreCLR's rundown (jitprov reports nothing CoreCLR does not have);
  - R2, jitprov's first rundown that began after CoreCLR's ended: every JIT'd body
    CoreCLR's rundown reports is in it (jitprov misses nothing);
  - a body in both: the same address, size and name, and jitprov's host_tier is the
    tier of CoreCLR's own MethodLoadVerbose at that address (a startup EventPipe file
    session; CoreCLR's rundown carries no tier);
  - the clients' counters: nothing unmirrored but precompiled code; parent and child
    each traced;
  - nothing was unloaded while CoreCLR's rundown ran: it began in the quiet phase, and
    CoreCLR's own record (MethodUnloadVerbose, ModuleUnload) has no unload in the quiet
    phase. CoreCLR's rundown kills the app when a collectible context is
    unloaded while it walks (docs/dotnet.md, "CoreCLR's rundown and collectible code"), so
    the test takes it only when nothing is left to unload, and this says that held.
    dotnet_crosscheck.py WORK PID"""
import glob
import json
import re
import sys

import bt2read  # babeltrace2's Python bindings: decoded fields

work, pid = sys.argv[1], int(sys.argv[2])


def tsv(path):
    for line in open(path, encoding="utf-8"):
        start, size, tier, method, version, ns, name, sig = line.rstrip("\n").split("\t")[:8]
        yield int(start, 16), (int(size, 16), int(tier), ns, name, sig, int(version))


clr = dict(tsv(work + "/clr.tsv"))
loads = dict(tsv(work + "/loads.tsv"))  # the last load at each address
tier_at = {start: v[1] for start, v in loads.items()}
t_clr_begin, t_clr_end = (int(l) for l in open(work + "/window"))

# First what the comparison rests on: CoreCLR's rundown ran when nothing was left to
# unload. It began (its DCEndInit) in the quiet phase, which the workload enters once
# every collectible context is unloaded, and CoreCLR's own record has no unload
# (MethodUnloadVerbose, ModuleUnload) in the quiet phase, up to the workload's 'done'
# (then the process exits: CoreCLR says every module unloaded). All CLOCK_MONOTONIC ns.
m = re.search(r"\(qpc (\d+) to (\d+)\)", open(work + "/clr.txt").read())
assert m, open(work + "/clr.txt").read()
q0, q1 = int(m.group(1)), int(m.group(2))
quiet, done = (int(l) for l in open(work + "/quiet"))
assert q0 >= quiet, "CoreCLR's rundown began %.1f ms before the quiet phase (CoreCLR can crash there)" % (
    (quiet - q0) / 1e6)
unloads = [l.rstrip("\n").split("\t") for l in open(work + "/unloads.tsv", encoding="utf-8")]
modules = sum(1 for u in unloads if u[0] == "module" and int(u[2]) < quiet)
bodies = sum(1 for u in unloads if u[0] == "method" and int(u[2]) < quiet)
assert modules > 0, "CoreCLR recorded no ModuleUnload before the quiet phase: the check below would say nothing"
late = [u for u in unloads if quiet <= int(u[2]) <= done]
assert not late, "%d unloads in the quiet phase (%d while CoreCLR's rundown ran: it can crash there), e.g. %s" % (
    len(late), sum(1 for u in late if q0 <= int(u[2]) <= q1), late[:3])

rundowns = bt2read.rundowns(work + "/trace", pid, lambda f: (f["code_size"], f["host_tier"], f["namespace"], f["name"],
                                                           f["signature"], f["host_version"]))
before = [r for r in rundowns if r[1] <= t_clr_begin]
after = [r for r in rundowns if r[0] >= t_clr_end]
assert before and after, "no jitprov rundown on each side of CoreCLR's: %d before, %d after of %d" % (
    len(before), len(after), len(rundowns))
r1, r2 = before[-1][2], after[0][2]


def same(start, mine):
    """The same body: address, size, names; jitprov's host_tier is the tier of CoreCLR's
    MethodLoadVerbose there, and its host_version CoreCLR's native code version id (the
    V2 payload's last field), both in that load event and in CoreCLR's rundown."""
    size, tier, ns, name, sig, version = mine
    c = clr[start]
    return ((size, ns, name, sig, version) == (c[0], c[2], c[3], c[4], c[5]) and tier == tier_at.get(start)
            and version == loads[start][5])


extra = [hex(s) for s in r1 if s not in clr]
missing = [(hex(s), clr[s]) for s in clr if s not in r2]
differ = [(hex(s), r2[s], clr[s], tier_at.get(s)) for s in clr if s in r2 and not same(s, r2[s])]
assert not extra, "%d bodies of jitprov's rundown before are not in CoreCLR's, e.g. %s" % (len(extra), extra[:5])
assert not missing, "%d of CoreCLR's %d bodies are not in jitprov's rundown after, e.g. %s" % (
    len(missing), len(clr), missing[:3])
assert not differ, "%d bodies differ, e.g. %s" % (len(differ), differ[:3])
assert len(clr) > 2000, len(clr)
tiers = {}
for s in clr:
    tiers[tier_at[s]] = tiers.get(tier_at[s], 0) + 1
versions = {}
for s in clr:
    versions[clr[s][5]] = versions.get(clr[s][5], 0) + 1

stats = [json.load(open(p)) for p in sorted(glob.glob(work + "/client-*.json"))]
assert len(stats) == 2, "expected the parent's and the child's stats, got %d" % len(stats)
for s in stats:
    nm = s["not_mirrored"]
    assert nm["bad_payloads"] == 0 and nm["refused"] == 0 and nm["errors"] == 0 and nm["cold_parts"] == 0, s
    assert s["loads"] > 100 and s["rundowns"] >= 1, s
parent = next(s for s in stats if s["pid"] == pid)
assert parent["module_unloads"] > 0 and parent["unloads"] > 0, parent

print("coreclr: %d JIT'd bodies in CoreCLR's own rundown, all in jitprov's next rundown (%d versions) with the same "
      "address, size, name, tier and native code version id (CoreCLR tiers %s; version ids %s); jitprov's previous rundown (%d versions) has none CoreCLR "
      "lacks; %d rundowns in all; client: %d loads, %d unloads, %d collectible modules unloaded, %d precompiled "
      "methods not mirrored; child pid %s traced (%d loads); CoreCLR unloaded %d modules and %d bodies in the "
      "work, none in the quiet phase"
      % (len(clr), len(r2), dict(sorted(tiers.items())), dict(sorted(versions.items())), len(r1), len(rundowns), parent["loads"], parent["unloads"],
         parent["module_unloads"], parent["not_mirrored"]["r2r_methods"],
         [s["pid"] for s in stats if s["pid"] != pid][0], [s["loads"] for s in stats if s["pid"] != pid][0],
         modules, bodies))
