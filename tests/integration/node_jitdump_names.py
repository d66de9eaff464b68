#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The node-jitdump test's judge (node_jitdump.sh): what share of the samples in V8's
JIT code does `perf inject --jit` of the Node.js client's jitdump name?

  node_jitdump_names.py V8_LOG RAW_SCRIPT INJECT_SCRIPT PID MIN_SHARE MIN_JIT

RAW_SCRIPT and INJECT_SCRIPT: `perf script -F pid,time,ip,sym,dso --ns -G` of the same
perf run, before and after `perf inject --jit`.

Which samples are in V8's JIT code is decided without jitprov: a sample of the node
process whose address perf itself (its own mmap records, before the injection) places
in anonymous memory (perf names every anonymous executable mapping after
/tmp/perf-PID.map, whether that file exists or not; the test writes none). V8 keeps its
builtins and bytecode handlers in the node binary, so those are node's own samples, not
judged. A judged sample is named when, after the injection, it lands in one of the
jitted-PID-N.so files perf inject wrote from the dump and has a symbol there.

And a named sample is named right when its name is one V8's own code log (--log-code,
replayed as v8log_check.py does: creations and moves) gives a code object covering that
address at some time of the run (the log's clock is V8's, not perf's: the time is not
judged here; the node-tsc test checks the client's names, addresses and sizes against
the same log at a moment).

Through code moves: the samples at an address some code object was moved to
(code-move targets of V8's log, --compact-on-every-full-gc) are counted apart; the share
named there must be at least MIN_SHARE too, when there are any.

Passes when at least MIN_JIT samples are judged (MIN_MOVED of them at moved addresses), at least MIN_SHARE (a fraction) of them
are named, and of the named ones at least 99 % right by V8's log. Prints the counts.
"""
import re
import sys
from collections import Counter, defaultdict

LINE = re.compile(r"\s*(\d+)\s+(\d+)\.(\d+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
MARKERS = "~^+*"
MIN_MOVED = 5  # samples at addresses V8 moved code to: "through code moves" needs some


def read_script(path, pid):
    out = []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = LINE.match(line)
        if not m or int(m.group(1)) != pid:
            continue
        sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(5))
        out.append((int(m.group(4), 16), sym, m.group(6)))
    return out


def bare(name):
    """A perf name as V8's log writes it: "JS:^f a.js:1:2" and "^f a.js:1:2" -> "f a.js:1:2"
    (V8 logs the tier marker apart), "RegExp::^a+" -> "^a+" (V8 logs the source alone);
    spaces around dropped (an anonymous function is " a.js:1:2" in V8's log)."""
    for prefix in ("RegExp::", "Builtin::", "BytecodeHandler::", "RegExp:", "Builtin:"):
        if name.startswith(prefix):
            return name[len(prefix):].strip()
    if name.startswith("JS:"):
        name = name[3:]
    if name[:1] in MARKERS:
        name = name[1:]
    return name.strip()


def v8_ranges(path):
    """Every placement of a code object in V8's log: (start, end, bare name), and the
    move targets apart. Pages -> placements."""
    by_page, moved_pages = defaultdict(list), defaultdict(list)
    obj = {}  # start -> (size, name): the live objects, for moves
    creations = moves = 0
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("code-creation,"):
            p = line.rstrip("\n").split(",")
            try:
                a, size = int(p[4], 16), int(p[5])
            except (IndexError, ValueError):
                continue
            name = ",".join(p[6:-2]) if p[1] in ("JS", "Eval", "Function", "Script") and len(p) >= 9 \
                else ",".join(p[6:])
            name = name.replace("\\x2C", ",").replace("\\\\", "\\").strip()
            if size <= 0:
                continue
            obj[a] = (size, name)
            creations += 1
            for pg in range(a >> 12, ((a + size - 1) >> 12) + 1):
                by_page[pg].append((a, a + size, name))
        elif line.startswith("code-move,"):
            p = line.rstrip("\n").split(",")
            try:
                src, dst = int(p[1], 16), int(p[2], 16)
            except (IndexError, ValueError):
                continue
            moves += 1
            o = obj.pop(src, None)
            if o is None:
                continue  # bytecode and other objects never logged as code
            size, name = o
            obj[dst] = o
            for pg in range(dst >> 12, ((dst + size - 1) >> 12) + 1):
                by_page[pg].append((dst, dst + size, name))
                moved_pages[pg].append((dst, dst + size))
    return by_page, moved_pages, creations, moves


def main():
    log, raw_path, inj_path, pid, min_share, min_jit = sys.argv[1:7]
    pid, min_share, min_jit = int(pid), float(min_share), int(min_jit)
    by_page, moved_pages, creations, moves = v8_ranges(log)
    raw, inj = read_script(raw_path, pid), read_script(inj_path, pid)
    if len(raw) != len(inj) or not raw:
        print("FAIL: the two readings differ in their samples of pid %d: %d and %d" % (pid, len(raw), len(inj)))
        return 1
    anon = re.compile(r"^(/tmp/perf-\d+\.map|//anon|\[anon.*\]|anon_inode:.*|/memfd:.*)$")
    jitted = re.compile(r"(^|/)jitted-\d+-\d+\.so$")
    n = Counter()
    wrong_examples, unnamed_dsos, other_dsos = [], Counter(), Counter()
    for (ip, _, dso_raw), (ip2, sym, dso) in zip(raw, inj):
        if ip != ip2:
            print("FAIL: the two readings are not the same samples")
            return 1
        if not anon.match(dso_raw):
            other_dsos[dso_raw] += 1
            continue
        n["jit"] += 1
        in_moved = any(s <= ip < e for s, e in moved_pages.get(ip >> 12, ()))
        n["moved"] += in_moved
        if not jitted.search(dso) or sym in ("[unknown]", ""):
            unnamed_dsos[dso] += 1
            continue
        n["named"] += 1
        n["moved_named"] += in_moved
        names = {name for s, e, name in by_page.get(ip >> 12, ()) if s <= ip < e}
        if bare(sym) in names:
            n["right"] += 1
        elif len(wrong_examples) < 5:
            wrong_examples.append((hex(ip), sym, sorted(names)[:3]))
    share = n["named"] / n["jit"] if n["jit"] else 0.0
    moved_share = n["moved_named"] / n["moved"] if n["moved"] else 1.0
    right = n["right"] / n["named"] if n["named"] else 0.0
    print("V8's log: %d code objects created, %d code moves; samples of pid %d: %d, in anonymous (JIT) memory: %d "
          "(elsewhere: %s)" % (creations, moves, pid, len(raw), n["jit"],
                               ", ".join("%s %d" % kv for kv in other_dsos.most_common(4))))
    print("named by perf inject --jit (jitted-*.so): %d of %d JIT samples (%.1f %%); at addresses V8 moved code to: "
          "%d of %d (%.1f %%); named right by V8's log: %d of %d (%.1f %%)" %
          (n["named"], n["jit"], 100 * share, n["moved_named"], n["moved"], 100 * moved_share, n["right"],
           n["named"], 100 * right))
    if unnamed_dsos:
        print("unnamed, by where perf put them after the injection:", dict(unnamed_dsos.most_common(5)))
    if wrong_examples:
        print("named, not as V8's log has it there, e.g. (ip, named, V8's names):", wrong_examples)
    ok = n["jit"] >= min_jit and n["moved"] >= MIN_MOVED and share >= min_share and moved_share >= min_share \
        and right >= 0.99
    if not ok:
        print("FAIL: want >= %d JIT samples (%d at addresses V8 moved code to), >= %.0f %% named (overall and at "
              "moved addresses), >= 99 %% of them right" % (min_jit, MIN_MOVED, 100 * min_share))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
