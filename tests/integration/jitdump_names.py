#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The jitdump test's judge. Reads the samples of one perf run twice by `perf script`
# (through the perf map, and after `perf inject --jit` of the agent's jitdump) and
# counts, for every sample in JIT code, whether each reading names the method that
# occupied the sample's address at the sample's time: named right, wrong, unnamed, and
# apart for samples in reused ranges (an address more than one load covered).
#
# The truth is NOT the jitdump: a judge that reads the file under test shares its every
# mistake (a stamp taken late, a name swapped: perf and the judge read the same wrong
# record and agree). It is the lttng trace of the same run: the jitprov_runtime
# method_load and code_unload events the agent's publications and retirements emitted
# (read by babeltrace2's own bindings, bt2read.py). That trace carries what the judge
# needs (address, size, namespace and name of every load; address and size of every
# unload; a time stamp on CLOCK_MONOTONIC, the clock of `perf record -k 1`), and shares
# no code with the jitdump writer (runtime/jitdump.cc: its records, stamps, file, walk
# and close): lttng-ust stamps and serialises the event itself, in the lttng provider.
# What both share is the agent's JVMTI bookkeeping and the registry's publication (the
# VersionView both are made from): those are checked against HotSpot's own code list by
# the jvm-agent test. (An independent JVMTI agent recording CompiledMethodLoad/Unload
# would share nothing, but it would stamp in another callback at another moment, and
# name by a second copy of the agent's naming code; the trace is stamped in the same
# publication, a few microseconds before the dump's record.)
#
# At a sample's time t and address ip the occupant is the newest trace event covering
# ip stamped at or before t: a load names it; an unload leaves freed code (not judged:
# perf's jitdump model has no unload record). A sample less than GRACE_NS after the
# load that decides it is not judged either: the dump's stamp is read a little after
# the trace's, under the same lock (counted, printed).
#
# Checks that the clocks are one: every trace stamp and every sample's time lie in the
# run's CLOCK_MONOTONIC window [T0, T1], read by the test around `perf record`; and each
# load's dump stamp is at or after its trace stamp (read after it on the same thread),
# a few microseconds later (the median under 100 us).
# And, apart from the judgement, that the dump and the trace have the same loads
# (address, size, name; the dump read by a reader of its own), but for the trace's last
# ones: publications racing the sink's close at VM death, stamped after the dump's last.
#   jitdump_names.py TRACE VPID T0 T1 MAP_SCRIPT INJECT_SCRIPT DUMP
#   (the scripts: perf script -F time,ip,sym --ns)
import re, struct, sys
from collections import Counter, defaultdict

from bt2read import events

GRACE_NS = 100_000


def norm(name):  # the dump and the trace name stubs hotspot::NAME, the perf map NAME
    return name[len("hotspot::"):] if name.startswith("hotspot::") else name


def samples(path):
    out = []
    for line in open(path):
        m = re.match(r"\s*(\d+)\.(\d+):\s+([0-9a-f]+)\s+(.*?)\s*$", line)
        if m:
            sym = m.group(4)
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
            out.append((int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")), int(m.group(3), 16), sym))
    return out


def read_dump_loads(path):  # (stamp, address, size, name) of every JIT_CODE_LOAD
    b = open(path, "rb").read()
    off, loads = struct.unpack_from("<I", b, 8)[0], []
    while off + 16 <= len(b):
        rid, total, ts = struct.unpack_from("<IIQ", b, off)
        if rid == 0:
            addr, size = struct.unpack_from("<QQ", b, off + 32)
            loads.append((ts, addr, size, b[off + 56:b.index(b"\0", off + 56)].decode("utf-8", "replace")))
        off += max(total, 16)
    return loads


def read_trace(path, vpid):
    lost, evs = [], []
    for name, f in events(path, ["jitprov_runtime:method_load", "jitprov_runtime:code_unload"], mono=True, lost=lost):
        if f.get("vpid") != vpid:
            continue
        if name == "jitprov_runtime:method_load":
            who = (f["namespace"] + "::" + f["name"]) if f["namespace"] else f["name"]
            evs.append((f["_mono"], f["code_start"], f["code_size"], who))
        else:
            evs.append((f["_mono"], f["code_start"], f["code_size"], None))
    return evs, lost


def judge(evs, map_script, inject_script, t0, t1, truth_label, norm=norm, grace_ns=GRACE_NS):
    """Judges the two readings (perf script outputs) of one perf run by evs, the truth:
    (CLOCK_MONOTONIC ns, code start, code size, "namespace::name", or None for an
    unload). Prints the clock check and the table. Returns the counts, with "named":
    whether the injected reading names every judged JIT sample right, and "beats_map"
    and "beats_map_reused": whether it names more right than the perf map, overall and
    in reused ranges."""
    loads = sum(1 for e in evs if e[3] is not None)
    by_page = defaultdict(list)
    for ts, addr, size, name in evs:
        for p in range(addr >> 12, ((addr + size - 1) >> 12) + 1):
            by_page[p].append((ts, addr, size, name))
    for p in by_page:
        by_page[p].sort(key=lambda e: e[0])

    def truth(ip, t):
        best, covering = None, 0
        for ts, addr, size, name in by_page.get(ip >> 12, ()):
            if addr <= ip < addr + size:
                covering += name is not None
                if ts <= t:
                    best = (ts, name)
        return best, covering

    via_map, via_inject = samples(map_script), samples(inject_script)
    assert len(via_map) == len(via_inject) and via_map, (len(via_map), len(via_inject))
    stamps = [e[0] for e in evs]
    times = [s[0] for s in via_map]
    clock_ok = evs and t0 <= min(stamps) and max(stamps) <= t1 and t0 <= min(times) and max(times) <= t1
    print("clock: trace stamps %.3f-%.3f s, samples %.3f-%.3f s, run window %.3f-%.3f s (CLOCK_MONOTONIC): %s" %
          (min(stamps) / 1e9, max(stamps) / 1e9, min(times) / 1e9, max(times) / 1e9, t0 / 1e9, t1 / 1e9,
           "one clock" if clock_ok else "NOT one clock"))
    counts = {k: {"right": 0, "wrong": 0, "unnamed": 0} for k in ("map", "inject", "map_reused", "inject_reused")}
    jit = reused = freed = at_load = 0
    wrong_examples = []
    for (t, ip, sym_map), (t2, ip2, sym_inj) in zip(via_map, via_inject):
        assert t == t2 and ip == ip2, "the two readings are not the same samples"
        best, covering = truth(ip, t)
        if best is None:
            continue  # not JIT code (by the trace)
        ts, name = best
        if name is None:
            freed += 1
            continue
        if t - ts < grace_ns:
            at_load += 1
            continue
        jit += 1
        is_reused = covering > 1
        reused += is_reused
        for key, sym in (("map", sym_map), ("inject", sym_inj)):
            if sym in ("[unknown]", ""):
                verdict = "unnamed"
            elif norm(sym) == norm(name):
                verdict = "right"
            else:
                verdict = "wrong"
            if key == "inject" and verdict != "right" and len(wrong_examples) < 5:
                wrong_examples.append((t, hex(ip), sym, name, "load +%d us" % ((t - ts) // 1000)))
            counts[key][verdict] += 1
            if is_reused:
                counts[key + "_reused"][verdict] += 1
    print("truth: %s, %d loads, %d unloads; samples: %d, in JIT code: %d, in reused ranges: %d "
          "(not judged: %d in freed code, %d within %d us of their load)" %
          (truth_label, loads, len(evs) - loads, len(via_map), jit, reused, freed, at_load, grace_ns // 1000))
    print("%-22s %8s %8s %8s" % ("", "right", "wrong", "unnamed"))
    for key, label in (("map", "perf map, all"), ("inject", "jitdump, all"), ("map_reused", "perf map, reused"),
                       ("inject_reused", "jitdump, reused")):
        c = counts[key]
        print("%-22s %8d %8d %8d" % (label, c["right"], c["wrong"], c["unnamed"]))
    if wrong_examples:
        print("jitdump not right, e.g. (time, ip, named, truth, since the load):", wrong_examples)
    inject = counts["inject"]
    return {"loads": loads, "clock_ok": bool(clock_ok), "jit": jit, "reused": reused, "counts": counts,
            "named": jit > 0 and inject["wrong"] == 0 and inject["unnamed"] == 0,
            "beats_map": inject["right"] > counts["map"]["right"],
            "beats_map_reused": reused > 0 and counts["inject_reused"]["right"] > counts["map_reused"]["right"]}


def main():
    trace, vpid, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    evs, lost = read_trace(trace, vpid)
    if lost:
        print("FAIL: the trace lost events, the judge would be incomplete:", lost)
        return 1
    r = judge(evs, sys.argv[5], sys.argv[6], t0, t1, "the lttng trace")
    loads, clock_ok = r["loads"], r["clock_ok"]
    # Apart from the judgement: the dump has the trace's loads.
    dump = read_dump_loads(sys.argv[7])
    in_trace = Counter((a, s, n) for _, a, s, n in evs if n is not None)
    in_dump = Counter((a, s, n) for _, a, s, n in dump)
    last = max(ts for ts, _, _, _ in dump)
    late = Counter((a, s, n) for ts, a, s, n in evs if n is not None and ts > last)
    missing = in_trace - in_dump
    same_loads = not (in_dump - in_trace) and not (missing - late)
    # The same load's two stamps (the n-th of a key in time in each).
    by_key_t, by_key_d = defaultdict(list), defaultdict(list)
    for ts, a, s, n in evs:
        if n is not None:
            by_key_t[(a, s, n)].append(ts)
    for ts, a, s, n in dump:
        by_key_d[(a, s, n)].append(ts)
    diffs = sorted(d - t for k, ds in by_key_d.items() for t, d in zip(sorted(by_key_t[k]), sorted(ds)))
    if diffs:
        med, p99, lo, hi = diffs[len(diffs) // 2], diffs[len(diffs) * 99 // 100], diffs[0], diffs[-1]
        stamps_ok = lo >= 0 and med < 100_000
        print("stamps: dump minus trace, per load: min %.1f us, median %.1f us, p99 %.1f us, max %.1f us: %s" %
              (lo / 1e3, med / 1e3, p99 / 1e3, hi / 1e3, "one clock" if stamps_ok else "NOT one clock"))
        clock_ok = clock_ok and stamps_ok
    print("loads: the dump has %d, the trace %d; only in the dump %d, only in the trace %d (%d of them after the "
          "dump's last: publications racing the close at VM death): %s" %
          (len(dump), loads, sum((in_dump - in_trace).values()), sum(missing.values()),
           sum((missing & late).values()), "the same" if same_loads else "NOT the same"))
    ok = same_loads and clock_ok and r["named"] and r["beats_map_reused"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
