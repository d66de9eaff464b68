#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The jitdump test's judge of source lines. perf inject --jit turns the agent's
# JIT_CODE_DEBUG_INFO records into each jitted ELF's DWARF line table; `perf annotate
# --stdio -l -s M` of the injected profile shows, for workload method M, the source
# lines of its samples ("Sorted summary": percent FILE:LINE) and every line of its code
# between the instructions (FILE:LINE). Judged against an independent source: the
# classes' own LineNumberTables as `javap -l` prints them. Every line perf shows for M
# must lie in M's line range (from its first to its last line), in M's source file
# (the agent writes jitwork/GenN.java: package directory and SourceFile).
# And, with --elves DIR, the DWARF line tables themselves of every workload method's
# jitted ELF in DIR (perf inject's jitted-PID-N.so, read by readelf: tens of thousands
# in a few seconds): every row in the method's range and file, and the rows covering
# the code from the symbol's start to its end.
#   jitdump_lines.py JAVAP_OUTPUT [--elves DIR] SYMBOL ANNOTATE_OUTPUT [SYMBOL ANNOTATE_OUTPUT...]
import os, re, subprocess, sys


def javap_ranges(path):
    """(class, method) -> (first line, last line) from `javap -l -p` of the classes."""
    ranges, cls, method = {}, None, None
    for line in open(path):
        m = re.match(r"(?:(?:public|private|protected|static|final|abstract) )*class (\S+)(?: .*)?\{$", line.strip())
        if m:
            cls, method = m.group(1), None
            continue
        if re.match(r"  \S.*\)(?: throws [\w.$, ]+)?;$|  static \{\};$", line):  # a method, a constructor, <clinit>
            m = re.search(r"([\w$.]+)\(", line)
            method = m.group(1) if m and "." not in m.group(1) else None
            continue
        m = re.match(r"\s+line (\d+): \d+$", line)
        if m and cls and method:
            lo, hi = ranges.get((cls, method), (10**9, 0))
            n = int(m.group(1))
            ranges[(cls, method)] = (min(lo, n), max(hi, n))
    return ranges


def source(cls):  # jitwork.JitWorkload$Phase -> jitwork/JitWorkload.java
    return cls.split("$")[0].replace(".", "/") + ".java"


def check_elves(ranges, d):
    """The line tables of the jitted ELFs of d: (workload ELFs, run loops, rows in, out, covered, bad)."""
    pick = sorted(f for f in os.listdir(d) if f.startswith("jitted-") and f.endswith(".so"))
    out = "".join(
        subprocess.run(["readelf", "-W", "-s", "--debug-dump=decodedline"] + pick[i:i + 4000], cwd=d,
                       capture_output=True, text=True).stdout for i in range(0, len(pick), 4000))
    elves = runs = rows_in = rows_out = covered = 0
    bad = []
    for block in out.split("\nFile: ")[1:]:
        m = re.search(r"^\s+\d+: ([0-9a-f]+)\s+(\d+) FUNC .* (jitwork\.[\w$]+)::([\w$]+)$", block, re.M)
        if not m:
            continue  # a stub, a JDK method
        start, size, cls, meth = int(m.group(1), 16), int(m.group(2)), m.group(3), m.group(4)
        r, want = ranges.get((cls, meth)), source(cls)
        rows = re.findall(r"^(\S+\.java)\s+(\d+|-)\s+0x([0-9a-f]+)", block, re.M)
        elves += 1
        runs += len({line for _, line, _ in rows if line != "-"}) > 1
        for f, line, addr in rows:
            if line == "-":
                continue
            ok = r is not None and f == want and r[0] <= int(line) <= r[1]
            rows_in += ok
            rows_out += not ok
            if not ok and len(bad) < 5:
                bad.append((cls + "::" + meth, f, line, r))
        if rows and int(rows[0][2], 16) == start and rows[-1][1] == "-" and int(rows[-1][2], 16) == start + size:
            covered += 1
    return elves, runs, rows_in, rows_out, covered, bad


def main():
    ranges = javap_ranges(sys.argv[1])
    args = sys.argv[2:]
    elves = None
    if args[:1] == ["--elves"]:
        elves = check_elves(ranges, args[1])
        args = args[2:]
        print("DWARF lines (readelf) of every workload method's jitted ELF: %d ELFs (%d of more than one line), rows in the "
              "method's javap range %d, out %d; code covered from start to end: %d of %d" %
              (elves[0], elves[1], elves[2], elves[3], elves[4], elves[0]))
        if elves[5]:
            print("not in the method's range, e.g. (method, file, line, javap range):", elves[5])
        if elves[0] == 0 or elves[3] != 0 or elves[4] != elves[0]:
            return 1
    pairs = list(zip(args[0::2], args[1::2]))
    samples = {"in": 0.0, "out": 0.0, "none": 0.0}  # samples by where perf put their line
    shown = {"in": 0, "out": 0}  # lines shown between the instructions
    files, bad, judged, example = set(), [], 0, None
    for sym, path in pairs:
        cls, meth = sym.split("::")
        r = ranges.get((cls, meth))
        want = source(cls)
        if r is None:
            print("FAIL: javap lists no line table for", sym)
            return 1
        judged += 1
        # One block per jitted ELF of the method (one per compilation with samples).
        blocks = open(path).read().split("Sorted summary for file")[1:]
        if not blocks:
            print("FAIL: perf annotate -l shows nothing of", sym)
            return 1
        for text in blocks:
            m = re.search(r"\((\d+) samples", text)
            n_samples = int(m.group(1)) if m else 0
            for pct, f, n in re.findall(r"^\s+([\d.]+) (\S+\.java):(\d+)$", text, re.M):
                ok = (f == want or want.endswith("/" + f)) and r[0] <= int(n) <= r[1]
                samples["in" if ok else "out"] += float(pct) * n_samples / 100
                example = example or "%s: %s %s:%s" % (sym, pct, f, n)
                if not ok and len(bad) < 5:
                    bad.append((sym, f, int(n), r))
            for pct in re.findall(r"^\s+([\d.]+) \?\?:0$", text, re.M):
                samples["none"] += float(pct) * n_samples / 100
            for f, n in re.findall(r"^\s+:\s+\d+\s+(\S+\.java):(\d+)$", text, re.M):
                files.add(f)
                ok = f == want and r[0] <= int(n) <= r[1]
                shown["in" if ok else "out"] += 1
                if not ok and len(bad) < 5:
                    bad.append((sym, f, int(n), r))
    print("srcline: %d JIT'd workload methods annotated (perf annotate -l; e.g. %s), files %s: samples on a line "
          "in the method's javap line range %d, out of it %d, on no line %d; lines shown between the "
          "instructions: %d in range, %d out" % (judged, example, sorted(files)[:3], round(samples["in"]),
                                                round(samples["out"]), round(samples["none"]), shown["in"],
                                                shown["out"]))
    if bad:
        print("not in the method's range, e.g. (method, file, line, javap range):", bad)
    return 0 if judged > 0 and samples["in"] > 0 and samples["out"] == 0 and shown["out"] == 0 and shown["in"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
