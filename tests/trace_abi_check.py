#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The trace ABI is defined once, in runtime/include/jitprov/trace_abi.h; the C, C++,
LTTng and BPF code expand it. What cannot include a header is checked here against it:
the bpftrace scripts' lists of numeric values (their output prints numbers) and the
contract's event reference, docs/spec.md (`label` = value). Fails with every difference
listed.
    trace_abi_check.py SOURCE_ROOT"""
import re
import sys

root = sys.argv[1]
header = open(root + "/runtime/include/jitprov/trace_abi.h").read()


def abi_list(name):
    body = re.search(r"#define %s\(X\)(.*?)\n\n" % name, header, re.S).group(1)
    return [(int(v), label) for v, label in re.findall(r'X\((\d+), \w+, \w+, "([^"]+)"\)', body)]


lists = {
    "tier": abi_list("JITPROV_TIERS"),
    "site": abi_list("JITPROV_LOCK_SITE_LIST"),
    "mode": abi_list("JITPROV_RUNDOWN_MODES"),
    "trigger": abi_list("JITPROV_RUNDOWN_TRIGGERS"),
}
errors = []
for kind, items in lists.items():
    if not items:
        errors.append("trace_abi.h: no %s list found" % kind)


def comment(path):
    text = open(root + "/" + path).read()
    return " ".join(line.lstrip(" *") for line in text.split("*/")[0].splitlines())


def check_numbered(path, kind):
    """The script's header comment lists 'VALUE label' for every item, and no other."""
    text = comment(path)
    found = {(int(v), l) for v, l in re.findall(r"\b(\d+) ([a-z][a-z0-9_-]*)", text)
             if l in {x[1] for x in lists[kind]} or int(v) in {x[0] for x in lists[kind]}}
    want = set(lists[kind])
    for v, l in sorted(want - found):
        errors.append("%s: %s %d '%s' not listed as '%d %s'" % (path, kind, v, l, v, l))
    for v, l in sorted(found - want):
        if (v, l) not in want and l in {x[1] for x in lists[kind]}:
            errors.append("%s: lists '%d %s', but trace_abi.h says otherwise" % (path, v, l))


check_numbered("probes/bpftrace/lockwait.bt", "site")
check_numbered("probes/bpftrace/jitpath.bt", "tier")
check_numbered("probes/bpftrace/rundown.bt", "mode")
check_numbered("probes/bpftrace/rundown.bt", "trigger")

spec = open(root + "/docs/spec.md").read()
for kind in ("tier", "mode", "trigger"):
    for v, l in lists[kind]:
        if not re.search(r"`%s` ?= ?%d\b" % (re.escape(l), v), spec):
            errors.append("docs/spec.md: the event reference lacks `%s` = %d (%s)" % (l, v, kind))

for e in errors:
    print("FAIL:", e)
print("trace ABI: %s; %d difference(s) in the bpftrace scripts and docs/spec.md" % (
    ", ".join("%d %ss" % (len(v), k) for k, v in lists.items()), len(errors)))
sys.exit(1 if errors else 0)
