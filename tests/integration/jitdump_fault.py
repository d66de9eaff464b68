#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Test-only: breaks a jit-PID.dump in place, before `perf inject --jit` reads it, as a
# writer bug would, so that the jitdump test shows its judge (jitdump_names.py, which
# reads the lttng trace, not the dump) fails on a wrong dump:
#   shift:MS  every JIT_CODE_LOAD stamped MS ms late
#   swap      the names of successive pairs of loads swapped
#   nomoves   the loads of a code object already loaded at another address (same name
#             and size: a move, as the Node.js client writes one) dropped
#   jitdump_fault.py DUMP FAULT
import struct, sys


def main():
    path, fault = sys.argv[1], sys.argv[2]
    b = bytearray(open(path, "rb").read())
    hsize = struct.unpack_from("<I", b, 8)[0]
    off, recs = hsize, []
    while off + 16 <= len(b):
        rid, total = struct.unpack_from("<II", b, off)
        recs.append((rid, bytes(b[off:off + total])))
        off += total
    out, pending = [], None
    changed = 0
    seen = {}  # (name, size) -> the address of its first load
    for rid, r in recs:
        if rid == 0 and fault == "nomoves":
            addr, size = struct.unpack_from("<QQ", r, 32)
            key = (r[56:r.index(b"\0", 56)], size)
            if seen.setdefault(key, addr) != addr:
                changed += 1
                continue
        elif rid == 0 and fault.startswith("shift:"):
            ts = struct.unpack_from("<Q", r, 8)[0] + int(fault[6:]) * 1000000
            r = r[:8] + struct.pack("<Q", ts) + r[16:]
            changed += 1
        elif rid == 0 and fault == "swap":
            if pending is None:
                pending = len(out)
            else:  # rebuild both records with each other's name
                a = out[pending]
                na, nb = a[56:a.index(b"\0", 56)], r[56:r.index(b"\0", 56)]
                ca, cb = a[a.index(b"\0", 56) + 1:], r[r.index(b"\0", 56) + 1:]
                a = bytearray(a[:56] + nb + b"\0" + ca)
                r = bytearray(r[:56] + na + b"\0" + cb)
                struct.pack_into("<I", a, 4, len(a))
                struct.pack_into("<I", r, 4, len(r))
                out[pending] = bytes(a)
                r = bytes(r)
                pending = None
                changed += 2
        out.append(r)
    if not fault.startswith("shift:") and fault not in ("swap", "nomoves"):
        sys.exit("jitdump_fault.py: unknown fault " + fault)
    open(path, "wb").write(bytes(b[:hsize]) + b"".join(out))
    print("fault %s: %d load records %s" % (fault, changed, "dropped" if fault == "nomoves" else "changed"))


if __name__ == "__main__":
    main()
