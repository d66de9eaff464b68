#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The arithmetic of tools/bench/abba.py, the benchmarks' one method: ABBA orders, the
even-round rule, medians, ratios and their spread, and its command line.
    abba_test.py SOURCE_ROOT"""
import itertools
import math
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
import abba  # noqa: E402


class Order(unittest.TestCase):
    def test_two_sides_abba(self):
        self.assertEqual(abba.order(["A", "B"], 4),
                         [(0, ["A", "B"]), (1, ["A", "B"]), (2, ["B", "A"]), (3, ["B", "A"]), (4, ["A", "B"])])

    def test_three_sides(self):
        got = [s for _, s in abba.order("ABC", 6)[1:]]
        self.assertEqual(["".join(s) for s in got], ["ABC", "CBA", "BCA", "ACB", "CAB", "BAC"])

    def test_every_pair_both_orders_equally_often(self):
        for k in (2, 3, 4, 5):
            sides = [chr(ord("A") + i) for i in range(k)]
            for rounds in (2, 4, 6, 8, 10):
                first = {}
                for _, s in abba.order(sides, rounds)[1:]:
                    self.assertEqual(sorted(s), sides)  # every side once a round
                    for x, y in itertools.combinations(s, 2):
                        first[(x, y)] = first.get((x, y), 0) + 1
                for x, y in itertools.combinations(sides, 2):
                    self.assertEqual(first.get((x, y), 0), first.get((y, x), 0), (k, rounds, x, y))

    def test_positions_balanced_over_2k_rounds(self):
        for k in (2, 3, 4):
            sides = list(range(k))
            pos = {}
            for _, s in abba.order(sides, 2 * k)[1:]:
                for i, x in enumerate(s):
                    pos[(x, i)] = pos.get((x, i), 0) + 1
            self.assertEqual(set(pos.values()), {2}, k)

    def test_warmup_is_round_zero(self):
        o = abba.order(["x", "y", "z"], 2)
        self.assertEqual(o[0], (0, ["x", "y", "z"]))
        self.assertEqual(abba.warmup(["x", "y"]), ["x", "y"])
        self.assertEqual([r for r, _ in o], [0, 1, 2])

    def test_even_rounds_enforced(self):
        for bad in (0, 1, 3, 5, -2, 2.0, "4", True):
            with self.assertRaises(ValueError, msg=repr(bad)):
                abba.check_rounds(bad)
            with self.assertRaises(ValueError):
                abba.order(["A", "B"], bad)
        self.assertEqual(abba.check_rounds(2), 2)

    def test_sides_checked(self):
        with self.assertRaises(ValueError):
            abba.order(["A"], 2)
        with self.assertRaises(ValueError):
            abba.order(["A", "A"], 2)


class Stats(unittest.TestCase):
    def test_median(self):
        self.assertEqual(abba.median([3, 1, 2]), 2)
        self.assertEqual(abba.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(abba.median([5]), 5)
        self.assertEqual(abba.median([1, math.nan, 3]), 2)
        self.assertTrue(math.isnan(abba.median([])))
        self.assertTrue(math.isnan(abba.median([math.nan])))

    def test_compare(self):
        ref = {0: 1000.0, 1: 100.0, 2: 200.0, 3: 100.0, 4: 50.0}
        side = {0: 1.0, 1: 110.0, 2: 260.0, 3: 120.0, 4: 50.0}
        c = abba.compare(side, ref)
        # ratios 1.1, 1.3, 1.2, 1.0: median 1.15; the warm-up (round 0) ignored.
        self.assertAlmostEqual(c["ratio"], 1.15)
        self.assertAlmostEqual(c["lo"], 1.0)
        self.assertAlmostEqual(c["hi"], 1.3)
        self.assertEqual(c["rounds"], 4)
        self.assertAlmostEqual(c["median"], 115.0)
        self.assertAlmostEqual(c["ref_median"], 100.0)

    def test_ratio_of_rounds_not_of_medians(self):
        # The machine's speed drifts: the rounds' ratios are all 2, the medians' ratio not.
        ref = {1: 1.0, 2: 10.0}
        side = {1: 2.0, 2: 20.0}
        c = abba.compare(side, ref)
        self.assertEqual((c["ratio"], c["lo"], c["hi"]), (2.0, 2.0, 2.0))

    def test_unmeasured_rounds_dropped(self):
        c = abba.compare({1: math.nan, 2: 3.0, 3: 4.0}, {1: 1.0, 2: 1.0, 3: 0.0})
        self.assertEqual((c["ratio"], c["rounds"]), (3.0, 1))
        c = abba.compare({1: 1.0}, {2: 1.0})
        self.assertTrue(math.isnan(c["ratio"]) and c["rounds"] == 0)


def toggle_lines(rounds, per_unit, extra, units, speed=lambda r: 1.0, place=lambda r: 0.0):
    """JitWork --toggle's lines: the client on in the rounds its pattern gives (blocks of
    eight: on, off, off, on, off, on, on, off), each round's CPU its units times the
    per-unit cost (plus `extra` when on, plus a cost of its place in the block), times
    the machine's speed then."""
    out = []
    for r in range(rounds):
        on = (r % 4 == 0 or r % 4 == 3) != (r // 4 % 2 == 1)
        u = units(r)
        cpu = u * (per_unit + (extra if on else 0.0) + place(r)) * speed(r)
        out.append("%d %s %r 0 %r" % (r, "on" if on else "off", cpu, u))
    return out


class Toggled(unittest.TestCase):
    def test_pattern_holds_each_state_alike(self):
        # Per block of eight: four rounds each, and each state at every place of four.
        for b in range(4):
            on = [r % 8 for r in range(8 * b, 8 * b + 8) if toggle_lines(8 * b + 8, 1, 0, lambda r: 1)[r].split()[1] == "on"]
            self.assertEqual(sorted(x % 4 for x in on), [0, 1, 2, 3])

    def test_cost_per_unit_found(self):
        # 1 us a body more with the client on, 10 without; bodies per round vary.
        t = abba.toggled(toggle_lines(80, 10.0, 1.0, lambda r: 700 + (r * 37) % 200))
        self.assertAlmostEqual(t["extra"], 1.0)
        self.assertAlmostEqual(t["ratio"], 1.1)
        self.assertAlmostEqual(t["per_unit_off"], 10.0)
        self.assertEqual(t["blocks"], 9)  # the warm-up block dropped
        self.assertLessEqual(t["ci_lo"], 1.0)
        self.assertGreaterEqual(t["ci_hi"], 1.0)

    def test_drift_and_place_cancel(self):
        # The machine slows down by half over the run, and the first round of four costs
        # more than the others (what a round leaves to the next): neither is taken for
        # the client's cost. A pattern that put the client first in every block (on, off,
        # off, on throughout) would charge it the place's cost.
        slow = lambda r: 1.0 + r / 160.0
        first = lambda r: 2.0 if r % 4 == 0 else 0.0
        t = abba.toggled(toggle_lines(160, 10.0, 0.0, lambda r: 800, slow, first))
        self.assertAlmostEqual(t["ratio"], 1.0, delta=0.002)
        lines = toggle_lines(160, 10.0, 0.0, lambda r: 800, slow, first)
        abab = [" ".join([l.split()[0], "on" if int(l.split()[0]) % 4 in (0, 3) else "off"] + l.split()[2:])
                for l in lines]
        self.assertGreater(abba.toggled(abab)["ratio"], 1.05)

    def test_warmup_and_incomplete_blocks(self):
        lines = toggle_lines(32, 10.0, 2.0, lambda r: 800)
        lines[0] = "0 on 1e12 0 800"  # the warm-up block, whatever it cost
        t = abba.toggled(lines + ["garbage", "40 maybe 1 0 800"])
        self.assertAlmostEqual(t["extra"], 2.0)
        self.assertEqual(t["blocks"], 3)
        only_on = [l for l in toggle_lines(32, 10.0, 2.0, lambda r: 800) if " on " in l]
        t = abba.toggled(only_on)
        self.assertEqual(t["blocks"], 0)
        self.assertTrue(math.isnan(t["extra"]))

    def test_unbalanced_block_skipped(self):
        # One block after the warm-up, whose on round 11 did nothing (0 units, its CPU a
        # clock's noise) or is missing: what is left would weigh the states unevenly
        # (three on rounds, at places that drift does not cancel), so no block counts.
        slow = lambda r: 1.0 + r / 16.0
        lines = toggle_lines(16, 10.0, 0.0, lambda r: 800, slow)
        self.assertEqual(abba.toggled(lines)["blocks"], 1)
        for bad in ("11 on 5000 0 0", None):
            l = list(lines)
            if bad is None:
                del l[11]
            else:
                l[11] = bad
            self.assertEqual(abba.toggled(l)["blocks"], 0, bad)


class Interval(unittest.TestCase):
    def test_order_statistics(self):
        # n = 10: P(B < 2) = 11/1024 <= 2.5 % < P(B < 3) = 56/1024: the 2nd and 9th values.
        self.assertEqual(abba.median_ci(range(10, 0, -1)), (2, 9))
        # n = 6: P(B < 1) = 1/64, P(B < 2) = 7/64: the extremes; n = 5 cannot reach 95 %.
        self.assertEqual(abba.median_ci([3, 1, 2, 6, 5, 4]), (1, 6))
        self.assertTrue(all(math.isnan(x) for x in abba.median_ci([1, 2, 3, 4, 5])))
        # n = 20: P(B < 6) = 0.0207, P(B < 7) = 0.0577: the 6th and 15th values.
        self.assertEqual(abba.median_ci(range(1, 21)), (6, 15))
        self.assertEqual(abba.median_ci([1, math.nan] * 6 + [2]), (1, 2))

    def test_coverage(self):
        # The interval holds the true median in at least 95 % of samples of any shape.
        import random
        rng = random.Random(7)
        for n in (6, 10, 21):
            hits = 0
            for _ in range(2000):
                lo, hi = abba.median_ci([rng.expovariate(1.0) for _ in range(n)])
                hits += lo <= math.log(2) <= hi
            self.assertGreaterEqual(hits / 2000, 0.94, n)

    def test_verdict(self):
        c = lambda lo, hi, n=10: {"ci_lo": lo, "ci_hi": hi, "rounds": n}
        self.assertTrue(abba.verdict(c(0.99, 1.015), 1.02).startswith("within the 2 % goal"))
        self.assertTrue(abba.verdict(c(1.021, 1.05), 1.02).startswith("NOT within the 2 % goal"))
        self.assertTrue(abba.verdict(c(1.0, 1.03), 1.02).startswith("inconclusive for the 2 % goal"))
        self.assertIn("too few", abba.verdict(c(math.nan, math.nan, 4), 1.01))
        self.assertIn("1 % goal", abba.verdict(c(0.99, 1.0), 1.01))


class Command(unittest.TestCase):
    def run_abba(self, *args):
        return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench", "abba.py")] + list(args),
                              capture_output=True, text=True)

    def test_order(self):
        r = self.run_abba("order", "2", "bare", "rundown")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "0 bare rundown\n1 bare rundown\n2 rundown bare\n")
        r = self.run_abba("order", "3", "bare", "rundown")
        self.assertEqual(r.returncode, 2)
        self.assertIn("even number of rounds", r.stderr)

    def test_summary(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# warm-up, discarded\n0 floor wall 999 ns/event\n0 emit wall 1\n"
                    "1 floor wall 100\n1 emit wall 150\n2 emit wall 240\n2 floor wall 200\n")
        try:
            r = self.run_abba("summary", "--ref", "floor", f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("wall (ns/event): medians of 2 rounds", lines[0])
        self.assertRegex(lines[1], r"^  floor +150\.000$")
        self.assertRegex(lines[2], r"^  emit +195\.000  ratio to floor 1\.350 \(spread 1\.200-1\.500, "
                                   r"95 % interval nan-nan, 2 rounds\)$")

    def test_time(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "t")
            # A child that burns CPU in a grandchild: its CPU time is counted too.
            r = self.run_abba("time", out, sys.executable, "-c",
                              "import subprocess, sys; subprocess.run([sys.executable, '-c', "
                              "'import time\\nt=time.process_time()\\nwhile time.process_time()-t<0.3: pass']); "
                              "sys.exit(3)")
            self.assertEqual(r.returncode, 3, r.stderr)
            wall, cpu = map(float, open(out).read().split())
            self.assertGreaterEqual(cpu, 0.3)
            self.assertGreaterEqual(wall, 0.3)


class Together(unittest.TestCase):
    def test_pairs_fold_swapped_rounds(self):
        # A CPU 10 % faster than the other for both placements: folded, the bias cancels.
        side = {0: 99.0, 1: 1.1 * 2.0, 2: 2.0 / 1.1, 3: 4.0, 4: 9.0}
        got = abba.pairs(side)
        self.assertEqual(sorted(got), [1, 2])
        self.assertAlmostEqual(got[1], 2.0)
        self.assertAlmostEqual(got[2], 6.0)
        self.assertTrue(math.isnan(abba.pairs({1: 1.0, 2: math.nan})[1]))
        self.assertTrue(math.isnan(abba.pairs({1: 1.0, 3: 1.0, 4: 1.0})[1]))  # round 2 missing
        self.assertEqual(abba.pairs({0: 1.0}), {})

    def test_both_at_once_pinned_and_swapped(self):
        with tempfile.TemporaryDirectory() as d:
            if len(os.sched_getaffinity(0)) < 2:  # refused, not run one after the other
                r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench", "abba.py"), "together",
                                    os.path.join(d, "t"), "0", "true", "::", "true"], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2)
                self.assertIn("two CPUs are needed", r.stderr)
                return
            probe = ("import os, sys, time\nopen(sys.argv[1], 'w').write('%d %d' % "
                     "(min(os.sched_getaffinity(0)), len(os.sched_getaffinity(0))))\n"
                     "open(sys.argv[3], 'w').close()\nt = time.monotonic()\n"
                     "while not os.path.exists(sys.argv[2]):\n"
                     "    time.sleep(0.01)\n    assert time.monotonic() - t < 20")
            seen = []
            for rnd in (1, 2):
                a, b = os.path.join(d, "a%d" % rnd), os.path.join(d, "b%d" % rnd)
                out = os.path.join(d, "t%d" % rnd)
                # Each side waits for a file only the other writes: both must run at once.
                r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench", "abba.py"), "together",
                                    out, str(rnd), sys.executable, "-c", probe, a, b + ".alive", a + ".alive",
                                    "::", sys.executable, "-c", probe, b, a + ".alive", b + ".alive"],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(len(open(out).read().split()), 4)
                cpu_a, n_a = map(int, open(a).read().split())
                cpu_b, n_b = map(int, open(b).read().split())
                self.assertEqual((n_a, n_b), (1, 1))  # each alone on one CPU
                self.assertNotEqual(cpu_a, cpu_b)
                seen.append((cpu_a, cpu_b))
            self.assertEqual(seen[0], seen[1][::-1])  # swapped between rounds

    def test_failure_named(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench", "abba.py"), "together",
                                os.path.join(d, "t"), "0", "true", "::", "sh", "-c", "exit 3"],
                               capture_output=True, text=True, timeout=60)
            if len(os.sched_getaffinity(0)) < 2:
                self.assertEqual(r.returncode, 2)
                return
            self.assertEqual(r.returncode, 1)
            self.assertIn("command B exited with 3", r.stderr)
            r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench", "abba.py"), "together",
                                os.path.join(d, "t"), "0", "true", "::"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
