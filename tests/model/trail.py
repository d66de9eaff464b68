#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns `spin -t -p registry.pml` output into a readable interleaving.

One line per step that touches shared state: the step number, the thread, the code
function and rule the model's comment names for it (tests/model/registry.pml cites one
on every such statement), and the Promela statement. Steps of one thread's local
bookkeeping (no comment) are left out, and so are the initial registry's. Ends with the
assertion that failed and the property it states.

usage: trail.py MODEL.pml < spin_output
"""
import re
import sys

STEP = re.compile(r"^\s*(\d+):\s+proc\s+(\d+)\s+\(([^)]*)\)\s+(\S+?):(\d+)\s+\(state \d+\)\s+\[(.*)\]\s*$")
COMMENT = re.compile(r"/\*\s*(.*?)\s*\*/")
NOISE = re.compile(r"^(else|\(1\)|DO|IF|\.\(goto\)|goto :?\w+|break|sub-sequence)$")
THREADS = {"writer1": "writer 1", "writer2": "writer 2", "walker": "walker", "lookup": "lookup", ":init:": "init"}


def comment_for(lines, n):
    """The comment on line n, or on the `d_step {` / `atomic {` line that opens its block."""
    if 1 <= n <= len(lines):
        m = COMMENT.search(lines[n - 1])
        if m:
            return m.group(1)
    for k in range(n - 1, max(0, n - 8), -1):
        text = lines[k - 1]
        if re.search(r"\b(d_step|atomic)\s*\{", text):
            if "}" in text:
                return None  # a block opened and closed on its own line
            m = COMMENT.search(text)
            return m.group(1) if m else None
        if text.strip().endswith("}"):
            break
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        lines = f.read().splitlines()
    shown = 0
    failed = None
    groups = []  # [step, thread, comment, [statements]]: one per step of one thread
    for raw in sys.stdin:
        if "assertion violated" in raw:
            failed = raw.strip()
            continue
        if raw.startswith("spin: text of failed assertion:"):
            failed = (failed + "\n" if failed else "") + raw.strip()
            continue
        if raw.startswith("spin: trail ends"):
            break  # then come the final values and process states
        if not STEP.match(raw) and re.match(r"^ +\S", raw):
            groups.append([None, None, raw.strip(), []])  # the model's printf
            continue
        m = STEP.match(raw)
        if not m:
            continue
        step, _, proc, _, line, stmt = m.groups()
        thread = THREADS.get(proc.split(":")[0] if not proc.startswith(":") else ":init:", proc)
        if thread == "init":
            continue
        what = comment_for(lines, int(line))
        stmt = stmt.strip()
        if groups and groups[-1][0] == step and groups[-1][1] == thread:
            g = groups[-1]
            if g[2] is None:
                g[2] = what
        else:
            g = [step, thread, what, []]
            groups.append(g)
        if not NOISE.match(stmt):
            g[3].append(stmt)
    print("%5s  %-9s %-84s %s" % ("step", "thread", "code, rule (the model's comment)", "statements"))
    for step, thread, what, stmts in groups:
        if step is None:
            print("       " + what)
            continue
        if what is None or what.startswith("(") or not stmts:
            continue  # local bookkeeping, or control flow only
        shown += 1
        text = "; ".join(stmts)
        print("%5s  %-9s %-84s %s" % (step, thread, what[:84], text if len(text) <= 60 else text[:57] + "..."))
    if failed:
        print(failed)
        m = re.search(r"registry\.pml:(\d+)", failed)
        if m:
            n = int(m.group(1))
            print("the property: " + (comment_for(lines, n) or lines[n - 1].strip()))
    if shown == 0:
        print("trail.py: no step found in the input (was it `spin -t -p` output?)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
