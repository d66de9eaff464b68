#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""One node process's rundown against V8's own code log (the node-crosscheck test):

  v8log_check.py TRACE LABEL DIR MIN_LIVE [--min-moves N] [--min-reused N] [--program]

DIR holds that process's files: pid, client.json (the client's stats), window (the
times, ns since the epoch, when the program's quiet moment began and when it was told
to end it), and V8's logs, one per isolate (`--log-code --logfile=DIR/v8.log`: V8
names them isolate-ADDR-PID-v8.log; one file for all isolates, --no-logfile-per-isolate,
loses lines: each isolate opens it anew, and the main thread's lines before a worker
starts are gone, seen on node 20.20.2).

V8's account: each log replayed in order; `code-creation` makes an object at
[addr, addr + size), `code-move FROM TO` moves the object at FROM; an object is dead
once a later creation or move target overlaps its range (V8 logs no deletes); the same
object logged again (same address, size and name: an enumeration) is not a new one.
The main isolate's log is replayed up to the marker function jitprov_quiet_end of
jitprov-marker.js (compiled after the rundown was taken); the worker that ended before
the quiet moment (its scripts are early*.js) is dead with all its code; the other
worker, idle until the end, to the end of its log.

--late: a fourth log, of a worker started after the attach (its scripts are late*.js),
idle until the end like the steady one, replayed to its end.

--single: one log for the main isolate alone (DIR/v8.log, --no-logfile-per-isolate: the
node-attach test's workload runs no worker), replayed to the marker, against the last
rundown in the window.

--program: a program of one isolate that ran to its end (tsc): its one log replayed whole,
against the last complete rundown of the process (the exit rundown); no window file.

Checks:
  - every Sparkplug, Maglev and TurboFan object (kinds 11, 12, 13) of V8's account is
    in the last rundown that began after the quiet moment and ended before its end,
    with the same address, size, name and kind (host_tier); at least MIN_LIVE of them;
  - no record of that rundown is stale: each JS record is an object of V8's account at
    that address with that size and name, and no record sits on a range V8's log
    shows reused (a later object overlapping it) without being that later object;
  - --min-moves: V8's logs hold at least N code-move lines (the GC moved code);
    --min-reused: at least N objects were created on the range of an earlier one;
  - the client counted no error and refused nothing.
Prints one line, "LABEL v8log: N of N ...; 0 stale". Exits 1 with its reason on stderr.
"""
import argparse
import bisect
import glob
import json
import os
import sys

import bt2read  # babeltrace2's Python bindings: decoded fields

OPTIMIZED_KINDS = (11, 12, 13)  # Sparkplug, Maglev, TurboFan: V8's CodeKind
MARKER = "jitprov_quiet_end jitprov-marker.js"


class CheckFailed(Exception):
    pass


def check(ok, what):
    if not ok:
        raise CheckFailed(what)


def unescape(s):
    # V8's log writes ',' as \x2C and '\' as \\ (and non-ASCII as \uXXXX: not in the
    # workload's names).
    return s.replace("\\x2C", ",").replace("\\\\", "\\")


class Heap:
    """Live objects of one address space: start -> (end, kind, name). Counts reuse."""

    def __init__(self):
        self.starts, self.obj, self.reused, self.moves, self.created = [], {}, 0, 0, 0
        self.born = {}  # start -> V8's time of the creation (us since the isolate began)
        self.enumerations, self.unlisted = 0, 0  # V8's enumerations; optimized objects they left out

    def drop_unlisted(self, listed, kinds):
        """After an enumeration: the objects of `kinds` that it did not list are dead."""
        for a in [a for a, o in self.obj.items() if o[1] in kinds and a not in listed]:
            del self.obj[a]
            self.starts.pop(bisect.bisect_left(self.starts, a))
            self.unlisted += 1

    def _kill(self, a, e, keep=None):
        i = bisect.bisect_left(self.starts, a)
        if i > 0 and self.obj[self.starts[i - 1]][0] > a:
            i -= 1
        killed = 0
        while i < len(self.starts) and self.starts[i] < e:
            s = self.starts[i]
            if keep is not None and s == a and self.obj[s] == keep:
                i += 1
                continue
            del self.obj[s]
            self.starts.pop(i)
            killed += 1
        return killed

    def place(self, a, size, kind, name, t=0):
        o = (a + size, kind, name)
        if self.obj.get(a) == o:
            return  # the same object logged again
        self.born[a] = t
        if self._kill(a, a + size, o):
            self.reused += 1
        bisect.insort(self.starts, a)
        self.obj[a] = o
        self.created += 1

    def move(self, src, dst):
        o = self.obj.pop(src, None)
        self.moves += 1
        if o is None:
            return  # an object never logged as created (bytecode's moves are logged too)
        self.starts.pop(bisect.bisect_left(self.starts, src))
        size = o[0] - src
        self._kill(dst, dst + size)
        bisect.insort(self.starts, dst)
        self.obj[dst] = (dst + size, o[1], o[2])
        self.born[dst] = self.born.get(src, 0)


def replay(path, heap, stop_at_marker):
    """Replays one log into heap; returns whether it reached the marker.

    V8's enumeration of its existing code (a handler installed with
    kJitCodeEventEnumExisting: an attached client) is logged too: its builtins again,
    then every code object V8 still holds, each at its address. It is V8's own list of
    what lives then: an optimized object it does not list is dead (superseded or
    deoptimized code that no later object overlapped yet, which the log alone would keep
    alive). It begins with a builtin logged after JS code, and ends at the first JS
    creation that is not an object already there (new code: V8 compiles none meanwhile)."""
    seen_js, listed = False, None
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("code-creation,"):
            p = line.rstrip("\n").split(",")
            try:
                kind, t, a, size = int(p[2]), int(p[3]), int(p[4], 16), int(p[5])
            except (IndexError, ValueError):
                continue
            # JS code: ...,NAME,SFI,STATE; others: ...,NAME (the name may hold commas).
            name = unescape(",".join(p[6:-2]) if p[1] in ("JS", "Eval", "Function", "Script") and len(p) >= 9
                            else ",".join(p[6:]))
            js = p[1] in ("JS", "Eval", "Function", "Script")
            if p[1] == "Builtin" and seen_js and listed is None:
                listed = set()
                heap.enumerations += 1
            if js and listed is not None and size > 0:
                o = heap.obj.get(a)
                if o is not None and o[0] == a + size and o[1] == kind:
                    listed.add(a)
                else:
                    heap.drop_unlisted(listed, OPTIMIZED_KINDS)
                    listed = None
            seen_js = seen_js or js
            if stop_at_marker and name.startswith(MARKER):
                return True
            # A script's top-level code that V8 enumerates (kJitCodeEventEnumExisting, its
            # LogExistingFunction): its log names it by the script alone, its JIT code
            # event by " " and the script (V8's CodeEventLogger, for a Script tag without
            # a line): the event's name is the account's. Only Sparkplug code of a
            # top-level script made before the handler is named so (--always-sparkplug).
            if p[1] == "Script":
                name = " " + name
            if size > 0:
                heap.place(a, size, kind, name, t)
        elif line.startswith("code-move,"):
            p = line.rstrip("\n").split(",")
            try:
                src, dst = int(p[1], 16), int(p[2], 16)
            except (IndexError, ValueError):
                continue
            heap.move(src, dst)
            if listed is not None and src in listed:
                listed.discard(src)
                listed.add(dst)
    if listed is not None:
        heap.drop_unlisted(listed, OPTIMIZED_KINDS)
    return False


def main(trace, label, d, min_live, min_moves=0, min_reused=0, program=False, single=False, late=False):
    pid = int(open(d + "/pid").read())
    client = json.load(open(d + "/client.json"))
    if single:
        heap = Heap()
        check(replay(d + "/v8.log", heap, True), "%s: the marker %s is not in %s/v8.log" % (label, MARKER, d))
        window = tuple(int(x) for x in open(d + "/window"))
        return compare(trace, label, d, pid, client, [heap], [heap], window, min_live, min_moves, min_reused)
    logs = sorted(glob.glob(d + "/isolate-*-v8.log"))
    if program:
        check(len(logs) == 1, "%s: %d V8 logs, not 1: %s" % (label, len(logs), logs))
        heap = Heap()
        replay(logs[0], heap, False)
        return compare(trace, label, d, pid, client, [heap], [heap], None, min_live, min_moves, min_reused)
    roles = ["early", "main", "steady"] + (["late"] if late else [])
    check(len(logs) == len(roles), "%s: %d V8 logs, not %d (main thread, %d workers): %s" % (
        label, len(logs), len(roles), len(roles) - 1, logs))
    by_role = {}
    for path in logs:
        text = open(path, encoding="utf-8", errors="replace").read()
        role = ("main" if MARKER in text else "early" if "/gen/early0.js" in text else
                "late" if "/gen/late0.js" in text else "steady")
        check(role not in by_role, "%s: two logs look like the %s isolate's" % (label, role))
        by_role[role] = path
    check(sorted(by_role) == sorted(roles), "%s: isolates %s" % (label, sorted(by_role)))
    # One address space: the isolates' logs replayed into one heap would interleave wrongly
    # (each log has its own clock); live isolates hold disjoint code ranges, so each is
    # replayed alone and the ended worker's objects are all dead.
    main_heap, steady_heap, early_heap = Heap(), Heap(), Heap()
    check(replay(by_role["main"], main_heap, True), "%s: the marker %s is not in the main log" % (label, MARKER))
    replay(by_role["steady"], steady_heap, False)
    replay(by_role["early"], early_heap, False)
    live_heaps = [main_heap, steady_heap]
    if late:
        late_heap = Heap()
        replay(by_role["late"], late_heap, False)
        live_heaps.append(late_heap)
    window = tuple(int(x) for x in open(d + "/window"))
    return compare(trace, label, d, pid, client, live_heaps, live_heaps + [early_heap],
                   window, min_live, min_moves, min_reused)


def compare(trace, label, d, pid, client, live_heaps, all_heaps, window, min_live, min_moves, min_reused):
    """V8's account (the objects of live_heaps) against the last rundown in the window
    (None: the last complete rundown of the process)."""
    account = {}
    for h in live_heaps:
        for a, (e, kind, name) in h.obj.items():
            account[a] = (e - a, kind, name)
    live = {a: v for a, v in account.items() if v[1] in OPTIMIZED_KINDS}
    moves = sum(h.moves for h in all_heaps)
    reused = sum(h.reused for h in all_heaps)

    t_quiet, t_end = window if window is not None else (0, 2**63)
    # The records of the rundowns that begin in the window alone (bt2read.rundowns).
    rundowns, times, begins = [], [], []
    for begin, end, cur in bt2read.rundowns(trace, pid, lambda f: (f["code_size"], f["host_tier"], f["name"],
                                                                   f["namespace"]), lambda begin: begin >= t_quiet):
        times.append(((begin - t_quiet) / 1e9, (end - t_quiet) / 1e9))
        if begin >= t_quiet and end <= t_end:
            rundowns.append(cur)
            begins.append(begin)
    check(rundowns, "%s: no complete rundown in the quiet moment: %s" % (label, times))
    last = rundowns[-1]

    missing = [(hex(a), v, last.get(a)) for a, v in live.items() if last.get(a, ())[:3] != v]
    # V8 may compile after the last rundown began: a concurrent TurboFan job finishing as
    # node exits (a program run to its end), or as a worker quiet since it was ready
    # wakes for the message that ends it (a worker's log, unlike the main thread's, is
    # replayed whole: its TurboFan code of churn() at the stop, 0.45 ms before the stop's
    # handler, in 1 of 10 runs of node-attach). Such an object is not missing: its
    # creation time in its isolate's log, put on the trace's clock by the earliest that
    # that isolate's creations reached the trace (the smallest method_load time less V8's
    # time over the objects both have: no object counts as late that may have come
    # before), is after the rundown began. Counted and printed.
    late = []
    if missing:
        loads = {}  # the process's method_load events (read only when an object is missing)
        for name, f in bt2read.events(trace, ["jitprov_runtime:method_load"], times=True):
            if f.get("vpid") == pid:
                loads.setdefault(f["code_start"], []).append((f["_ns"], f["code_size"], f["name"]))
        born_at = {}  # start -> its creation on the trace's clock
        for h in live_heaps:
            offsets = []
            # (optimized code alone: builtins sit at the same addresses in every isolate)
            for a, (e, kind, name) in h.obj.items():
                if kind not in OPTIMIZED_KINDS:
                    continue
                ts = [t for t, size, n in loads.get(a, []) if size == e - a and n == name]
                if ts and a in h.born:
                    offsets.append(max(ts) - h.born[a] * 1000)
            if offsets:
                off = min(offsets)
                born_at.update({a: t * 1000 + off for a, t in h.born.items() if a in h.obj})
        # The put-on clock errs late by the isolate's smallest delay to the trace (its
        # publisher's batching): with a window (a quiet moment, no compiling), only what
        # V8 made after the window ended is excused; a program's run, what it made after
        # the exit rundown began.
        cut = begins[-1] if window is None else t_end
        late = [m for m in missing if born_at.get(int(m[0], 16), -1) >= cut]
        missing = [m for m in missing if m not in late]
        if late:
            print("%s: %d of V8's live objects created after the %s (V8's time on the trace's clock), e.g. %s, "
                  "%.3f s after it" % (label, len(late), "last rundown began" if window is None else "quiet window",
                                       late[:3], (born_at[int(late[0][0], 16)] - cut) / 1e9))
    stale, on_reused = [], 0
    for a, (size, tier, name, ns) in last.items():
        if ns != "":
            continue  # builtins, bytecode handlers, regexp code: not JS functions' code
        if account.get(a) != (size, tier, name):
            stale.append((hex(a), size, tier, name, account.get(a)))
    # Of the stale records, those on a range the logs show reused (the death the client
    # must infer), as opposed to objects the logs never had.
    all_starts = sorted(account)
    for s in stale:
        a = int(s[0], 16)
        i = bisect.bisect_right(all_starts, a + s[1] - 1)
        if i > 0 and all_starts[i - 1] + account[all_starts[i - 1]][0] > a:
            on_reused += 1
    tiers = {k: sum(1 for v in live.values() if v[1] == k) for k in OPTIMIZED_KINDS}
    print("%s v8log: %d of %d live Sparkplug/Maglev/TurboFan objects of V8's account (%d/%d/%d) are in the last of "
          "%d rundowns (%d records) with the same address, size, name and kind, %d created after it began; "
          "%d stale records "
          "(%d on a range V8 reused); V8's logs: %d code moves, %d objects created on a reused range, %d enumerations "
          "(%d optimized objects they did not list: dead); client: %d added, "
          "%d moves, %d retired by overlap, %d with their isolate, %d isolates"
          % (label, len(live) - len(missing) - len(late), len(live), tiers[11], tiers[12], tiers[13], len(rundowns),
             len(last), len(late), len(stale), on_reused, moves, reused, sum(h.enumerations for h in all_heaps),
             sum(h.unlisted for h in all_heaps), client["added"], client["moves"], client["retired_overlap"],
             client["retired_isolate"], client["isolates"]))
    check(len(live) >= min_live, "%s: %d live optimized objects in V8's account, fewer than %d" % (
        label, len(live), min_live))
    check(moves >= min_moves, "%s: %d code moves in V8's logs, fewer than %d" % (label, moves, min_moves))
    check(reused >= min_reused, "%s: %d reused ranges in V8's logs, fewer than %d" % (label, reused, min_reused))
    if missing:
        print("%s: %d of %d live objects differ or are missing, e.g. %s" % (label, len(missing), len(live), missing[:3]),
              file=sys.stderr)
    if stale:
        print("%s: %d stale records in the rundown, e.g. %s" % (label, len(stale), stale[:3]), file=sys.stderr)
    if client["errors"] != 0 or client["refused"] != 0:
        print("%s: the client counted %d errors, %d publications refused (code on a range it holds live)" % (
            label, client["errors"], client["refused"]), file=sys.stderr)
    return 1 if missing or stale or client["errors"] != 0 or client["refused"] != 0 else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="one node process's rundown against V8's own code log")
    ap.add_argument("trace")
    ap.add_argument("label")
    ap.add_argument("dir")
    ap.add_argument("min_live", type=int)
    ap.add_argument("--min-moves", type=int, default=0)
    ap.add_argument("--min-reused", type=int, default=0)
    ap.add_argument("--program", action="store_true")
    ap.add_argument("--single", action="store_true")
    ap.add_argument("--late", action="store_true")
    o = ap.parse_args()
    try:
        sys.exit(main(o.trace, o.label, o.dir, o.min_live, o.min_moves, o.min_reused, o.program, o.single, o.late))
    except CheckFailed as e:
        print("v8log_check: %s" % e, file=sys.stderr)
        sys.exit(1)
