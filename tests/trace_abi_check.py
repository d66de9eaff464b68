#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The trace ABI is defined once, in common/include/jitprov/trace_abi.h; the C, C++,
LTTng and BPF code expand it. What cannot include a header is checked here against it:
the bpftrace scripts' lists of numeric values (their output prints numbers), the
numbers their filters compare with (the JIT paths' site range, the rundown's site, the
unknown holder, the unmeasured sentinel) and the contract's event reference,
docs/spec.md (`label` = value). Fails with every difference listed.
    trace_abi_check.py SOURCE_ROOT"""
import re
import sys

root = sys.argv[1]
header = open(root + "/common/include/jitprov/trace_abi.h").read()


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


defines = {k: int(v, 0) for k, v in re.findall(r"#define (JITPROV_\w+) +((?:0x[0-9A-Fa-f]+|\d+))(?:U?L*)\b", header)}
for name in ("JITPROV_JIT_SITE_FIRST", "JITPROV_JIT_SITE_LAST", "JITPROV_RUNDOWN_SITE", "JITPROV_BLOCKED_BY_UNKNOWN",
             "JITPROV_UNMEASURED_NS", "JITPROV_HIST_BUCKETS", "JITPROV_MAX_TRACE_STRING"):
    if name not in defines:
        errors.append("trace_abi.h: no #define %s found" % name)
        defines[name] = -1
site_value = {label: v for v, label in lists["site"]}
if (site_value.get("tier0_publish"), site_value.get("unload"), site_value.get("rundown")) != (
        defines["JITPROV_JIT_SITE_FIRST"], defines["JITPROV_JIT_SITE_LAST"], defines["JITPROV_RUNDOWN_SITE"]):
    errors.append("trace_abi.h: the site ranges disagree with the site list")


def check_literals(path, checks):
    """Each (regex, wanted values) of the script: every match has those values."""
    text = open(root + "/" + path).read()
    for pattern, want, what in checks:
        found = re.findall(pattern, text)
        if not found:
            errors.append("%s: no %s found (/%s/)" % (path, what, pattern))
        for f in found:
            got = tuple(int(x) for x in (f if isinstance(f, tuple) else (f,)))
            if got != want:
                errors.append("%s: %s is %s, trace_abi.h says %s" % (path, what, got, want))


jit = (defines["JITPROV_JIT_SITE_FIRST"], defines["JITPROV_JIT_SITE_LAST"])
check_literals("probes/bpftrace/lockwait.bt", [
    (r"arg0 >= (\d+) && arg0 <= (\d+)", jit, "the JIT paths' site range"),
    (r"arg5 == (\d+)", (defines["JITPROV_RUNDOWN_SITE"],), "the rundown's site"),
    (r"sites (\d+)-(\d+)", jit, "the JIT paths' site range in the comment"),
    (r"(\d+) in @blocked_us", (defines["JITPROV_BLOCKED_BY_UNKNOWN"],), "the unknown holder"),
])
# The scripts tell an unmeasured duration by (int64)argN < 0: the sentinel is all ones.
for path in ("probes/bpftrace/lockwait.bt", "probes/bpftrace/jitpath.bt"):
    if "(int64)arg" in open(root + "/" + path).read() and defines["JITPROV_UNMEASURED_NS"] != (1 << 64) - 1:
        errors.append("%s: tests (int64)argN < 0 for an unmeasured duration, but JITPROV_UNMEASURED_NS is not all ones"
                      % path)

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
