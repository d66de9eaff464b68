#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""An attached client's rundowns against CoreCLR's own rundown (dotnet_attach.sh), as
dotnet_crosscheck.py does for a client loaded at start-up, less what an attach cannot
know (the tier of the bodies JIT'd before it):
  - R1, jitprov's last rundown that ended before CoreCLR's began: every body in it is
    in CoreCLR's rundown (nothing stale, nothing extra);
  - R2, jitprov's first rundown that began after CoreCLR's ended: every JIT'd body of
    CoreCLR's rundown is in it with the same address, size, namespace, name and
    signature (nothing lost, every name CoreCLR's own);
  - native code version ids: how many agree with CoreCLR's (inferred for the bodies
    the attach enumerated), printed;
  - the attach happened under churn: CoreCLR unloaded collectible modules after it;
    and nothing was unloaded while CoreCLR's rundown ran (the quiet phase);
  - the client's counters: a catch-up that published bodies, nothing refused or lost,
    and (catchup_delay_ms held it open under churn) bodies unloaded inside it counted.
    dotnet_attach_check.py WORK PID"""
import json
import re
import sys

import bt2read

work, pid = sys.argv[1], int(sys.argv[2])


def tsv(path):
    for line in open(path, encoding="utf-8"):
        start, size, _tier, _method, version, ns, name, sig = line.rstrip("\n").split("\t")[:8]
        yield int(start, 16), (int(size, 16), ns, name, sig, int(version))


clr = dict(tsv(work + "/clr.tsv"))
t_clr_begin, t_clr_end = (int(l) for l in open(work + "/window"))
attached = int(open(work + "/attached").read())
m = re.search(r"\(qpc (\d+) to (\d+)\)", open(work + "/clr.txt").read())
assert m, open(work + "/clr.txt").read()
q0, q1 = int(m.group(1)), int(m.group(2))
quiet, done = (int(l) for l in open(work + "/quiet"))
assert q0 >= quiet, "CoreCLR's rundown began %.1f ms before the quiet phase" % ((quiet - q0) / 1e6)
unloads = [l.rstrip("\n").split("\t") for l in open(work + "/unloads.tsv", encoding="utf-8")]
after = sum(1 for u in unloads if u[0] == "module" and attached <= int(u[2]) < quiet)
assert after > 0, "CoreCLR unloaded no module after the attach: the attach was not under churn"
late = [u for u in unloads if quiet <= int(u[2]) <= done]
assert not late, "%d unloads in the quiet phase, e.g. %s" % (len(late), late[:3])

rundowns = bt2read.rundowns(work + "/trace", pid,
                            lambda f: (f["code_size"], f["namespace"], f["name"], f["signature"], f["host_version"]))
before = [r for r in rundowns if r[1] <= t_clr_begin]
after_r = [r for r in rundowns if r[0] >= t_clr_end]
assert before and after_r, "no jitprov rundown on each side of CoreCLR's: %d before, %d after of %d" % (
    len(before), len(after_r), len(rundowns))
r1, r2 = before[-1][2], after_r[0][2]

extra = [hex(s) for s in r1 if s not in clr]
missing = [(hex(s), clr[s]) for s in clr if s not in r2]
differ = [(hex(s), r2[s][:4], clr[s][:4]) for s in clr if s in r2 and r2[s][:4] != clr[s][:4]]
versions = sum(1 for s in clr if s in r2 and r2[s][4] == clr[s][4])
assert len(clr) > 2000, len(clr)
c = json.load(open(work + "/client.json"))
cu, nm = c["catch_up"], c["not_mirrored"]
print("attach: %d JIT'd bodies in CoreCLR's own rundown; in jitprov's next rundown (%d versions): %d missing, "
      "%d with another address, size or name; in jitprov's previous rundown (%d versions): %d CoreCLR lacks "
      "(stale); native code version ids equal: %d of %d; catch-up: %d bodies published, %d unloaded meanwhile, "
      "%d precompiled, %d errors, %d module unloads held in its gate (at most %d us); client: %d loads, %d unloads, "
      "%d collectible modules unloaded (CoreCLR: %d after the attach), %d rundowns"
      % (len(clr), len(r2), len(missing), len(differ), len(r1), len(extra), versions, len(clr), cu["bodies"],
         cu["unloaded"], cu["r2r"], cu["errors"], cu.get("gate_waits", 0), cu.get("gate_wait_max_us", 0),
         c["loads"], c["unloads"], c["module_unloads"], after, len(rundowns)))
assert not extra, "%d bodies of jitprov's rundown before are not in CoreCLR's, e.g. %s" % (len(extra), extra[:5])
assert not missing, "%d of CoreCLR's %d bodies are not in jitprov's rundown after, e.g. %s" % (
    len(missing), len(clr), missing[:3])
assert not differ, "%d bodies differ, e.g. %s" % (len(differ), differ[:3])
assert cu["bodies"] > 1000 and cu["errors"] == 0, cu
assert nm["bad_payloads"] == 0 and nm["refused"] == 0 and nm["errors"] == 0, nm
assert c["module_unloads"] > 0, c
if cu["unloaded"] == 0:
    sys.exit("no body unloaded inside the catch-up: its delay did not let unloads land in it (%s)" % cu)
