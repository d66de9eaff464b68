#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""One JVM's rundowns against HotSpot's own code list (the jvm-agent, jvm-apps and
jvm-attach tests):

  codelist_check.py TRACE LABEL DIR MIN_STABLE [--min-loads N] [--min-unloads N]
                    [--no-busy] [--attached]

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
    intrinsics share jmethodIDs, so for them the class is checked, not the name;
  - no extra: every Java method's record in that rundown (stubs, namespace "hotspot",
    are not nmethods) starts where a listing has an nmethod alive (in use or not
    entrant) with the same name, signature and size (method handle intrinsics: the
    class and size): a record of freed code at an address that another nmethod took
    since is code the registry holds that HotSpot no longer has;
  - --min-loads/--min-unloads: the agent counted at least that many; --no-busy: no
    rundown need end before the quiet moment (the busy file is not read); --attached:
    the agent was started by Agent_OnAttach (its stats say "attached": true).
Prints one line, "LABEL codelist: N of N nmethods ... (100 % match) ... 0 extra".
Exits 1 with its reason on stderr when a check fails (no assert: python -O keeps them).
"""
import argparse
import json
import math
import re
import sys

import bt2read  # babeltrace2's Python bindings: decoded fields


def codelist(path, any_state=False):
    """start -> (class.name, signature, level, size) of the nmethods in use (state 0), or
    of every one listed (alive: in use or not entrant) with any_state."""
    out = {}
    for line in open(path):
        m = re.match(r"\s*(\d+) (\d) (\d) (\S+?)(\(.*\)\S*) \[0x([0-9a-f]+), 0x([0-9a-f]+) - 0x([0-9a-f]+)\]", line)
        if m and (any_state or m.group(3) == "0"):
            start, end = int(m.group(7), 16), int(m.group(8), 16)
            out[start] = (m.group(4), m.group(5), int(m.group(2)), end - start)
    return out


class CheckFailed(Exception):
    pass


def check(ok, what):
    if not ok:
        raise CheckFailed(what)


def is_mh(name):
    return name.startswith("java.lang.invoke.MethodHandle.")


def main(trace, label, d, min_stable, min_loads=0, min_unloads=0, busy=True, attached=False):
    pid = int(open(d + "/pid").read())
    agent = json.load(open(d + "/agent.json"))
    check(agent["errors"] == 0 and agent["refused"] == 0, "%s: the agent counted errors or refusals: %s" % (label, agent))
    check(agent["loads"] >= min_loads and agent["unloads"] >= min_unloads,
          "%s: fewer than %d loads or %d unloads: %s" % (label, min_loads, min_unloads, agent))
    check(not attached or agent.get("attached") is True, "%s: not started by Agent_OnAttach: %s" % (label, agent))
    a, b = codelist(d + "/codelist1.txt"), codelist(d + "/codelist2.txt")
    alive = {}  # start -> the nmethods alive there in either listing
    for listing in (codelist(d + "/codelist1.txt", True), codelist(d + "/codelist2.txt", True)):
        for k, v in listing.items():
            alive.setdefault(k, []).append(v)
    stable = {k: v for k, v in a.items() if b.get(k) == v}
    check(len(stable) >= min_stable, "%s: %d nmethods in use in both listings (%d, %d), fewer than %d" % (
        label, len(stable), len(a), len(b), min_stable))
    t_after, t_before = (int(x) for x in open(d + "/window"))
    t_busy = int(open(d + "/busy").read()) if busy else 0
    rundowns, busy_rundowns, all_times = [], 0, []
    # Records decoded for the rundowns that begin in the window alone.
    for begin, end, cur in bt2read.rundowns(
            trace, pid, lambda f: (f["namespace"] + "." + f["name"], f["signature"], f["host_tier"], f["code_size"],
                                   f["namespace"] == "hotspot"), lambda begin: begin >= t_after):
        all_times.append(((begin - t_after) / 1e9, (end - t_after) / 1e9))
        if busy and end <= t_busy:
            busy_rundowns += 1
        if begin >= t_after and end <= t_before:
            rundowns.append(cur)
    check(busy_rundowns > 0 or not busy, "%s: no rundown ended while the program ran (pid %d): %s" % (label, pid, all_times))
    check(rundowns, "%s: no complete rundown between the listings (0 to %.3f s): %s" % (
        label, (t_before - t_after) / 1e9, all_times))
    last = rundowns[-1]

    def same(k, v):
        r = last.get(k)
        if r is None:
            return False
        if is_mh(v[0]) and is_mh(r[0]):
            return r[2:4] == v[2:]
        return r[:4] == v

    def alive_at(k, r):
        """An nmethod alive at k in a listing is the one this record names: same name and
        signature (method handle intrinsics: both of the class) and same size."""
        return any(v[3] == r[3] and ((is_mh(v[0]) and is_mh(r[0])) or v[:2] == r[:2]) for v in alive.get(k, ()))

    intrinsics = sum(1 for v in stable.values() if is_mh(v[0]))
    bad = [(hex(k), v, last.get(k)) for k, v in stable.items() if not same(k, v)]
    good = len(stable) - len(bad)
    extra = [(hex(k), r[:4], alive.get(k)) for k, r in last.items() if not r[4] and not alive_at(k, r)]
    print("%s codelist: %d of %d nmethods in use in both listings are in the last of %d rundowns between them "
          "(%d versions) with the same address, size, level and name (%.1f %% match, rounded down; %d method handle intrinsics: "
          "name checked to the class); %d extra (Java records where no listing has that nmethod alive); %d rundowns while it "
          "ran, %d in all; agent: %d loads (%d replays), %d unloads (%d unknown, %d stale), %d methods, tier by %s"
          % (label, good, len(stable), len(rundowns), len(last), math.floor(1000.0 * good / len(stable)) / 10, intrinsics,
             len(extra), busy_rundowns, len(all_times), agent["loads"], agent["replays"], agent["unloads"],
             agent["unknown_unloads"], agent.get("stale_unloads", 0), agent["methods"], agent["tier_by"]))
    # A method is unloaded with its last version: no more are left than live versions
    # (class churn made them by the hundred thousand before).
    left = agent["methods"] - agent.get("methods_unloaded", 0)
    growth = "methods_unloaded" not in agent or left > agent["live_method_versions"]
    print("%s methods: %d registered, %d unloaded with their last version, %d left for %d live versions"
          % (label, agent["methods"], agent.get("methods_unloaded", 0), left, agent.get("live_method_versions", -1)))
    if growth:
        print("%s: %d methods registered with no live code" % (label, left - agent.get("live_method_versions", 0)),
              file=sys.stderr)
    if bad:
        print("%s: %d of %d differ or are missing, e.g. %s" % (label, len(bad), len(stable), bad[:3]), file=sys.stderr)
    if extra:
        print("%s: %d extra records in the rundown, e.g. %s" % (label, len(extra), extra[:3]), file=sys.stderr)
    return 1 if bad or extra or growth else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="one JVM's rundowns against jcmd Compiler.codelist")
    ap.add_argument("trace")
    ap.add_argument("label")
    ap.add_argument("dir")
    ap.add_argument("min_stable", type=int)
    ap.add_argument("--min-loads", type=int, default=0)
    ap.add_argument("--min-unloads", type=int, default=0)
    ap.add_argument("--no-busy", action="store_true")
    ap.add_argument("--attached", action="store_true")
    o = ap.parse_args()
    try:
        sys.exit(main(o.trace, o.label, o.dir, o.min_stable, o.min_loads, o.min_unloads, not o.no_busy, o.attached))
    except CheckFailed as e:
        print("codelist_check: %s" % e, file=sys.stderr)
        sys.exit(1)
