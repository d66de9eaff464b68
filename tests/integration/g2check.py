#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""G2 checked by a second reader, independent of jitprov-verify's code: every
jitprov_rundown:method record of a trace must carry exactly the fields of its version's
jitprov_runtime:method_load (same process: vpid, same runtime: runtime_instance),
strings compared whole.

  g2check.py TRACE [--min-records N]

Prints one line: records checked, records without a method_load in the trace, and how
many strings babeltrace2's plain value (str()) shows wrong: its 2.0.4 bug with empty
strings (bt2read.string_value), which the text output shares. Exit 1 on any mismatch
(the first ones printed), 2 when fewer than N records could be checked.
"""
import argparse
import sys

import bt2

from bt2read import string_value

# The method fields of the trace ABI (jitprov_method_fields.h), both event classes.
FIELDS = ("runtime_instance", "method_id", "module_id", "version_id", "rejit_id", "tier", "host_tier", "host_version", "code_start", "code_size",
          "method_token", "method_flags", "publish_seq", "namespace", "name", "signature")
STRINGS = ("namespace", "name", "signature")


def read(path):
    """Yields (event name, vpid, {field: value}, stale strings) for method events."""
    for msg in bt2.TraceCollectionMessageIterator(path):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if ev.name not in ("jitprov_runtime:method_load", "jitprov_rundown:method"):
            continue
        p = ev.payload_field
        ctx = ev.common_context_field
        vpid = int(ctx["vpid"]) if ctx is not None and "vpid" in ctx else None
        rec, stale = {}, 0
        for k in FIELDS:
            f = p[k]
            if k in STRINGS:
                rec[k] = string_value(f)
                stale += rec[k] != str(f)
            elif k == "tier":
                rec[k] = (int(f), tuple(sorted(f.labels)))
            else:
                rec[k] = int(f)
        yield ev.name, vpid, rec, stale


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--min-records", type=int, default=1)
    a = ap.parse_args()
    loads, early = {}, []
    checked = without = stale = empty = 0
    bad = []

    def compare(key, rec):
        load = loads[key]
        diff = [k for k in FIELDS if rec[k] != load[k]]
        if diff:
            bad.append((key, diff, {k: (rec[k], load[k]) for k in diff}))

    for name, vpid, rec, st in read(a.trace):
        stale += st
        key = (vpid, rec["runtime_instance"], rec["version_id"])
        if name == "jitprov_runtime:method_load":
            loads.setdefault(key, rec)  # a second method_load of a version: the first is its publication
        else:
            early.append((key, rec))  # compared at the end: a record may precede its method_load
    for key, rec in early:
        if key not in loads:
            without += 1
            continue
        checked += 1
        empty += any(rec[k] == "" for k in STRINGS)
        compare(key, rec)
    print("g2check: %d rundown records checked field by field against their method_load (%d with an empty "
          "string), %d without one, %d mismatches; babeltrace2's plain string value was wrong in %d strings (its "
          "empty-string bug)" % (checked, empty, without, len(bad), stale))
    for key, diff, vals in bad[:5]:
        print("  process %s runtime %s version %s: %s differ (record, method_load): %s"
              % (key[0], key[1], key[2], ",".join(diff), vals))
    if bad:
        return 1
    if checked < a.min_records:
        print("g2check: only %d records checked (expected at least %d)" % (checked, a.min_records))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
