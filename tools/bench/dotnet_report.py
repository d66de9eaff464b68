#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/bench-dotnet's report: per runtime and mode, the JIT-path latencies of the
calls that began inside the rundown's window (first calls: the tier-0 JIT; threshold
calls: the one that crosses the tier-up threshold), medians over the rounds.
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


def loads_before(tag, mono_ns):
    """The bodies CoreCLR's own MethodLoadVerbose events loaded before mono_ns."""
    live = set()
    for line in open("%s/%s.loads.tsv" % (work, tag), encoding="utf-8"):
        cols = line.rstrip("\n").split("\t")
        if int(cols[8]) < mono_ns:
            live.add(int(cols[0], 16))
    return live


runs = []
for tag in tags:
    meta = json.load(open("%s/%s.json" % (work, tag)))
    lat = [tuple(map(int, l.split())) for l in open("%s/%s.lat" % (work, tag))]
    lat = [(t + meta["offset"], first, thr) for t, first, thr in lat]
    live = reported = set()
    if meta["mode"] == "jitprov":
        begin, end, reported = jitprov_window(tag)
        assert begin is not None and end is not None, "%s: no complete jitprov rundown in the trace" % tag
        live = loads_before(tag, begin - meta["offset"])
    elif meta["mode"] == "clr":
        begin, end = meta["t0"], meta["t1"]
        reported = {int(l.split("\t")[0], 16) for l in open("%s/%s.tsv" % (work, tag))}
        text = open("%s/%s.clr.txt" % (work, tag)).read()
        meta["clr_ms"] = float(text.split("rundown ")[1].split(" ms")[0])
        live = loads_before(tag, int(text.split("(qpc ")[1].split(" ")[0]))
    else:
        begin, end = meta["t0"], meta["t0"] + 500_000_000
    bodies = len(reported)
    meta["live"], meta["missed"] = len(live), len(live - reported)
    inside = [r for r in lat if begin <= r[0] <= end]
    first = sorted(r[1] for r in inside)
    thr = sorted(r[2] for r in inside)
    rundown_ms = meta.get("clr_ms", (end - begin) / 1e6 if meta["mode"] == "jitprov" else 0)
    runs.append(dict(meta, tag=tag, window_ms=(end - begin) / 1e6, rundown_ms=rundown_ms, bodies=bodies,
                     calls=len(inside),
                     first_p50=q(first, .5), first_p99=q(first, .99), first_max=first[-1] if first else 0,
                     thr_p50=q(thr, .5), thr_p99=q(thr, .99), thr_max=thr[-1] if thr else 0,
                     stall_max=max([r[1] for r in inside] + [r[2] for r in inside] + [0])))
json.dump(runs, open(out + "/runs.json", "w"), indent=1)

lines = ["%-8s %-8s %6s %10s %9s %8s %8s %7s %10s %10s %10s %10s %10s %10s" % (
    "runtime", "rundown", "rounds", "rundown_ms", "window_ms", "live", "bodies", "missed", "first_p50", "first_p99", "first_max", "thr_p50",
    "thr_p99", "stall_max")]
keys = []
for r in runs:
    if (r["runtime"], r["mode"]) not in keys:
        keys.append((r["runtime"], r["mode"]))
for rt, mode in keys:
    rs = [r for r in runs if (r["runtime"], r["mode"]) == (rt, mode)]
    med = lambda k: statistics.median(r[k] for r in rs)
    lines.append("%-8s %-8s %6d %10.1f %9.1f %8d %8d %7d %8.1fus %8.1fus %8.2fms %8.1fus %8.1fus %8.2fms" % (
        rt, mode, len(rs), med("rundown_ms"), med("window_ms") if mode != "none" else 0, med("live"), med("bodies"),
        max(r["missed"] for r in rs), med("first_p50") / 1e3,
        med("first_p99") / 1e3, med("first_max") / 1e6, med("thr_p50") / 1e3, med("thr_p99") / 1e3,
        med("stall_max") / 1e6))
lines.append("(medians over rounds of: the calls that began inside the rundown's window (clr: the run of "
             "jitprov-clr-rundown, session set-up and stop included; rundown_ms: CoreCLR's DCEndInit to "
             "DCEndComplete; jitprov: rundown_begin to rundown_end); none: a 500 ms window at "
             "the same time; first: a new method's first call, its tier-0 JIT; thr: its call crossing the tier-up "
             "threshold; stall_max: the longest of either; live: the JIT'd bodies CoreCLR's own MethodLoadVerbose events "
             "had loaded when the rundown began; bodies: what the rundown reported; missed: live bodies it did not "
             "report, the most of any round)")
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
    lat = [tuple(map(int, l.split())) for l in open("%s/%s.lat" % (work, r["tag"]))]
    t0 = lat[0][0]
    with open("%s/timeline-%s.dat" % (out, r["tag"]), "w") as f:
        f.write("# seconds since the measured phase began, first-call latency in us\n")
        for t, first, _ in lat:
            f.write("%.6f %.3f\n" % ((t - t0) / 1e9, max(first, 100) / 1e3))
    r["_t0"] = t0 + r["offset"]
with open(out + "/timeline.gp", "w") as g:
    g.write('set terminal pngcairo size 1100,%d noenhanced font ",10"\n' % (170 + 230 * len(panels)))
    g.write('set output "%s/timeline.png"\n' % out)
    g.write('set multiplot layout %d,1 title "Each new method\'s first call (its tier-0 JIT), 4000 a second;'
            ' shaded: the rundown (CoreCLR: its whole EventPipe session)" font ",12"\n' % len(panels))
    g.write('set logscale y 10\nset yrange [1:5e6]\nset ytics ("1 us" 1, "10 us" 10, "100 us" 100, "1 ms" 1000,'
            ' "10 ms" 10000, "100 ms" 100000, "1 s" 1e6)\nset xrange [0:8]\nset grid ytics\n')
    g.write('set ylabel "first call (log)"\n')
    for i, r in enumerate(panels):
        if r["mode"] == "jitprov":
            begin, end, _ = jitprov_window(r["tag"])
        else:
            begin, end = r["t0"], r["t1"]
        a, b = (begin - r["_t0"]) / 1e9, (end - r["_t0"]) / 1e9
        g.write('unset object\nunset label\n')
        g.write('set object 1 rect from %.4f, graph 0 to %.4f, graph 1 fc rgb "#f4c430" fs solid 0.35 noborder behind\n'
                % (a, max(b, a + 0.004)))
        g.write('set label 1 "rundown %.0f ms (%d bodies); longest first call in it %.2f ms" at graph 0.99, graph 0.9'
                ' right front\n' % (r["rundown_ms"], r["bodies"], r["first_max"] / 1e6))
        who = "CoreCLR's own rundown" if r["mode"] == "clr" else "jitprov's lock-free rundown (the .NET client)"
        g.write('set title "%s, runtime %s"\n' % (who, r["runtime"]))
        if i == len(panels) - 1:
            g.write('set xlabel "seconds since the measured phase began"\n')
        g.write('plot "%s/timeline-%s.dat" using 1:2 with points pt 7 ps 0.3 lc rgb "#606060" notitle\n'
                % (out, r["tag"]))
    g.write("unset multiplot\n")
import subprocess
if subprocess.call(["gnuplot", out + "/timeline.gp"]) != 0:
    sys.exit("bench-dotnet: gnuplot failed")
print("bench-dotnet: table in %s/table.txt, timeline in %s/timeline.png" % (out, out))
