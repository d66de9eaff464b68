#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""One JVM's rundowns against HotSpot's own code list (the jvm-apps test):

  codelist_check.py TRACE LABEL DIR MIN_STABLE

DIR holds that JVM's files: pid, agent.json (the agent's stats), codelist1.txt and
codelist2.txt (two `jcmd PID Compiler.codelist` at a quiet moment), window (the times, ns
since the epoch, after the first listing and before the second) and busy (the time its
quiet moment began). Only the events of that process (vpid) are read. Checks:
  - the agent counted no error and refused nothing;
  - at least one rundown began and ended while the program was busy (before its quiet
    moment): rundowns during the run;
  - every nmethod listed in use in both listings (at least MIN_STABLE) is in the last
    rundown that began after the first listing and ended before the second, with the
    same address, size, comp level (host_tier) and name; HotSpot's method handle
    intrinsics share jmethodIDs, so for them the class is checked, not the name.
Prints one line, "LABEL codelist: N of N nmethods ... (100 % match)".
"""
import json
import math
import re
import sys

from bt2read import events  # babeltrace2's Python bindings: decoded fields


def codelist(path):
    out = {}
    for line in open(path):
        m = re.match(r"\s*(\d+) (\d) (\d) (\S+?)(\(.*\)\S*) \[0x([0-9a-f]+), 0x([0-9a-f]+) - 0x([0-9a-f]+)\]", line)
        if m and m.group(3) == "0":  # state 0: in use
            start, end = int(m.group(7), 16), int(m.group(8), 16)
            out[start] = (m.group(4), m.group(5), int(m.group(2)), end - start)
    return out


def main(trace, label, d, min_stable):
    pid = int(open(d + "/pid").read())
    agent = json.load(open(d + "/agent.json"))
    assert agent["errors"] == 0 and agent["refused"] == 0, agent
    a, b = codelist(d + "/codelist1.txt"), codelist(d + "/codelist2.txt")
    stable = {k: v for k, v in a.items() if b.get(k) == v}
    assert len(stable) >= min_stable, "%s: %d nmethods in use in both listings (%d, %d), fewer than %d" % (
        label, len(stable), len(a), len(b), min_stable)
    t_after, t_before = (int(x) for x in open(d + "/window"))
    t_busy = int(open(d + "/busy").read())
    rundowns, cur, begin, busy_rundowns, all_times = [], None, 0, 0, []
    for name, f in events(trace, ["jitprov_rundown:"], times=True):
        if f.get("vpid") != pid:
            continue
        if name == "jitprov_rundown:rundown_begin":
            cur, begin = {}, f["_ns"]
        elif name == "jitprov_rundown:method" and cur is not None:
            cur[f["code_start"]] = (f["namespace"] + "." + f["name"], f["signature"], f["host_tier"], f["code_size"])
        elif name == "jitprov_rundown:rundown_end" and cur is not None:
            all_times.append(((begin - t_after) / 1e9, (f["_ns"] - t_after) / 1e9))
            if f["_ns"] <= t_busy:
                busy_rundowns += 1
            if begin >= t_after and f["_ns"] <= t_before:
                rundowns.append(cur)
            cur = None
    assert busy_rundowns > 0, "%s: no rundown ended while the program ran (pid %d): %s" % (label, pid, all_times)
    assert rundowns, "%s: no complete rundown between the listings (0 to %.3f s): %s" % (
        label, (t_before - t_after) / 1e9, all_times)
    last = rundowns[-1]

    def same(k, v):
        r = last.get(k)
        if r is None:
            return False
        if v[0].startswith("java.lang.invoke.MethodHandle.") and r[0].startswith("java.lang.invoke.MethodHandle."):
            return r[2:] == v[2:]
        return r == v

    intrinsics = sum(1 for v in stable.values() if v[0].startswith("java.lang.invoke.MethodHandle."))
    bad = [(hex(k), v, last.get(k)) for k, v in stable.items() if not same(k, v)]
    good = len(stable) - len(bad)
    print("%s codelist: %d of %d nmethods in use in both listings are in the last of %d rundowns between them "
          "(%d versions) with the same address, size, level and name (%.1f %% match, rounded down; %d method handle intrinsics: "
          "name checked to the class); %d rundowns while it ran, %d in all; agent: %d loads, %d unloads, %d methods, "
          "tier by %s"
          % (label, good, len(stable), len(rundowns), len(last), math.floor(1000.0 * good / len(stable)) / 10, intrinsics,
             busy_rundowns, len(all_times), agent["loads"], agent["unloads"], agent["methods"], agent["tier_by"]))
    if bad:
        print("%s: %d of %d differ or are missing, e.g. %s" % (label, len(bad), len(stable), bad[:3]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: codelist_check.py TRACE LABEL DIR MIN_STABLE")
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
