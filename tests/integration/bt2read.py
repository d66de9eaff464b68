#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Reads a CTF trace with babeltrace2's own Python bindings (python3-bt2), so that the
tests check decoded fields instead of scraping babeltrace2's text output.

As a module: events(path, prefixes) yields (name, fields) in time order, where fields
maps each payload field to an int, a str, or an enumeration's label, plus "vpid" when
the event carries that context, and with times=True "_ns": the event's time in ns since
the Unix epoch (the trace clock's offset plus its cycles). With mono=True "_mono": the
event's time on CLOCK_MONOTONIC (the cycles of lttng-ust's clock "monotonic", in ns: the
clock of `perf record -k 1`); a trace on another clock raises. `lost`, a list: receives
(stream name, count) for every discarded-events message (events the tracer dropped).
rundowns(path, pid, record, wanted): the complete rundowns of one process, read from
the rundown channel's streams alone, their records decoded only for the rundowns
`wanted`, other processes' events skipped undecoded (jvm-attach's two codelist checks
took 52 s of its 86 through events(), about 6 s through this).
As a program: bt2read.py TRACE [PREFIX...] prints one JSON object per event.
"""
import json
import os
import shutil
import sys
import tempfile

import bt2


# babeltrace2 2.0.4 (Debian 12) reuses event objects, and its bt_field_string_clear()
# sets a string field's length to 0 without writing a NUL: an empty string field keeps
# the bytes of the same field in an earlier event of the class, and
# bt_field_string_get_value() (what str() and babeltrace2's text output show) returns
# them. Its length (len()) is right. Fixed upstream after 2.0.4 (review.lttng.org
# babeltrace 4528). So a string is read by its length: "" when the length is 0.
def string_value(f):
    return str(f) if len(f) > 0 else ""


def _value(f):
    labels = getattr(f, "labels", None)
    if labels is not None:  # an enumeration: its (single) label
        return sorted(labels)[0] if labels else None
    if isinstance(f, bt2._StringFieldConst):
        return string_value(f)
    return int(f)


def _monotonic_ns(snapshot):
    cc = snapshot.clock_class
    # lttng-ust reads CLOCK_MONOTONIC in ns into the clock class it names "monotonic"
    # (its offset only turns that into wall time, for ns_from_origin).
    if cc.name != "monotonic" or cc.frequency != 10**9:
        raise ValueError("trace clock %r at %d Hz is not lttng-ust's CLOCK_MONOTONIC" % (cc.name, cc.frequency))
    return snapshot.value


def _channels_only(path, channels):
    """A temporary directory mirroring the traces under path with each trace's metadata
    and the streams of `channels` alone (symbolic links), or None when no stream is of
    those channels."""
    tmp, found = tempfile.mkdtemp(prefix="bt2read-"), False
    for root, _, files in os.walk(path):
        if "metadata" not in files:
            continue
        out = os.path.join(tmp, os.path.relpath(root, path))
        os.makedirs(out, exist_ok=True)
        for f in files:
            ours = f.rsplit("_", 1)[0] in channels and f.rsplit("_", 1)[-1].isdigit()
            found = found or ours
            if ours or f == "metadata":
                os.symlink(os.path.join(os.path.abspath(root), f), os.path.join(out, f))
    if not found:
        shutil.rmtree(tmp)
        return None
    return tmp


def events(path, prefixes=(), times=False, mono=False, lost=None):
    prefixes = tuple(prefixes)
    for msg in bt2.TraceCollectionMessageIterator(path):
        if lost is not None and type(msg) is bt2._DiscardedEventsMessageConst:
            lost.append((msg.stream.name, msg.count))
            continue
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if prefixes and not ev.name.startswith(prefixes):
            continue
        fields = {k: _value(v) for k, v in ev.payload_field.items()}
        ctx = ev.common_context_field
        if ctx is not None and "vpid" in ctx:
            fields["vpid"] = int(ctx["vpid"])
        if times:
            fields["_ns"] = msg.default_clock_snapshot.ns_from_origin
        if mono:
            fields["_mono"] = _monotonic_ns(msg.default_clock_snapshot)
        yield ev.name, fields


def rundowns(path, pid, record, wanted=lambda begin_ns: True):
    """The complete rundowns of process `pid` (events without a vpid count as its) in the
    trace's jitprov_rundown channel, in order: (begin_ns, end_ns, records), records a dict
    code_start -> record(fields of its jitprov_rundown:method event) when wanted(begin_ns),
    else None (not decoded)."""
    subset = _channels_only(path, ("jitprov_rundown",))
    out, cur, begin, keep = [], None, 0, False
    try:
        for msg in bt2.TraceCollectionMessageIterator(subset or path):
            if type(msg) is not bt2._EventMessageConst:
                continue
            ev = msg.event
            name = ev.name
            if not name.startswith("jitprov_rundown:"):
                continue
            ctx = ev.common_context_field
            if ctx is not None and "vpid" in ctx and int(ctx["vpid"]) != pid:
                continue
            if name == "jitprov_rundown:rundown_begin":
                begin = msg.default_clock_snapshot.ns_from_origin
                keep = wanted(begin)
                cur = {} if keep else ()
            elif name == "jitprov_rundown:method" and keep and cur is not None:
                f = {k: _value(v) for k, v in ev.payload_field.items()}
                cur[f["code_start"]] = record(f)
            elif name == "jitprov_rundown:rundown_end" and cur is not None:
                out.append((begin, msg.default_clock_snapshot.ns_from_origin, cur if keep else None))
                cur = None
    finally:
        if subset is not None:
            shutil.rmtree(subset)
    return out


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: bt2read.py TRACE [PREFIX...]")
    for name, fields in events(sys.argv[1], sys.argv[2:]):
        print(json.dumps({"event": name, **fields}))
