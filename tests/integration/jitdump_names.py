#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The jitdump test's judge: reads jit-PID.dump (a reader of its own: the layout of
# jitdump-specification.txt), the samples of one perf run read twice by `perf script`
# (through the perf map, and after `perf inject --jit`), and counts, for every sample in
# JIT code, whether each reading names the method that occupied the sample's address at
# the sample's time: the newest JIT_CODE_LOAD covering the address stamped at or before
# the sample. Samples in reused ranges (an address with more than one load) apart.
#   jitdump_names.py DUMP MAP_SCRIPT INJECT_SCRIPT  (perf script -F time,ip,sym --ns)
import bisect, re, struct, sys
from collections import defaultdict


def read_dump(path):
    b = open(path, "rb").read()
    magic, version, hsize = struct.unpack_from("<III", b, 0)
    assert magic == 0x4A695444 and version == 1, (hex(magic), version)
    off, loads = hsize, []
    while off + 16 <= len(b):
        rid, total, ts = struct.unpack_from("<IIQ", b, off)
        assert total >= 16 and off + total <= len(b), ("torn record", off)
        if rid == 0:
            _pid, _tid, _vma, addr, size, _idx = struct.unpack_from("<IIQQQQ", b, off + 16)
            name = b[off + 56:b.index(b"\0", off + 56)].decode("utf-8", "replace")
            loads.append((ts, addr, size, name))
        off += total
    assert off == len(b), "trailing bytes"
    return loads


def norm(name):  # the dump names stubs hotspot::NAME, the perf map NAME
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


def main():
    loads = read_dump(sys.argv[1])
    # Page -> loads covering it, for the lookup.
    by_page = defaultdict(list)
    for ts, addr, size, name in loads:
        for p in range(addr >> 12, ((addr + size - 1) >> 12) + 1):
            by_page[p].append((ts, addr, size, name))
    for p in by_page:
        by_page[p].sort()

    def truth(ip, t):
        best, covering = None, 0
        for ts, addr, size, name in by_page.get(ip >> 12, ()):
            if addr <= ip < addr + size:
                covering += 1
                if ts <= t:
                    best = name
        return best, covering

    via_map, via_inject = samples(sys.argv[2]), samples(sys.argv[3])
    assert len(via_map) == len(via_inject) and via_map, (len(via_map), len(via_inject))
    counts = {k: {"right": 0, "wrong": 0, "unnamed": 0} for k in ("map", "inject", "map_reused", "inject_reused")}
    jit = reused = 0
    wrong_examples = []
    for (t, ip, sym_map), (t2, ip2, sym_inj) in zip(via_map, via_inject):
        assert t == t2, "the two readings are not the same samples"
        name, covering = truth(ip, t)
        if name is None:
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
                if key == "inject" and len(wrong_examples) < 5:
                    wrong_examples.append((t, hex(ip), sym, name))
            counts[key][verdict] += 1
            if is_reused:
                counts[key + "_reused"][verdict] += 1
    print("loads in the dump: %d; samples: %d, in JIT code: %d, in reused ranges: %d" % (len(loads), len(via_map), jit, reused))
    print("%-22s %8s %8s %8s" % ("", "right", "wrong", "unnamed"))
    for key, label in (("map", "perf map, all"), ("inject", "jitdump, all"), ("map_reused", "perf map, reused"),
                       ("inject_reused", "jitdump, reused")):
        c = counts[key]
        print("%-22s %8d %8d %8d" % (label, c["right"], c["wrong"], c["unnamed"]))
    if wrong_examples:
        print("jitdump wrong, e.g. (time, ip, named, truth):", wrong_examples)
    ok = (jit > 0 and counts["inject"]["wrong"] == 0 and counts["inject"]["unnamed"] == 0 and reused > 0 and
          counts["inject_reused"]["right"] > counts["map_reused"]["right"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
