#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The one method of every side-by-side benchmark (tools/bench/):

  - a warm-up round, every side once, whose figures are discarded (caches, page cache,
    the consumer daemon's first buffers);
  - an even number of rounds in ABBA order: whichever side runs first in a round ran
    1.3-1.8x slower on this project's 2-core VM, so every side goes first, and every
    pair of sides comes in each order, equally often (with an odd number of alternating
    rounds the median depends on which order got the extra round);
  - per-side medians over the rounds, the median of the rounds' ratios to a reference
    side (each ratio of two runs minutes apart at most: less exposed to the machine's
    drift than a ratio of medians), and its spread (the lowest and highest round).

Orders: round r (1-based) runs the sides rotated by ((r - 1) // 2) and, in even rounds,
reversed: with two sides A B, B A, B A, A B (ABBA); with three, A B C, C B A, B C A,
A C B, C A B, B A C. Every even number of rounds gives each pair of sides both orders
equally often; 2 x (number of sides) rounds also give every side each position equally
often.

  - a distribution-free 95 % confidence interval of that median ratio (order statistics
    of the rounds' ratios: no assumption about the noise's shape), and a verdict on a
    goal ("within", "NOT within" or "inconclusive" when the interval straddles it).

Two sides at once ("together", for two-process comparisons on a machine whose speed
swings within minutes): both sides run at the same moment, each alone on one of two CPUs,
and swap CPUs every round, so that the machine's drift falls on both alike; pairs()
folds each two rounds, one per placement, into their geometric mean, which cancels a
CPU that is steadily faster than the other. What is left is the host's noise of the
moment and the workload's own: on this project's 2-core VM (the .NET workload beside
itself, 2026-12-02) folded pairs 0.95-1.04 in one run, 0.93-1.05 in another, where
single rounds one after the other ranged 0.85-1.39: a benchmark runs such an A/A series
beside its own (tools/bench/dotnet-cost does).

As a module: order(), warmup(), check_rounds(), median(), median_ci(), compare(),
verdict(), pairs(), together(), Samples.
As a command:
  abba.py order ROUNDS SIDE...
      one line per round, "ROUND SIDE..." in the order to run them, round 0 the
      warm-up; exits 2 for an odd or non-positive ROUNDS.
  abba.py time OUT COMMAND...
      runs COMMAND, writes "WALL_S CPU_S" to OUT (launch to exit, and user + system
      time of all its processes and threads); exits with COMMAND's status.
  abba.py together OUT ROUND COMMAND_A... :: COMMAND_B...
      runs both commands at once, A pinned to the first CPU this process may use and
      B to the second in even rounds, the other way in odd ones; writes "WALL_A CPU_A
      WALL_B CPU_B" to OUT; exits 2 with fewer than two CPUs, else 0 when both
      succeeded and 1 (saying which failed) when not.
  abba.py summary [--ref SIDE] [--title TEXT] FILE
      FILE: lines "ROUND SIDE METRIC VALUE [UNIT]" (round 0, the warm-up, is
      discarded; "nan" is a value not measured); prints per metric every side's
      median and, for every other side, the median ratio to the reference side (the
      first side seen by default) and its spread.
"""
import math
import os
import subprocess
import sys
import time


def check_rounds(rounds):
    """An even number of rounds, at least 2; else ValueError."""
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 2 or rounds % 2:
        raise ValueError("an even number of rounds, at least 2, is needed (got %r): with an odd number the "
                         "median depends on which order got the extra round" % (rounds,))
    return rounds


def round_order(sides, r):
    """The order of the sides in round r (1-based; 0 is the warm-up, in the given order)."""
    sides = list(sides)
    if r == 0:
        return sides
    k = ((r - 1) // 2) % len(sides)
    rotated = sides[k:] + sides[:k]
    return rotated[::-1] if r % 2 == 0 else rotated


def order(sides, rounds):
    """The rounds to run, the warm-up first: [(round, [side, ...]), ...], rounds 0..ROUNDS."""
    sides = list(sides)
    if len(sides) < 2 or len(set(sides)) != len(sides):
        raise ValueError("two or more distinct sides are needed (got %r)" % (sides,))
    check_rounds(rounds)
    return [(r, round_order(sides, r)) for r in range(rounds + 1)]


def warmup(sides):
    """The warm-up round: every side once, discarded."""
    return list(sides)


def median(values):
    """The median of the numbers measured (nan dropped); nan when there are none."""
    v = sorted(x for x in values if x == x)
    if not v:
        return math.nan
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def median_ci(values, level=0.95):
    """A distribution-free confidence interval of the median of the population the values
    were drawn from: (x_(k), x_(n+1-k)) of the sorted values, with k the largest rank for
    which P(Binomial(n, 1/2) < k) <= (1 - level) / 2. (nan, nan) with too few values to
    reach the level (fewer than 6 for 95 %)."""
    v = sorted(x for x in values if x == x)
    n = len(v)
    tail = (1 - level) / 2
    k, below = 0, 0.0  # below: P(B < k + 1) as k grows
    while k < n // 2:
        below += math.comb(n, k) / 2 ** n
        if below > tail:
            break
        k += 1
    if k == 0:
        return math.nan, math.nan
    return v[k - 1], v[n - k]


def compare(side, ref):
    """side and ref: {round: value} (the warm-up, round 0, is ignored). Returns a dict:
    median (of side), ref_median, ratio (the median of the rounds' side/ref ratios),
    lo and hi (the lowest and highest of those ratios), ci_lo and ci_hi (median_ci of
    the ratios), rounds (how many paired rounds had both measured, with a non-zero
    reference)."""
    rounds = sorted(r for r in side if r != 0 and r in ref)
    ratios = [side[r] / ref[r] for r in rounds if side[r] == side[r] and ref[r] == ref[r] and ref[r] != 0]
    ci_lo, ci_hi = median_ci(ratios)
    return {
        "median": median(v for r, v in side.items() if r != 0),
        "ref_median": median(v for r, v in ref.items() if r != 0),
        "ratio": median(ratios),
        "lo": min(ratios) if ratios else math.nan,
        "hi": max(ratios) if ratios else math.nan,
        "ci_lo": ci_lo,
        "ci_hi": ci_hi,
        "rounds": len(ratios),
    }


def verdict(c, goal):
    """compare()'s result against a goal (a cost ratio, 1.02 for 2 %): the median ratio's
    95 % interval below the goal, above it, or straddling it."""
    ci = "95 %% interval %.4f-%.4f" % (c["ci_lo"], c["ci_hi"])
    pct = "%g %%" % round(100 * (goal - 1), 6)
    if c["ci_hi"] != c["ci_hi"]:
        return "inconclusive: %d rounds are too few for a 95 %% interval" % c["rounds"]
    if c["ci_hi"] <= goal:
        return "within the %s goal (%s)" % (pct, ci)
    if c["ci_lo"] > goal:
        return "NOT within the %s goal (%s)" % (pct, ci)
    return "inconclusive for the %s goal (%s straddles it: more rounds, or a quieter machine)" % (pct, ci)


def pairs(values):
    """{round: value} of rounds 1..2P run with swapped placements (together()) folded into
    {pair: the geometric mean of rounds 2p-1 and 2p} for p = 1..P; the warm-up, round 0,
    dropped; a pair with a round missing or nan is nan."""
    last = max((r for r in values if r > 0), default=0)
    out = {}
    for p in range(1, last // 2 + 1):
        a, b = values.get(2 * p - 1, math.nan), values.get(2 * p, math.nan)
        out[p] = math.sqrt(a * b) if a == a and b == b and a >= 0 and b >= 0 else math.nan
    return out


def toggled(lines, block=8):
    """What a state costs per unit of work, within one process: lines 'ROUND on|off CPU
    WALL UNITS' (JitWork --toggle: the client's session on or off round by round, in
    blocks of `block` rounds that hold each state equally often and balanced in place).
    Per block, the CPU per unit in each state (sums of the block's rounds); the first
    block, the warm-up, dropped; a block that lacks a round, or holds one without units,
    is no longer balanced and is skipped. Returns a dict: extra (the median over blocks
    of on minus off, CPU per unit), its ci_lo and ci_hi (median_ci), ratio (the median of
    on/off), ratio_ci_lo and ratio_ci_hi, per_unit_off (the median off CPU per unit),
    units (the median of a block's units in the on state), blocks."""
    rows = {}
    for line in lines:
        f = line.split()
        if len(f) >= 5 and f[1] in ("on", "off"):
            rows[int(f[0])] = (f[1], float(f[2]), float(f[4]))
    extra, ratio, off_unit, units = [], [], [], []
    last = max(rows, default=-1)
    for b in range(1, (last + 1) // block):
        sums = {"on": [0.0, 0.0, 0], "off": [0.0, 0.0, 0]}  # CPU, units, rounds
        for r in range(b * block, (b + 1) * block):
            if r in rows and rows[r][2] > 0:
                s = sums[rows[r][0]]
                s[0] += rows[r][1]
                s[1] += rows[r][2]
                s[2] += 1
        if sums["on"][2] != block // 2 or sums["off"][2] != block // 2:
            continue
        on, off = sums["on"][0] / sums["on"][1], sums["off"][0] / sums["off"][1]
        extra.append(on - off)
        ratio.append(on / off)
        off_unit.append(off)
        units.append(sums["on"][1])
    ci_lo, ci_hi = median_ci(extra)
    r_lo, r_hi = median_ci(ratio)
    return {"extra": median(extra), "ci_lo": ci_lo, "ci_hi": ci_hi, "ratio": median(ratio), "ratio_ci_lo": r_lo,
            "ratio_ci_hi": r_hi, "per_unit_off": median(off_unit), "units": median(units), "blocks": len(extra)}


def two_cpus():
    """The first two CPUs this process may run on, or None."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:2] if len(cpus) >= 2 else None


def together(rnd, cmd_a, cmd_b):
    """Runs cmd_a and cmd_b at the same moment, each pinned to one CPU (placements swapped
    in odd rounds). Returns [(wall_s, cpu_s, exit_code) of A, the same of B]."""
    cpus = two_cpus()
    if cpus is None:
        raise OSError("two CPUs are needed to run two sides together")
    if rnd % 2:
        cpus.reverse()
    t0 = time.monotonic_ns()
    # The Popen objects are kept until their children are reaped here: one dropped
    # earlier would be reaped by the next Popen's clean-up, out of wait4's sight.
    procs = {}
    for i, (cmd, cpu) in enumerate(((cmd_a, cpus[0]), (cmd_b, cpus[1]))):
        p = subprocess.Popen(cmd, preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c}))
        procs[p.pid] = (i, p)
    res = [None, None]
    while procs:
        pid, status, ru = os.wait4(-1, 0)
        if pid not in procs:
            continue
        i, p = procs.pop(pid)
        p.returncode = os.waitstatus_to_exitcode(status)
        res[i] = ((time.monotonic_ns() - t0) / 1e9, ru.ru_utime + ru.ru_stime, p.returncode)
    return res


def timed(out, cmd):
    """Runs cmd; writes "WALL_S CPU_S" to out; returns its exit code."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd)
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.monotonic_ns()
    with open(out, "w") as f:
        f.write("%.3f %.3f\n" % ((t1 - t0) / 1e9, ru.ru_utime + ru.ru_stime))
    return os.waitstatus_to_exitcode(status)


class Samples:
    """Figures by metric and side, round by round, in the order first seen."""

    def __init__(self):
        self.data = {}   # metric -> side -> {round: value}
        self.units = {}  # metric -> unit

    def add(self, rnd, side, metric, value, unit=""):
        self.data.setdefault(metric, {}).setdefault(side, {})[int(rnd)] = float(value)
        if unit:
            self.units[metric] = unit

    def read(self, lines):
        for n, line in enumerate(lines, 1):
            p = line.split()
            if not p or p[0].startswith("#"):
                continue
            if len(p) not in (4, 5):
                raise ValueError("line %d: expected ROUND SIDE METRIC VALUE [UNIT], got %r" % (n, line.rstrip()))
            self.add(p[0], p[1], p[2], p[3], p[4] if len(p) == 5 else "")
        return self

    def summary(self, ref=None, title=None):
        """The printed summary (a list of lines)."""
        out = []
        for metric, sides in self.data.items():
            names = list(sides)
            r = ref if ref in sides else names[0]
            n = len([x for x in sides[r] if x != 0])
            unit = self.units.get(metric, "")
            out.append("%s%s%s: medians of %d rounds in ABBA order after a discarded warm-up" % (
                title + ", " if title else "", metric, " (%s)" % unit if unit else "", n))
            for s in names:
                c = compare(sides[s], sides[r])
                if s == r:
                    out.append("  %-24s %12.3f" % (s, c["median"]))
                else:
                    out.append("  %-24s %12.3f  ratio to %s %.3f (spread %.3f-%.3f, 95 %% interval %.3f-%.3f, "
                               "%d rounds)" % (s, c["median"], r, c["ratio"], c["lo"], c["hi"], c["ci_lo"],
                                               c["ci_hi"], c["rounds"]))
        return out


def main(argv):
    if len(argv) >= 2 and argv[1] == "order":
        if len(argv) < 5:
            print("usage: abba.py order ROUNDS SIDE SIDE...", file=sys.stderr)
            return 2
        try:
            rounds = order(argv[3:], int(argv[2]))
        except ValueError as e:
            print("abba.py: %s" % e, file=sys.stderr)
            return 2
        for r, sides in rounds:
            print(r, *sides)
        return 0
    if len(argv) >= 2 and argv[1] == "time":
        if len(argv) < 4:
            print("usage: abba.py time OUT COMMAND...", file=sys.stderr)
            return 2
        return timed(argv[2], argv[3:])
    if len(argv) >= 2 and argv[1] == "together":
        args = argv[4:]
        if len(argv) < 4 or "::" not in args or not argv[3].isdigit():
            print("usage: abba.py together OUT ROUND COMMAND_A... :: COMMAND_B...", file=sys.stderr)
            return 2
        k = args.index("::")
        if k == 0 or k == len(args) - 1:
            print("abba.py together: a command on each side of '::' is needed", file=sys.stderr)
            return 2
        if two_cpus() is None:
            print("abba.py together: two CPUs are needed, this process may use %d" % len(os.sched_getaffinity(0)),
                  file=sys.stderr)
            return 2
        res = together(int(argv[3]), args[:k], args[k + 1:])
        with open(argv[2], "w") as f:
            f.write("%.3f %.3f %.3f %.3f\n" % (res[0][0], res[0][1], res[1][0], res[1][1]))
        failed = [(name, r[2]) for name, r in zip("AB", res) if r[2] != 0]
        for name, code in failed:
            print("abba.py together: command %s exited with %d" % (name, code), file=sys.stderr)
        return 1 if failed else 0
    if len(argv) >= 2 and argv[1] == "summary":
        args, ref, title = argv[2:], None, None
        while len(args) > 1 and args[0] in ("--ref", "--title"):
            if args[0] == "--ref":
                ref = args[1]
            else:
                title = args[1]
            args = args[2:]
        if len(args) != 1:
            print("usage: abba.py summary [--ref SIDE] [--title TEXT] FILE", file=sys.stderr)
            return 2
        with open(args[0]) as f:
            print("\n".join(Samples().read(f).summary(ref, title)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
