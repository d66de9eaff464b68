#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/bench-dotnet's report: per runtime and mode, the JIT-path latencies of the
calls that began inside the rundown's window (first calls: the tier-0 JIT; threshold
calls: the one that crosses the tier-up threshold; OSR: a loop method's call through
its OSR transition), medians over the rounds, and each rundown's reported bodies
against the live set of CoreCLR's own load and unload events.
    bench_report.py WORK OUT TAG..."""
import json
import statistics
import sys

work, out, tags = sys.argv[1], sys.argv[2], sys.argv[3:]


def q(values, p):
    return values[min(len(values) - 1, int(p * len(values)))] if values else 0


def jitprov_window(tag):
    """The first jitprov rundown of the run: begin, end (wall ns) and the starts reported."""
    from bt2read import events
    begin = end = None
    starts = set()
    for name, f in events("%s/trace-%s" % (work, tag), ["jitprov_rundown:"], times=True):
        if name == "jitprov_rundown:rundown_begin" and begin is None:
            begin = f["_ns"]
        elif name == "jitprov_rundown:method" and end is None:
            starts.add(f["code_start"])
        elif name == "jitprov_rundown:rundown_end" and end is None:
            end = f["_ns"]
    return begin, end, starts


def live_at(tag, begin, end):
    """CoreCLR's own view of the bodies a rundown from begin to end (CLOCK_MONOTONIC ns)
    must report: loaded (MethodLoadVerbose) before begin and neither unloaded
    (MethodUnloadVerbose) nor in a module unloaded (ModuleUnload: a collectible context)
    before end. Also what changed inside the window: loads by tier, unloads."""
    gone_method, gone_module = {}, {}
    for line in open("%s/%s.unloads.tsv" % (work, tag), encoding="utf-8"):
        kind, ident, qpc = line.split("\t")
        (gone_method if kind == "method" else gone_module).setdefault(int(ident, 16), []).append(int(qpc))
    live, during = set(), {"loads": 0, "tier1": 0, "osr": 0, "unloads": 0}
    for line in open("%s/%s.loads.tsv" % (work, tag), encoding="utf-8"):
        cols = line.rstrip("\n").split("\t")
        start, tier, t, module = int(cols[0], 16), int(cols[2]), int(cols[8]), int(cols[9], 16)
        if begin <= t <= end:
            during["loads"] += 1
            during["osr"] += tier == 5  # OptimizedTier1OSR
            during["tier1"] += tier != 5 and int(cols[4]) > 0  # a later native code version: a tier-up
        if t >= begin:
            continue
        if any(t < u < end for u in gone_method.get(start, []) + gone_module.get(module, [])):
            continue
        live.add(start)
    during["unloads"] = sum(begin <= u <= end for us in list(gone_method.values()) + list(gone_module.values())
                            for u in us)
    return live, during


PATHS = ("first", "thr", "osr")
runs, crashes = [], []
for tag in tags:
    meta = json.load(open("%s/%s.json" % (work, tag)))
    if "crashed" in meta:
        crashes.append(dict(meta, tag=tag))
        continue
    lat = [l.split() for l in open("%s/%s.lat" % (work, tag))]
    lat = [(path, int(t) + meta["offset"], int(d)) for path, t, d in lat]
    live, reported, during = set(), set(), {}
    if meta["mode"] == "jitprov":
        begin, end, reported = jitprov_window(tag)
        assert begin is not None and end is not None, "%s: no complete jitprov rundown in the trace" % tag
        live, during = live_at(tag, begin - meta["offset"], end - meta["offset"])
    elif meta["mode"] == "clr":
        begin, end = meta["t0"], meta["t1"]
        reported = {int(l.split("\t")[0], 16) for l in open("%s/%s.tsv" % (work, tag))}
        text = open("%s/%s.clr.txt" % (work, tag)).read()
        meta["clr_ms"] = float(text.split("rundown ")[1].split(" ms")[0])
        qpc = text.split("(qpc ")[1].split(")")[0].split(" to ")
        live, during = live_at(tag, int(qpc[0]), int(qpc[1]))
    else:
        begin, end = meta["t0"], meta["t0"] + 500_000_000
    meta["live"], meta["missed"], meta["during"] = len(live), len(live - reported), during
    r = dict(meta, tag=tag, window_ms=(end - begin) / 1e6, bodies=len(reported),
             rundown_ms=meta.get("clr_ms", (end - begin) / 1e6 if meta["mode"] == "jitprov" else 0))
    for path in PATHS:
        v = sorted(d for p, t, d in lat if p == path and begin <= t <= end)
        r[path + "_n"] = len(v)
        r[path + "_p50"], r[path + "_p99"], r[path + "_max"] = q(v, .5), q(v, .99), v[-1] if v else 0
    r["stall_max"] = max(r[path + "_max"] for path in PATHS)
    runs.append(r)
json.dump(runs, open(out + "/runs.json", "w"), indent=1)

lines = ["%-8s %-8s %6s %10s %8s %8s %6s %9s %9s %9s %9s %9s %9s %9s" % (
    "runtime", "rundown", "rounds", "rundown_ms", "live", "bodies", "missed", "first_p50", "first_p99", "first_max",
    "thr_p99", "thr_max", "osr_max", "stall_max")]
keys = []
for r in runs + crashes:
    if (r["runtime"], r["mode"]) not in keys:
        keys.append((r["runtime"], r["mode"]))
us = lambda ns: ("%.1fus" % (ns / 1e3)) if ns < 1e6 else ("%.2fms" % (ns / 1e6))
for rt, mode in keys:
    rs = [r for r in runs if (r["runtime"], r["mode"]) == (rt, mode)]
    died = [r for r in crashes if (r["runtime"], r["mode"]) == (rt, mode)]
    if died:
        lines.append("%-8s %-8s   the app died in %d of %d rounds: %s" % (rt, mode, len(died), len(died) + len(rs),
                                                                       died[0]["crashed"]))
    if not rs:
        continue
    med = lambda k: statistics.median(r[k] for r in rs)
    lines.append("%-8s %-8s %6d %10.1f %8d %8d %6d %9s %9s %9s %9s %9s %9s %9s" % (
        rt, mode, len(rs), med("rundown_ms"), med("live"), med("bodies"), max(r["missed"] for r in rs),
        us(med("first_p50")), us(med("first_p99")), us(med("first_max")), us(med("thr_p99")), us(med("thr_max")),
        us(med("osr_max")), us(med("stall_max"))))
lines.append("(medians over rounds of: the calls that began inside the rundown's window (clr: the run of "
             "jitprov-clr-rundown, session set-up and stop included; rundown_ms: CoreCLR's DCEndInit to "
             "DCEndComplete; jitprov: rundown_begin to rundown_end); none: a 500 ms window at the same time; "
             "first: a new method's first call, its tier-0 JIT; thr: the slowest of calls 2 to 40 of a tier-0 "
             "method, one of which crosses the tier-up threshold (OnCallCountThresholdReached); osr: a new loop method's call, its tier-0 JIT and OSR transition "
             "(50 000 iterations); stall_max: the longest of the three; live: the JIT'd bodies CoreCLR's own "
             "MethodLoadVerbose events had loaded when the rundown began, less those unloaded (a method or its "
             "collectible module) before it ended; bodies: what the rundown reported; missed: live bodies it did "
             "not report, the most of any round)")
changed = [r for r in runs if r["mode"] != "none"]
lines.append("during the rundowns (sum over rounds): %d bodies loaded (%d tier-ups, %d OSR), %d unloads "
             "(methods and collectible modules); calls timed inside them: %d first, %d threshold, %d OSR" % (
                 sum(r["during"]["loads"] for r in changed), sum(r["during"]["tier1"] for r in changed),
                 sum(r["during"]["osr"] for r in changed), sum(r["during"]["unloads"] for r in changed),
                 sum(r["first_n"] for r in changed), sum(r["thr_n"] for r in changed),
                 sum(r["osr_n"] for r in changed)))
open(out + "/table.txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))

# The timeline (timeline.png): every measured method's first call (its tier-0 JIT) as a
# point at the time it began (x: seconds since the measured phase began, y: its latency,
# log), the rundown's window shaded; one panel per rundown of the first measured round,
# all on the same scales.
first_round = min(int(r["tag"].split("-")[0][1:]) for r in runs)
panels = [r for r in runs if int(r["tag"].split("-")[0][1:]) == first_round and r["mode"] != "none"]
panels.sort(key=lambda r: (r["mode"], r["runtime"]))
for r in panels:
    lat = [l.split() for l in open("%s/%s.lat" % (work, r["tag"]))]
    t0 = min(int(t) for _, t, _ in lat)
    for path in PATHS:
        with open("%s/timeline-%s-%s.dat" % (out, r["tag"], path), "w") as f:
            f.write("# seconds since the measured phase began, %s latency in us\n" % path)
            for p, t, d in lat:
                if p == path:
                    f.write("%.6f %.3f\n" % ((int(t) - t0) / 1e9, max(int(d), 100) / 1e3))
    r["_t0"] = t0 + r["offset"]
with open(out + "/timeline.gp", "w") as g:
    g.write('set terminal pngcairo size 1100,%d noenhanced font ",10"\n' % (170 + 230 * len(panels)))
    g.write('set output "%s/timeline.png"\n' % out)
    g.write('set multiplot layout %d,1 title "One app thread per JIT path: first (tier-0 JIT), thr (tier-up'
            ' threshold), osr (OSR); shaded: the rundown (CoreCLR: its whole session)" font ",11"\n' % len(panels))
    g.write('set logscale y 10\nset yrange [1:5e6]\nset ytics ("1 us" 1, "10 us" 10, "100 us" 100, "1 ms" 1000,'
            ' "10 ms" 10000, "100 ms" 100000, "1 s" 1e6)\nset xrange [0:8]\nset grid ytics\n')
    g.write('set ylabel "latency (log)"\nset key top left horizontal\n')
    for i, r in enumerate(panels):
        if r["mode"] == "jitprov":
            begin, end, _ = jitprov_window(r["tag"])
        else:
            begin, end = r["t0"], r["t1"]
        a, b = (begin - r["_t0"]) / 1e9, (end - r["_t0"]) / 1e9
        g.write('unset object\nunset label\n')
        g.write('set object 1 rect from %.4f, graph 0 to %.4f, graph 1 fc rgb "#f4c430" fs solid 0.35 noborder behind\n'
                % (a, max(b, a + 0.004)))
        g.write('set label 1 "rundown %.0f ms (%d bodies); longest call in it %.2f ms" at graph 0.99, graph 0.9'
                ' right front\n' % (r["rundown_ms"], r["bodies"], r["stall_max"] / 1e6))
        who = "CoreCLR's own rundown" if r["mode"] == "clr" else "jitprov's lock-free rundown (the .NET client)"
        g.write('set title "%s, runtime %s"\n' % (who, r["runtime"]))
        if i == len(panels) - 1:
            g.write('set xlabel "seconds since the measured phase began"\n')
        g.write('plot ' + ", ".join('"%s/timeline-%s-%s.dat" using 1:2 with points pt 7 ps 0.3 lc rgb "%s" %s'
                                     % (out, r["tag"], path, color, ("title \"%s\"" % path) if i == 0 else "notitle")
                                     for path, color in (("first", "#606060"), ("thr", "#2060c0"),
                                                         ("osr", "#c03020"))) + "\n")
    g.write("unset multiplot\n")
import subprocess
if subprocess.call(["gnuplot", out + "/timeline.gp"]) != 0:
    sys.exit("bench-dotnet: gnuplot failed")
print("bench-dotnet: table in %s/table.txt, timeline in %s/timeline.png" % (out, out))
