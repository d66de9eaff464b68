#!/usr/bin/python3
"""Reads a jitprov CTF trace with babeltrace2's Python bindings (bt2) and checks what
a user would: per rundown, the number of `method` records equals rundown_end.versions,
no event was discarded, every method field decodes, tiers are valid enum labels, and
method_load events are present. Prints a JSON summary on stdout.

  check_trace.py TRACE_DIR [--start-ns NS] [--max-start-latency-ms MS]
                 [--expect-rundowns N] [--expect-trigger session,signal]
                 [--allow-incomplete]

--start-ns: wall-clock ns just after `lttng start` returned; the first session-triggered
rundown_begin must come within --max-start-latency-ms of it.
Exit 0 when every check holds, 1 otherwise (each failure printed on stderr).
"""
import argparse
import json
import sys

import bt2

METHOD_FIELDS = ["method_id", "module_id", "version_id", "rejit_id", "tier", "code_start",
                 "code_size", "method_token", "method_flags", "namespace", "name", "signature"]
TIERS = {"tier0", "tier1", "tier1_osr", "instrumented", "optimized"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--start-ns", type=int)
    ap.add_argument("--max-start-latency-ms", type=float, default=200.0)
    ap.add_argument("--expect-rundowns", type=int)
    ap.add_argument("--expect-trigger", default="")
    ap.add_argument("--allow-incomplete", action="store_true",
                    help="a rundown without rundown_end is reported, not failed")
    args = ap.parse_args()

    errors = []
    rundowns = {}  # id -> dict
    discarded = 0
    method_loads = 0
    bad_fields = 0
    msg_it = bt2.TraceCollectionMessageIterator(args.trace)
    for msg in msg_it:
        if type(msg) is bt2._DiscardedEventsMessageConst:
            discarded += msg.count if msg.count is not None else 1
            continue
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        name = ev.name
        ns = msg.default_clock_snapshot.ns_from_origin
        if name == "jitprov_runtime:method_load":
            method_loads += 1
            continue
        if not name.startswith("jitprov_rundown:"):
            continue
        rid = int(ev.payload_field["rundown_id"])
        r = rundowns.setdefault(rid, {"id": rid, "methods": 0, "modules": 0, "ids": set(),
                                      "begin": None, "end": None, "dups": 0})
        if name == "jitprov_rundown:rundown_begin":
            labels = ev.payload_field["trigger"].labels
            r["begin"] = {"ns": ns, "trigger": labels[0] if labels else "?",
                          "mode": (ev.payload_field["mode"].labels or ["?"])[0],
                          "method_count": int(ev.payload_field["method_count"])}
        elif name == "jitprov_rundown:module":
            r["modules"] += 1
        elif name == "jitprov_rundown:method":
            r["methods"] += 1
            p = ev.payload_field
            try:
                vals = {f: p[f] for f in METHOD_FIELDS}
                tier = vals["tier"].labels
                if len(tier) != 1 or tier[0] not in TIERS:
                    raise ValueError("tier %r" % (tier,))
                if int(vals["code_start"]) == 0 or int(vals["code_size"]) == 0:
                    raise ValueError("empty code range")
                str(vals["name"]), str(vals["namespace"]), str(vals["signature"])
            except Exception as e:  # a field missing or undecodable
                bad_fields += 1
                if bad_fields <= 5:
                    errors.append("rundown %d: method record does not decode: %s" % (rid, e))
            vid = int(p["version_id"])
            if vid in r["ids"]:
                r["dups"] += 1
            r["ids"].add(vid)
        elif name == "jitprov_rundown:rundown_end":
            p = ev.payload_field
            r["end"] = {k: int(p[k]) for k in ["modules", "methods", "versions", "skipped", "retried",
                                                "duration_ns"]}
            r["end"]["ns"] = ns

    out = {"discarded": discarded, "method_load": method_loads, "rundowns": []}
    if discarded:
        errors.append("%d events discarded" % discarded)
    if method_loads == 0:
        errors.append("no jitprov_runtime:method_load events")
    for rid in sorted(rundowns):
        r = rundowns[rid]
        summary = {"id": rid, "method_records": r["methods"], "module_records": r["modules"],
                   "begin": r["begin"], "end": r["end"], "duplicates": r["dups"]}
        out["rundowns"].append(summary)
        if r["begin"] is None:
            errors.append("rundown %d: no rundown_begin" % rid)
        if r["end"] is None:
            if not args.allow_incomplete:
                errors.append("rundown %d: no rundown_end" % rid)
            continue
        if r["end"]["versions"] != r["methods"]:
            errors.append("rundown %d: %d method records but rundown_end.versions = %d"
                          % (rid, r["methods"], r["end"]["versions"]))
        if r["end"]["modules"] != r["modules"]:
            errors.append("rundown %d: %d module records but rundown_end.modules = %d"
                          % (rid, r["modules"], r["end"]["modules"]))
        if r["dups"]:
            errors.append("rundown %d: %d version ids appear twice" % (rid, r["dups"]))
    if bad_fields:
        errors.append("%d method records with undecodable fields" % bad_fields)
    if args.expect_rundowns is not None and len(rundowns) != args.expect_rundowns:
        errors.append("expected %d rundowns, found %d" % (args.expect_rundowns, len(rundowns)))
    triggers = [r["begin"]["trigger"] for r in out["rundowns"] if r["begin"]]
    for t in filter(None, args.expect_trigger.split(",")):
        if t not in triggers:
            errors.append("no rundown with trigger %s (saw %s)" % (t, triggers))
    if args.start_ns is not None:
        sess = [r["begin"]["ns"] for r in out["rundowns"] if r["begin"] and r["begin"]["trigger"] == "session"]
        if sess:
            lat = (min(sess) - args.start_ns) / 1e6
            out["session_start_latency_ms"] = lat
            if lat > args.max_start_latency_ms:
                errors.append("session rundown began %.1f ms after lttng start (limit %.0f)"
                              % (lat, args.max_start_latency_ms))
        else:
            errors.append("no session-triggered rundown")
    out["errors"] = errors
    json.dump(out, sys.stdout, indent=1)
    print()
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
