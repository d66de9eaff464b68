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
#   jitdump_lines.py JAVAP_OUTPUT SYMBOL ANNOTATE_OUTPUT [SYMBOL ANNOTATE_OUTPUT...]
import re, sys


def javap_ranges(path):
    """(class, method) -> (first line, last line) from `javap -l -p` of the classes."""
    ranges, cls, method = {}, None, None
    for line in open(path):
        m = re.match(r"(?:public |final |abstract )*class (\S+) .*\{$|(?:public |final |abstract )*class (\S+)\s*\{$",
                     line.strip())
        if m:
            cls, method = m.group(1) or m.group(2), None
            continue
        if re.match(r"  \S.*\);$|  static \{\};$", line):  # a member: a method, a constructor, <clinit>
            m = re.search(r"([\w$]+)\(.*\);$", line)
            method = m.group(1) if m and "." not in m.group(1) else None
            continue
        m = re.match(r"\s+line (\d+): \d+$", line)
        if m and cls and method:
            lo, hi = ranges.get((cls, method), (10**9, 0))
            n = int(m.group(1))
            ranges[(cls, method)] = (min(lo, n), max(hi, n))
    return ranges


def main():
    ranges = javap_ranges(sys.argv[1])
    pairs = list(zip(sys.argv[2::2], sys.argv[3::2]))
    samples = {"in": 0.0, "out": 0.0, "none": 0.0}  # samples by where perf put their line
    shown = {"in": 0, "out": 0}  # lines shown between the instructions
    files, bad, judged, example = set(), [], 0, None
    for sym, path in pairs:
        cls, meth = sym.split("::")
        r = ranges.get((cls, meth))
        want = cls.replace(".", "/") + ".java"
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
