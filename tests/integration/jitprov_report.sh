#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `jitprov report`, `jitprov record -p PID`, `--lockwait` and `--perf` (docs/spec.md,
# "jitprov record", "jitprov report") on a small Java program (OpenJDK 17):
#  - `jitprov record --lockwait --perf -- java Hot`, a jitprov-sim mapping the same library
#    beside it: exit 0, verified; the lock waits (jitprov-lockwait's own report,
#    DIR/lockwait.json, none of the sim's) and the hottest JIT methods in the
#    summary; `perf report -i DIR/perf.jit.data` names the program's hot method, the
#    summary's hottest method is it, and its counts of samples, all and in JIT code
#    (the DSOs perf inject --jit wrote), are perf report's;
#  - `jitprov report DIR --json` against the trace read independently with babeltrace2's
#    Python bindings (bt2read.py): code bodies and bytes by tier and by module, methods,
#    the largest method's largest body, the most bodies of one method, the rundowns by
#    trigger, events lost; its text says the same figures; the lock waits and perf
#    figures are record's;
#  - its plots (gnuplot): tiers, rundowns, lockwaits, hottest, each a PNG of 1000x600
#    (its signature and IHDR read) beside a CSV that holds the report's figures (the
#    verifier's bodies and bytes by tier, every rundown, every JIT-path wait of
#    jitprov-lockwait --waits and as many per site as its report's, perf's hottest);
#    without gnuplot in PATH one line, exit 0, nothing written; --no-plots, --plots DIR2;
#  - `jitprov record -p PID -d 2` on a running JVM started without jitprov: the agent
#    attached, a verified trace with the session rundown, the JVM still running after;
#    one in a mount namespace of its own (an empty /var/run/lttng, as a container's):
#    nothing recorded, said, exit 119; two at once on it: the first leaves the daemon it
#    started to the second, the last stops it; a SIGINT during its verification stops
#    the verifier, said (119);
#  - errors, one line and a status each: report on no directory (3), a file (3), a
#    directory without a trace (4), an unreadable trace (5); record -p on a process that
#    runs no runtime (`sleep`: 117) and --perf without perf installed (118).
#   jitprov_report.sh JITPROV SOURCE_DIR
. "$(dirname "$0")/lib.sh"
JITPROV=${1:?usage: jitprov_report.sh JITPROV SOURCE_DIR}
SRC=${2:?usage: jitprov_report.sh JITPROV SOURCE_DIR}
JITPROV=$(realpath "$JITPROV") SRC=$(realpath "$SRC")
require_lttng
require_root
require_cmd java javac perf setpriv mkfifo
enter_private_namespace "$@"
T0=$(date +%s)
WORK=$(work_dir jitprov-report)
trap 'cleanup_pids; rm -rf "$WORK"' EXIT
cd "$WORK" || fail "cd $WORK"
export PYTHONPATH="$SRC/tests/integration"
summary() { $PY -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1/summary.json"; }

mkdir -p "$WORK/hot"
cat >"$WORK/hot/Hot.java" <<'EOF'
import java.nio.file.*;
public class Hot {  // Hot.work is where the time goes; with an argument: runs until killed
  static long work(int n) {
    long h = 0;
    for (int i = 0; i < n; i++) h = h * 31 + Integer.toString(i).hashCode();
    return h;
  }
  public static void main(String[] args) throws Exception {
    long h = 0;
    for (int r = 0; args.length > 0 || r < 400; r++) {
      h += work(20000);
      if (r == 100 && args.length > 0) Files.writeString(Path.of(args[0]), ProcessHandle.current().pid() + "\n");
    }
    System.out.println("Hot: " + h);
  }
}
EOF
javac -d "$WORK/hot" "$WORK/hot/Hot.java" || fail "javac Hot.java"

# --- record --lockwait --perf -- java Hot ---------------------------------------------
# Beside it, another process that maps the same libjitprov.so.1: a sim publishing
# thousands of versions a second. record --lockwait counts CMD's processes alone (was:
# every process mapping the library): the acquisitions at the publication sites are at
# most the agent's own publications (its loads and stubs, each one acquisition, and one
# more for each code it superseded: that publication was refused first, then retried).
SIM=$(dirname "$JITPROV")/../sim/jitprov-sim
"$SIM" --methods 20000 --rundown locked --rundown-trigger every:1 --duration 120 >"$WORK/sim.out" 2>&1 &
sim=$!
track_pid $sim
"$JITPROV" record --lockwait --perf -o "$WORK/rec" -- java -cp "$WORK/hot" Hot >"$WORK/rec.out" 2>"$WORK/rec.err"
rc=$?
kill $sim 2>/dev/null
wait $sim 2>/dev/null
[ $rc -eq 0 ] || fail "record --lockwait --perf: exit $rc: $(cat "$WORK/rec.out" "$WORK/rec.err")"
grep -q "^  verdict:     verified" "$WORK/rec.out" || fail "record: $(cat "$WORK/rec.out")"
# perf itself names the hot method in the injected data, and the summary's hottest is it.
perf --buildid-dir "$WORK/buildid" report -i "$WORK/rec/perf.jit.data" --stdio -q --no-children -g none \
  --sort sym 2>/dev/null | head -5 >"$WORK/perf-top.txt"
grep -q "Hot::work" "$WORK/perf-top.txt" || fail "perf report does not name Hot::work: $(cat "$WORK/perf-top.txt")"
[ "$(summary "$WORK/rec" 's["perf"]["hottest"][0]["name"]')" = "Hot::work" ] ||
  fail "the summary's hottest JIT method: $(cat "$WORK/rec.out")"
# Its samples, and those in JIT code (the DSOs perf inject --jit wrote), are perf's own.
perf --buildid-dir "$WORK/buildid" report -i "$WORK/rec/perf.jit.data" --stdio -q --no-children -g none \
  --sort dso -F sample,dso 2>/dev/null >"$WORK/perf-dso.txt"
read -r all jit < <(awk '{ all += $1 } $2 ~ /^jitted-/ { jit += $1 } END { print all + 0, jit + 0 }' "$WORK/perf-dso.txt")
[ "$(summary "$WORK/rec" 's["perf"]["samples"], s["perf"]["jit_samples"]')" = "$all $jit" ] && [ "$jit" -gt 0 ] ||
  fail "the summary's samples are not perf report's ($all, $jit in JIT code): $(cat "$WORK/rec.out")"
grep -qE "^  perf:        [0-9]+ samples, [0-9]+ in JIT code .*hottest: Hot::work" "$WORK/rec.out" ||
  fail "the summary's perf line: $(cat "$WORK/rec.out")"
# The lock waits are jitprov-lockwait's own final report, added up.
$PY - "$WORK/rec" <<'PY' || fail "the summary's lock waits are not lockwait.json's: $(cat "$WORK/rec.out")"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
lw = json.loads([l for l in open(d + "/lockwait.json") if l.strip()][-1])
assert lw["final"] and s["lockwait_exit"] == 0, (lw.get("final"), s["lockwait_exit"])
acq = sum(site[p]["wait"]["count"] for site in lw["sites"].values() for p in ("outside", "rundown"))
waited = sum(b["count"] for site in lw["sites"].values() for b in site["blocked_by"].values())
f = s["lock_waits"]
assert acq > 0 and f["acquisitions"] == acq and f["contended"] == waited and f["lost"] == 0, (f, acq, waited)
assert f["jit_blocked_by_rundown"] == lw["jit_blocked_by_rundown"], f
import glob
agent = json.load(open(glob.glob(d + "/agent-*.json")[0]))
pub = sum(lw["sites"][k][p]["wait"]["count"] for k in ("tier0_publish", "tier1_publish", "osr_publish")
          for p in ("outside", "rundown"))
own = agent["loads"] + agent["stubs"] + agent["superseded_stubs"] + agent["superseded_methods"]
assert pub <= own, "%d acquisitions at the publication sites, the agent published %d: the sim's counted too" % (pub, own)
print("lock waits: %d acquisitions, %d waited; %d at the publication sites for the agent's %d publications "
      "(%d superseding code, retried), none of the sim's beside it"
      % (acq, waited, pub, own, agent["superseded_stubs"] + agent["superseded_methods"]))
PY
grep -qE "^  lock waits:  [0-9]+ lock acquisitions, [0-9]+ waited .*; lost 0$" "$WORK/rec.out" ||
  fail "the summary's lock waits line: $(cat "$WORK/rec.out")"
# The jitdump's source lines of Hot's code name its file, "Hot.java": a name short enough
# for std::string's inline buffer (the jitdump test's are longer) was read through a
# pointer left dangling when the agent moved its line entries (garbage or another name).
$PY - "$WORK/rec/jitdump" <<'PY' || fail "the jitdump's file names of Hot's code"
import glob, struct, sys
(path,) = glob.glob(sys.argv[1] + "/jit-*.dump")
data = open(path, "rb").read()
off = struct.unpack_from("<I", data, 8)[0]  # the header's total_size
files, hot, debug = {}, 0, None
while off + 16 <= len(data):
    rid, size = struct.unpack_from("<II", data, off)
    if size < 16:
        break
    if rid == 2:  # JIT_CODE_DEBUG_INFO: code_addr, nr_entry, then {addr, line, discrim, file\0}
        n = struct.unpack_from("<Q", data, off + 24)[0]
        p, names = off + 32, set()
        for _ in range(n):
            end = data.index(b"\0", p + 16)
            names.add(data[p + 16:end].decode("utf-8", "replace"))
            p = end + 1
        debug = names
    elif rid == 0:  # JIT_CODE_LOAD: its name after pid, tid, vma, code_addr, code_size, code_index
        name = data[off + 56:data.index(b"\0", off + 56)].decode("utf-8", "replace")
        if debug is not None and name.startswith("Hot::"):
            hot += 1
            for f in debug:
                files[f] = files.get(f, 0) + 1
        debug = None
    off += size
assert hot > 0 and set(files) == {"Hot.java"}, (hot, files)
print("jitdump: %d loads of Hot's code with lines, every one in Hot.java" % hot)
PY
pass "record --lockwait --perf -- java Hot:
$(sed 's/^/    /' "$WORK/rec.out")"

# --- report, against the trace read by babeltrace2 --------------------------------------
"$JITPROV" report "$WORK/rec" --json >"$WORK/report.json" 2>"$WORK/report.err" ||
  fail "report --json: $(cat "$WORK/report.err")"
"$JITPROV" report "$WORK/rec" >"$WORK/report.txt" 2>"$WORK/report.err" || fail "report: $(cat "$WORK/report.err")"
$PY - "$WORK/rec" "$WORK/report.json" "$WORK/report.txt" <<'PY' || fail "the report is not the trace's: $(cat "$WORK/report.txt")"
import collections, json, sys
from bt2read import events
d, rj, rt = sys.argv[1:4]
r = json.load(open(rj))
text = open(rt).read()
lost = []
bodies = collections.defaultdict(dict)   # vpid -> version_id -> (method_id, module_id, tier, size)
paths = collections.defaultdict(dict)    # vpid -> module_id -> path
triggers = collections.defaultdict(list)
for name, f in events(d + "/trace", ("jitprov_",), lost=lost):
    if name in ("jitprov_runtime:method_load", "jitprov_rundown:method"):
        bodies[f["vpid"]].setdefault(f["version_id"], (f["method_id"], f["module_id"], f["tier"], f["code_size"]))
    elif name in ("jitprov_runtime:module_load", "jitprov_rundown:module"):
        paths[f["vpid"]].setdefault(f["module_id"], f["path"])
    elif name == "jitprov_rundown:rundown_begin":
        triggers[f["vpid"]].append(f["trigger"])
assert r["events_lost"] == 0 and lost == [] and r["verify_exit"] == 0, (r["events_lost"], lost, r["verify_exit"])
procs = {p["vpid"]: p for p in r["processes"]}
assert set(procs) == set(bodies) and len(procs) == 1, (sorted(procs), sorted(bodies))
for vpid, vs in bodies.items():
    c = procs[vpid]["code"]
    tiers = collections.defaultdict(lambda: [0, 0])
    mods = collections.defaultdict(lambda: [0, 0])
    per_method = collections.Counter()
    largest = collections.defaultdict(int)
    for mid, mod, tier, size in vs.values():
        tiers[tier][0] += 1; tiers[tier][1] += size
        mods[paths[vpid].get(mod, "")][0] += 1; mods[paths[vpid].get(mod, "")][1] += size
        per_method[mid] += 1
        largest[mid] = max(largest[mid], size)
    assert c["bodies"] == len(vs) and c["bytes"] == sum(v[3] for v in vs.values()), (c["bodies"], c["bytes"])
    assert c["methods"] == len(per_method), (c["methods"], len(per_method))
    assert {t: [x["bodies"], x["bytes"]] for t, x in c["by_tier"].items()} == dict(tiers), (c["by_tier"], dict(tiers))
    assert {m["path"]: [m["bodies"], m["bytes"]] for m in c["modules"]} == dict(mods), (c["modules"], dict(mods))
    assert c["most_bodies"][0]["bodies"] == max(per_method.values()), (c["most_bodies"][0], max(per_method.values()))
    assert c["largest"][0]["largest_bytes"] == max(largest.values()), (c["largest"][0], max(largest.values()))
    assert [x["trigger"] for x in procs[vpid]["rundowns"]] == triggers[vpid], (procs[vpid]["rundowns"], triggers[vpid])
    # The text says the same.
    assert "process %d: %d code bodies" % (vpid, len(vs)) in text, text
    assert "%3d bodies (" % max(per_method.values()) in text, text
    # HotSpot's stubs among the largest are said to be stubs, not the program's methods.
    for m in c["largest"]:
        stub = m["module"] == "hotspot-stubs"
        labelled = (m["name"] + " (a HotSpot stub)") in text
        assert stub == labelled or len(m["name"]) > 90, (m, stub, labelled)
s = json.load(open(d + "/summary.json"))
assert r["lock_waits"] == s["lock_waits"] and r["perf"] == s["perf"], (r["lock_waits"], r["perf"])
assert "lock waits (jitprov-lockwait): %d lock acquisitions" % s["lock_waits"]["acquisitions"] in text, text
assert "  %6.2f %% %7d  Hot::work" % (s["perf"]["hottest"][0]["percent"], s["perf"]["hottest"][0]["samples"]) in text, text
print("report: %d bodies, %d methods, most bodies %d, largest %d bytes, as the trace shows" % (
    len(vs), len(per_method), max(per_method.values()), max(largest.values())))
PY
pass "jitprov report DIR, checked against babeltrace2's reading:
$(sed 's/^/    /' "$WORK/report.txt" | head -40)"

# --- the plots: valid PNGs of the size set, each CSV the report's figures -----------------
$PY - "$WORK/rec" "$WORK/report.json" "$WORK/report.txt" <<'PY' || fail "the plots: $(sed -n '/^plots/,$p' "$WORK/report.txt")"
import collections, csv, json, struct, sys
d, rj, rt = sys.argv[1:4]
r = json.load(open(rj))
text = open(rt).read()
pl = r["plots"]
assert pl["dir"] == d + "/report" and "none" not in pl and "failed" not in pl, pl
files = {f["plot"]: f for f in pl["files"]}
# record --lockwait --perf: every plot has its data.
assert sorted(files) == ["hottest", "lockwaits", "rundowns", "tiers"], sorted(files)
rows = {}
for name, f in files.items():
    assert f["png"] == "%s/report/%s.png" % (d, name) and f["csv"] == "%s/report/%s.csv" % (d, name), f
    png = open(f["png"], "rb").read()
    # The signature, then the IHDR chunk first: its length 13, width and height.
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", (name, png[:16])
    length, w, h = struct.unpack(">I4xII", png[8:24])
    assert (length, w, h) == (13, 1000, 600), (name, length, w, h)
    assert png[-8:-4] == b"IEND" and len(png) > 5000, (name, len(png))
    assert "  %-14s %s" % (name + ".png", f["what"]) in text, (name, text)
    rows[name] = list(csv.DictReader(open(f["csv"])))
    assert rows[name] or name == "lockwaits", name  # a timeline of no wait is drawn too
(p,) = r["processes"]
# tiers: the verifier's bodies and bytes by tier, as the report's JSON has them.
tiers = {x["tier"]: [int(x["bodies"]), int(x["bytes"])] for x in rows["tiers"]}
assert tiers == {t: [v["bodies"], v["bytes"]] for t, v in p["code"]["by_tier"].items()}, (tiers, p["code"]["by_tier"])
assert sum(b for b, _ in tiers.values()) == p["code"]["bodies"], (tiers, p["code"]["bodies"])
assert all(int(x["vpid"]) == p["vpid"] for x in rows["tiers"]), rows["tiers"]
# rundowns: each one of the report's, its time, duration and records.
rd = [(int(x["rundown_id"]), x["trigger"], int(x["begin_ns"]), round(float(x["duration_ms"]) * 1e6),
       int(x["method_records"])) for x in rows["rundowns"]]
want = sorted((x["rundown_id"], x["trigger"], x["begin_ns"], x["duration_ns"], x["method_records"])
              for x in p["rundowns"])
assert sorted(rd) == want and len(rd) >= 2, (rd, want)
for x in rows["rundowns"]:
    assert abs(float(x["end_s"]) - float(x["begin_s"]) - float(x["duration_ms"]) / 1e3) < 1e-5, x
# lockwaits: every JIT-path wait of jitprov-lockwait --waits, as many per site as the
# report's contended waits (lockwait.json's blocked_by), on the rundowns' timeline.
JIT = {"tier0_publish", "tier1_publish", "osr_publish", "rejit", "activate", "unload"}
raw = [w for w in csv.DictReader(open(d + "/lockwait-waits.csv")) if w["site"] in JIT]
assert len(rows["lockwaits"]) == len(raw), (len(rows["lockwaits"]), len(raw))
per_site = collections.Counter(x["site"] for x in rows["lockwaits"])
want = {s["site"]: s["contended"] for s in r["lock_waits"]["sites"] if s["site"] in JIT and s["contended"]}
assert dict(per_site) == want, (dict(per_site), want)
for x, w in zip(rows["lockwaits"], raw):
    assert abs(float(x["wait_us"]) * 1e3 - int(w["wait_ns"])) <= 1 and x["blocked_by"] == w["blocked_by"], (x, w)
# One origin for both: the first rundown or wait is at 0, all of them at or after it.
times = [float(x["begin_s"]) for x in rows["rundowns"]] + [float(x["t_s"]) for x in rows["lockwaits"]]
assert min(times) == 0.0, min(times)
# The same clock: waits minus rundowns' begin_s = CLOCK_MONOTONIC differences.
if rows["lockwaits"]:
    w0 = min(rows["lockwaits"], key=lambda x: float(x["t_s"]))
    raw0 = min(int(w["begin_ns"]) for w in raw)
    for x, w in zip(rows["lockwaits"], raw):
        assert abs((float(x["t_s"]) - float(w0["t_s"])) * 1e9 - (int(w["begin_ns"]) - raw0)) < 2e3, (x, w)
# hottest: perf.json's hottest, in its order.
hot = [(x["name"], int(x["samples"])) for x in rows["hottest"]]
assert hot == [(m["name"], m["samples"]) for m in r["perf"]["hottest"]] and hot[0][0] == "Hot::work", hot
print("plots: %s; %d tiers, %d rundowns, %d JIT-path waits, %d hottest" % (
    ", ".join(sorted(files)), len(tiers), len(rd), len(rows["lockwaits"]), len(hot)))
PY
pass "jitprov report's plots: 1000x600 PNGs, their CSVs the report's figures:
$(sed -n '/^plots/,$p' "$WORK/report.txt" | sed 's/^/    /')"
# The timeline against babeltrace2's reading: each rundown's begin_ns is its
# rundown_begin event's time, and its begin_s less a wait's t_s is the difference of
# their CLOCK_MONOTONIC times (the event's clock value; the wait's begin_ns): the clock
# offset that report read from the trace's metadata is babeltrace2's.
$PY - "$WORK/rec" <<'PY' || fail "the plots' timeline is not the trace's"
import csv, sys
from bt2read import events
d = sys.argv[1]
begins = [(f["_ns"], f["_mono"]) for n, f in events(d + "/trace", ("jitprov_rundown:rundown_begin",), times=True, mono=True)]
rd = list(csv.DictReader(open(d + "/report/rundowns.csv")))
assert sorted(int(x["begin_ns"]) for x in rd) == sorted(ns for ns, _ in begins), (rd, begins)
mono = dict(begins)
waits = list(csv.DictReader(open(d + "/report/lockwaits.csv")))
raw = [w for w in csv.DictReader(open(d + "/lockwait-waits.csv")) if w["site"] in
       {"tier0_publish", "tier1_publish", "osr_publish", "rejit", "activate", "unload"}]
worst = 0
for x in rd:
    for y, w in list(zip(waits, raw))[:50]:
        want = (mono[int(x["begin_ns"])] - int(w["begin_ns"])) / 1e9
        worst = max(worst, abs(float(x["begin_s"]) - float(y["t_s"]) - want))
assert worst < 2e-6, worst
print("timeline: %d rundowns at babeltrace2's times, waits within %.1f us of CLOCK_MONOTONIC" % (len(rd), worst * 1e6))
PY
# Without gnuplot: one line, the rest of the report as before, exit 0, nothing written.
mkdir -p "$WORK/nognuplot"
PATH=$WORK/nognuplot "$JITPROV" report "$WORK/rec" --plots "$WORK/plots2" >"$WORK/nogp.txt" 2>"$WORK/nogp.err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$WORK/nogp.err" ] && [ ! -e "$WORK/plots2" ] ||
  fail "report without gnuplot: exit $rc, $(cat "$WORK/nogp.err"), plots2 $(ls "$WORK/plots2" 2>&1)"
[ "$(grep -c '^plots' "$WORK/nogp.txt")" -eq 1 ] &&
  grep -qx "plots: none written: gnuplot not found in PATH (Debian: apt install gnuplot-nox)" "$WORK/nogp.txt" &&
  diff <(sed '/^plots/,$d' "$WORK/report.txt") <(sed '/^plots/,$d' "$WORK/nogp.txt") >/dev/null &&
  [ "$(sed -n '/^plots/,$p' "$WORK/nogp.txt" | wc -l)" -eq 1 ] ||
  fail "report without gnuplot: $(cat "$WORK/nogp.txt")"
pass "report without gnuplot in PATH: exit 0, \"$(grep '^plots' "$WORK/nogp.txt")\", the rest unchanged"
# A lockwait.json cut short (jitprov-lockwait killed in its report): that part left out,
# said on stderr and in the JSON, the rest of the report as ever (before: exit 1, nothing).
cp -r "$WORK/rec" "$WORK/cut"
head -c 40 "$WORK/rec/lockwait.json" >"$WORK/cut/lockwait.json"
"$JITPROV" report "$WORK/cut" --no-plots --json >"$WORK/cut.json" 2>"$WORK/cut.err"
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$WORK/cut.err")" -eq 1 ] &&
  grep -q "^jitprov report: $WORK/cut/lockwait.json: not JSON (.*): left out of the report$" "$WORK/cut.err" &&
  $PY -c 'import json,sys; r = json.load(open(sys.argv[1])); assert r["lock_waits"] is None and len(r["unreadable"]) == 1 and r["verdict"], r.keys()' "$WORK/cut.json" ||
  fail "report with lockwait.json cut short: exit $rc: $(cat "$WORK/cut.err")"
pass "report with lockwait.json cut short: exit 0, $(cat "$WORK/cut.err")"
# --no-plots: nothing said, nothing written; --plots DIR2 elsewhere.
"$JITPROV" report "$WORK/rec" --no-plots --json >"$WORK/noplots.json" || fail "report --no-plots"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["plots"] is None' "$WORK/noplots.json" ||
  fail "report --no-plots --json: plots not null"
# --plots into a directory that cannot be made: the report printed, one line, exit 1 (it
# was exit 0 with "plots: none written" on stdout).
: >"$WORK/a-file"
"$JITPROV" report "$WORK/rec" --plots "$WORK/a-file/plots" >"$WORK/badplots.txt" 2>"$WORK/badplots.err"; rc=$?
[ $rc -eq 1 ] && grep -q "^process " "$WORK/badplots.txt" && [ "$(wc -l <"$WORK/badplots.err")" -eq 1 ] &&
  grep -qx "jitprov report: --plots $WORK/a-file/plots: .*" "$WORK/badplots.err" ||
  fail "report --plots FILE/plots: exit $rc: $(cat "$WORK/badplots.err")"
"$JITPROV" report "$WORK/rec" --plots "$WORK/plots3" >"$WORK/plots3.txt" || fail "report --plots"
[ "$(ls "$WORK/plots3" | grep -c '\.png$')" -eq 4 ] && grep -q "^plots .* in $WORK/plots3:" "$WORK/plots3.txt" ||
  fail "report --plots $WORK/plots3: $(ls "$WORK/plots3") $(cat "$WORK/plots3.txt")"
pass "report --no-plots: none; --plots DIR2: 4 PNGs there"

# --plots through a symbolic link to a directory: written there (was: "not a writable
# directory", exit 1); --plots "": a usage error.
mkdir -p "$WORK/plots4" && ln -s "$WORK/plots4" "$WORK/plots4-link"
"$JITPROV" report "$WORK/rec" --plots "$WORK/plots4-link" >"$WORK/plots4.txt" 2>"$WORK/plots4.err" &&
  [ "$(ls "$WORK/plots4" | grep -c '\.png$')" -eq 4 ] ||
  fail "report --plots LINK: $(cat "$WORK/plots4.err") $(ls "$WORK/plots4")"
"$JITPROV" report "$WORK/rec" --plots "" >/dev/null 2>"$WORK/plots5.err"
rc=$?
[ $rc -eq 2 ] && grep -qx 'jitprov report: --plots: an empty directory name (see --help)' "$WORK/plots5.err" ||
  fail "report --plots '': exit $rc: $(cat "$WORK/plots5.err")"
pass "report --plots LINK: 4 PNGs through the link; --plots '': exit 2"

# --- record's files not as record left them ------------------------------------------------
# bad_file NAME CONTENT REGEX: DIR/NAME replaced (CONTENT "fifo": a FIFO): the report exits 0
# within 60 s, its part null, one line on stderr matching REGEX, the rest reported. Before:
# a field of another type aborted it (std::terminate, exit 134), a FIFO hung it.
bad_file() {
  local name=$1 content=$2 re=$3 d
  d=$WORK/badfile-$((++BAD_FILES))
  rm -rf "$d" && cp -r "$WORK/rec" "$d" && rm -f "$d/$name"
  if [ "$content" = fifo ]; then mkfifo "$d/$name"; else printf '%s' "$content" >"$d/$name"; fi
  timeout 60 "$JITPROV" report "$d" --json --plots "$d/plots" >"$d.json" 2>"$d.err"
  local rc=$?
  [ $rc -eq 0 ] && [ "$(wc -l <"$d.err")" -eq 1 ] &&
    grep -qE "^jitprov report: $d/$name: $re: left out of the report$" "$d.err" ||
    fail "report with $name as $content: exit $rc: $(cat "$d.err")"
  $PY - "$d.json" "$name" <<'PY' || fail "report with $name as $content: the JSON"
import json, sys
r = json.load(open(sys.argv[1]))
part = {"summary.json": "record", "lockwait.json": "lock_waits", "perf.json": "perf"}[sys.argv[2]]
assert r[part] is None and len(r["unreadable"]) == 1 and r["verdict"] and r["processes"], r
assert all(r[k] is not None for k in ("record", "lock_waits", "perf") if k != part), r
PY
  pass "report with $name as '$content': exit 0, $(cat "$d.err")"
}
BAD_FILES=0
bad_file summary.json '{"seconds": "5.2", "command_line": "java Hot"}' \
  'unexpected content \("seconds" is a string, not a number\)'
bad_file summary.json '{"command_line": null, "exit_status": [1]}' \
  'unexpected content \("exit_status" is an array, not a number\)'
bad_file lockwait.json '{"sites": {"tier0_publish": 5}}' \
  'unexpected content \(site "tier0_publish" is a number, not an object\)'
bad_file lockwait.json '{"sites": {}, "drops": {"bad_argument": null}}' \
  'unexpected content \(drops "bad_argument" is null, not a count\)'
bad_file perf.json '{"hottest": ["Hot::work"]}' 'unexpected content \("hottest" holds a string, not an object\)'
bad_file perf.json fifo 'not a regular file'
bad_file lockwait.json fifo 'not a regular file'
# A site without its wait figures is a site of no acquisitions (was: an assertion).
d=$WORK/nowait && cp -r "$WORK/rec" "$d" && echo '{"sites": {"rejit": {"outside": {"hold": {}}}}}' >"$d/lockwait.json"
"$JITPROV" report "$d" --no-plots --json >"$d.json" 2>"$d.err" && [ ! -s "$d.err" ] &&
  $PY -c 'import json,sys; l = json.load(open(sys.argv[1]))["lock_waits"]; assert l["sites"] == [] and l["acquisitions"] == 0, l' "$d.json" ||
  fail "report with a site of no wait figures: $(cat "$d.err")"
pass "report with a lock site of no wait figures: 0 acquisitions, nothing said"

# --- a verifier's report that says more than this recording's did ---------------------------
# The real verifier's JSON, edited (a fault injected where the trace cannot easily be made
# to hold it): its first rundown without its end (the session stopped while it ran), 3
# packets missing, 3 things not checked, a process label with an ESC sequence and a
# newline. The report: the rundown "unfinished" (was: a duration of minus the trace's
# clock, -1796633799767 ms), its CSV row with no end and no duration, the packets missing
# beside "events lost", every thing not checked (was: the first), and no control
# character on the terminal.
VERIFY=$(dirname "$JITPROV")/../verify/jitprov-verify
cat >"$WORK/edit.py" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
s = v["sessions"][0]
s["packets_before_first"] = 3
p = s["processes"][0]
p["label"] = "evil \x1b[2J\nprocess 1: 999 code bodies"
del p["rundowns"][0]["rundown_end"]
p["rundowns"][0]["end_ns"] = 0
v["not_checked"] = ["first thing", "second thing", "third thing"]
print(json.dumps(v))
PY
printf '#!/bin/sh\n"%s" "$@" >"%s"\nrc=$?\n%s "%s" "%s" || exit 99\nexit $rc\n' "$VERIFY" "$WORK/edit-verify.json" \
  "$PY" "$WORK/edit.py" "$WORK/edit-verify.json" >"$WORK/edit-verify"
chmod +x "$WORK/edit-verify"
JITPROV_VERIFY=$WORK/edit-verify "$JITPROV" report "$WORK/rec" --plots "$WORK/plots-edit" >"$WORK/edit.txt" 2>"$WORK/edit.err" ||
  fail "report through the edited verifier: $(cat "$WORK/edit.err")"
JITPROV_VERIFY=$WORK/edit-verify "$JITPROV" report "$WORK/rec" --no-plots --json >"$WORK/edit.json" ||
  fail "report --json through the edited verifier"
grep -q "^    .* unfinished  [0-9]* method records" "$WORK/edit.txt" &&
  grep -qx "  events lost: 0, packets missing (before a stream's first, between chunks, or from their files): 3" "$WORK/edit.txt" &&
  [ "$(sed -n '/^not checked:$/,/^$/p' "$WORK/edit.txt" | grep -c '^  .* thing$')" -eq 3 ] &&
  ! grep -q $'\x1b' "$WORK/edit.txt" && grep -q '^evil ?\[2J?process 1: 999 code bodies: ' "$WORK/edit.txt" &&
  ! grep -q -- '-[0-9]\{6,\}' "$WORK/edit.txt" ||
  fail "report through the edited verifier: $(cat "$WORK/edit.txt")"
$PY - "$WORK/edit.json" "$WORK/plots-edit/rundowns.csv" <<'PY' || fail "report --json through the edited verifier"
import csv, json, sys
r = json.load(open(sys.argv[1]))
rd = r["processes"][0]["rundowns"]
assert rd[0]["duration_ns"] is None and all(isinstance(x["duration_ns"], int) for x in rd[1:]), rd
assert r["packets_missing"] == 3 and r["not_checked"] == ["first thing", "second thing", "third thing"], r
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == sum(len(p["rundowns"]) for p in r["processes"]), rows
assert sum(1 for x in rows if x["end_s"] == "" and x["duration_ms"] == "") == 1, rows
assert all(float(x["duration_ms"]) >= 0 for x in rows if x["duration_ms"]), rows
PY
pass "report through an edited verifier: a rundown unfinished, $(grep 'events lost' "$WORK/edit.txt" | sed 's/^ *//'), 3 things not checked, no ESC"
# A verifier killed by a signal: said as such (was: "gave no report (exit 139):
# /proc/self/fd/3: not JSON").
printf '#!/bin/sh\necho "reading the trace" >&2\nkill -SEGV $$\n' >"$WORK/crash-verify" && chmod +x "$WORK/crash-verify"
JITPROV_VERIFY=$WORK/crash-verify "$JITPROV" report "$WORK/rec" --no-plots >"$WORK/crash.out" 2>"$WORK/crash.err"
rc=$?
[ $rc -eq 6 ] && [ ! -s "$WORK/crash.out" ] &&
  grep -qx "jitprov report: $WORK/crash-verify was killed by signal 11 (Segmentation fault) before its report: reading the trace" "$WORK/crash.err" ||
  fail "report with a verifier that crashes: exit $rc: $(cat "$WORK/crash.err")"
pass "report with a verifier killed by SIGSEGV: exit 6, $(cat "$WORK/crash.err")"

# --- record -p PID on a running JVM -------------------------------------------------------
java -cp "$WORK/hot" Hot "$WORK/hot/running" >"$WORK/jvm.out" 2>&1 &
JP=$!
track_pid "$JP"
for _ in $(seq 300); do [ -s "$WORK/hot/running" ] && break; kill -0 "$JP" 2>/dev/null || break; sleep 0.1; done
[ -s "$WORK/hot/running" ] || fail "the JVM did not start: $(cat "$WORK/jvm.out")"
"$JITPROV" record -p "$JP" -d 2 -o "$WORK/pid" >"$WORK/pid.out" 2>"$WORK/pid.err"
rc=$?
[ $rc -eq 0 ] || fail "record -p $JP: exit $rc: $(cat "$WORK/pid.out" "$WORK/pid.err")"
kill -0 "$JP" || fail "the JVM died during record -p"
$PY - "$WORK/pid" "$JP" <<'PY' || fail "record -p: $(cat "$WORK/pid.out")"
import json, sys
from bt2read import events
d, jp = sys.argv[1], int(sys.argv[2])
s = json.load(open(d + "/summary.json"))
assert s["pid"] == jp and s["attach"].startswith("attached: HotSpot 17") and s["runtime"] == "java", (s["pid"], s["attach"], s["runtime"])
assert s["preload"] is None, s["preload"]  # nothing preloaded into a running process
assert s["verify_exit"] == 0 and s["events_lost"] == 0, (s["verify_exit"], s["events_lost"])
(p,) = s["processes"]
assert p["vpid"] == jp and [r["trigger"] for r in p["rundowns"]][:1] == ["session"], p
records = sum(1 for n, f in events(d + "/trace", ("jitprov_rundown:method",)))
assert records == sum(r["method_records"] for r in p["rundowns"]) and records > 0, records
assert p["code_bodies"] >= p["rundowns"][0]["method_records"], p
PY
grep -q "^  exit:        0 (recorded for 2.00 s" "$WORK/pid.out" || fail "record -p: $(cat "$WORK/pid.out")"
pass "record -p $JP -d 2 on a running JVM: verified, the JVM still runs:
$(sed 's/^/    /' "$WORK/pid.out")"

# Recorded again, twice, right after: its agent (loaded by the first) registered with the
# first recording's daemon, and its lttng-ust finds each new one only when it next tries
# (up to 5 s later). Each recording waits for that before its 2 s start (registered_ms),
# and has the JVM's code in its rundown (the second of two used to record nothing: 119).
# The agent keeps the first's options: the second's --rundown-every is not applied, said
# (its summary listed it as the agent's options).
# The second time, a twin recording starts at the same moment, no daemon running: one of
# the two starts it, the other uses it (two that each started one: "started started", or
# the second daemon exiting at once, its recording with 122).
for again in 1 2; do
  every=() && [ $again = 2 ] && every=(--rundown-every 1)
  if [ $again = 2 ]; then
    "$JITPROV" record -p "$JP" -d 2 -o "$WORK/pid-twin" >"$WORK/twin.out" 2>"$WORK/twin.err" &
    TWIN=$!
    track_pid "$TWIN"
  fi
  "$JITPROV" record -p "$JP" -d 2 "${every[@]}" -o "$WORK/pid-again$again" >"$WORK/again.out" 2>"$WORK/again.err"
  rc=$?
  [ $rc -eq 0 ] || fail "record -p $JP, again ($again): exit $rc: $(cat "$WORK/again.out" "$WORK/again.err")"
  $PY - "$WORK/pid-again$again" "$JP" <<'PY' || fail "record -p again: $(cat "$WORK/again.out")"
import json, sys
from bt2read import events
d, jp = sys.argv[1], int(sys.argv[2])
s = json.load(open(d + "/summary.json"))
assert s["attach"].startswith("jitprov's agent was loaded already"), s["attach"]
assert s["agent_options"] is None and s["agent_options_not_applied"].startswith("trigger=session"), s
assert isinstance(s["registered_ms"], (int, float)) and 0 <= s["registered_ms"] < 8000, s["registered_ms"]
(p,) = s["processes"]
records = sum(1 for n, f in events(d + "/trace", ("jitprov_rundown:method",)))
assert records > 0 and p["vpid"] == jp, (records, p)
print("  again: registered after %.1f ms, %d rundown records" % (s["registered_ms"], records))
PY
  if [ $again = 2 ]; then
    grep -qx "jitprov record: PID $JP (java): jitprov's agent was loaded already and keeps its own options: --rundown-every 1.00 not applied" \
      "$WORK/again.err" || fail "record -p --rundown-every 1 of an agent loaded already: $(cat "$WORK/again.err")"
    wait "$TWIN" || fail "record -p $JP, the twin started at the same moment: exit $?: $(cat "$WORK/twin.err")"
    kinds=$($PY -c 'import json,sys; print(" ".join(sorted(json.load(open(d + "/summary.json"))["sessiond"] for d in sys.argv[1:])))' \
      "$WORK/pid-again2" "$WORK/pid-twin")
    [ "$kinds" = "shared started" ] || fail "two record -p started at once: their daemons: $kinds"
    ! lttng list >/dev/null 2>&1 || fail "an lttng-sessiond answers after two record -p started at once"
  fi
done
pass "record -p $JP -d 2 twice more: each waited for the agent's registration, each has its rundown; the second with a twin started at the same moment: one started the daemon, the other used it ($kinds)"

# Two recordings of the JVM at once: the second uses the lttng-sessiond the first started
# (lttng's shared place, where the JVM looks), and the first, ending before it, leaves the
# daemon to it (it stopped the daemon under the second: lttng stop failed, 122). The
# daemon stops when the last one ends: none answers after. The first's output, read
# through a pipe, ends with it (the daemon's keeper held the pipe until the second
# ended). The first's verifier takes 60 s, and a SIGINT then stops it, said in the
# summary (the signal went unanswered until the verifier ended).
printf '#!/bin/sh\necho $PPID >"%s/slow-verify.ppid"\necho $$ >"%s/slow-verify.pid"\nsleep 60\n' "$WORK" "$WORK" \
  >"$WORK/slow-verify" && chmod +x "$WORK/slow-verify"
(
  JITPROV_VERIFY=$WORK/slow-verify "$JITPROV" record -p "$JP" -d 2 -o "$WORK/both1" 2>"$WORK/both1.err" |
    cat >"$WORK/both1.out"
  echo "${PIPESTATUS[0]} $(date +%s%N)" >"$WORK/both1.end"
) &
B1=$!
track_pid "$B1"
for _ in $(seq 200); do lttng list >/dev/null 2>&1 && break; sleep 0.05; done
"$JITPROV" record -p "$JP" -d 5 -o "$WORK/both2" >"$WORK/both2.out" 2>"$WORK/both2.err" &
B2=$!
track_pid "$B2"
for _ in $(seq 300); do [ -s "$WORK/slow-verify.pid" ] && break; sleep 0.1; done
[ -s "$WORK/slow-verify.ppid" ] || fail "the first of two record -p never verified: $(cat "$WORK/both1.err")"
t_int=$(date +%s%N)
kill -INT "$(cat "$WORK/slow-verify.ppid")"
wait "$B2"
rc2=$?
t2=$(date +%s%N)
wait "$B1"
read -r rc1 t1 <"$WORK/both1.end"
[ "$rc1" = 119 ] && [ $rc2 -eq 0 ] ||
  fail "two record -p at once: exit $rc1 and $rc2: $(cat "$WORK/both1.out" "$WORK/both1.err" "$WORK/both2.out" "$WORK/both2.err")"
grep -qx "jitprov record: the lttng-sessiond this recording started stays, for another jitprov record -p that uses it; it stops when the last one ends" \
  "$WORK/both1.err" || fail "the first of two record -p: $(cat "$WORK/both1.err")"
[ $((t2 - t1)) -gt 1000000000 ] || fail "the first of two record -p: its output ended $(((t1 - t2) / 1000000)) ms after the second's end (not before it)"
! lttng list >/dev/null 2>&1 || fail "an lttng-sessiond answers after the last record -p: $(lttng list 2>&1 | head -3)"
ms=$(((t1 - t_int) / 1000000))
[ $ms -lt 10000 ] && ! kill -0 "$(cat "$WORK/slow-verify.pid")" 2>/dev/null &&
  grep -q "^  verdict:     NOT VERIFIED: stopped by SIGINT during the verification (to verify it: jitprov-verify $WORK/both1/trace)" "$WORK/both1.out" ||
  fail "SIGINT during the verification: exit $rc1 after $ms ms: $(cat "$WORK/both1.out" "$WORK/both1.err")"
# both_check D KIND VERIFY_EXITS...: D's summary names its daemon KIND, its verify_exit is
# one of VERIFY_EXITS (4: the agent was loaded before, its earlier code has no
# method_load here, as above), and its trace holds its rundown.
both_check() {
  $PY - "$@" <<'PY' || fail "two record -p at once: $(cat "$WORK"/both*.out)"
import json, sys
from bt2read import events
d, daemon, exits = sys.argv[1], sys.argv[2], sys.argv[3:]
s = json.load(open(d + "/summary.json"))
assert str(s["verify_exit"]) in exits and s["sessiond"] == daemon, (d, s["verify_exit"], s["sessiond"], s["verdict"])
records = sum(1 for n, f in events(d + "/trace", ("jitprov_rundown:method",)))
assert records > 0, (d, records)
print("  %s: %s lttng-sessiond, %d rundown records, verify exit %s" % (d.rsplit("/", 1)[1], daemon, records, s["verify_exit"]))
PY
}
both_check "$WORK/both1" started None
both_check "$WORK/both2" shared 0 4
pass "two record -p of $JP at once: the first left its lttng-sessiond to the second, which stopped it; the first's output ended $(((t2 - t1) / 1000000)) ms before the second's; SIGINT during the first's verification: the verifier stopped, exit 119 after $ms ms"

# A JVM that cannot see our lttng-sessiond (its own mount namespace, an empty
# /var/run/lttng, as in a container): attached, but nothing recorded: 119, said.
unshare -m --propagation private sh -c 'mount -t tmpfs none /var/run/lttng && exec "$@"' sh \
  java -cp "$WORK/hot" Hot "$WORK/hot/running2" >"$WORK/jvm2.out" 2>&1 &
JP2=$!
track_pid "$JP2"
for _ in $(seq 300); do [ -s "$WORK/hot/running2" ] && break; kill -0 "$JP2" 2>/dev/null || break; sleep 0.1; done
[ -s "$WORK/hot/running2" ] || fail "the JVM in its own namespace did not start: $(cat "$WORK/jvm2.out")"
"$JITPROV" record -p "$(cat "$WORK/hot/running2")" -d 1 -o "$WORK/pid2" >"$WORK/pid2.out" 2>"$WORK/pid2.err"
rc=$?
[ $rc -eq 119 ] && grep -q "^  verdict:     nothing recorded: the agent in PID .* did not register with the lttng-sessiond" \
  "$WORK/pid2.out" || fail "record -p of a JVM that cannot see the daemon: exit $rc: $(cat "$WORK/pid2.out" "$WORK/pid2.err")"
pass "record -p of a JVM in another mount namespace: exit 119, \"$(grep verdict: "$WORK/pid2.out" | sed 's/^ *//')\""

# --- errors ---------------------------------------------------------------------------------
# expect VERB STATUS LINE_REGEX ARGS...: `jitprov VERB ARGS...` exits STATUS with one line
# on stderr matching LINE_REGEX and nothing on stdout. RUN_PATH: its PATH; RUN_AS: a
# command to run it through (setpriv).
RUN_AS=()
expect() {
  local verb=$1 want=$2 re=$3
  shift 3
  PATH=${RUN_PATH:-$PATH} "${RUN_AS[@]}" "$JITPROV" "$verb" "$@" >"$WORK/cmd.out" 2>"$WORK/cmd.err"
  local rc=$?
  [ $rc -eq "$want" ] || fail "$verb $*: exit $rc, not $want: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  [ ! -s "$WORK/cmd.out" ] && [ "$(wc -l <"$WORK/cmd.err")" -eq 1 ] && grep -qE "^jitprov $verb: $re" "$WORK/cmd.err" ||
    fail "$verb $*: output: $(cat "$WORK/cmd.out" "$WORK/cmd.err")"
  pass "$verb $*: exit $rc, \"$(cat "$WORK/cmd.err")\""
}
expect report 3 "$WORK/none: No such file or directory" "$WORK/none"
expect report 3 "$WORK/hot/Hot.java: not a directory" "$WORK/hot/Hot.java"
expect report 4 "no trace in $WORK/hot " "$WORK/hot"
# A recording whose trace was removed since: not "recorded nothing" (its summary says
# what was recorded), but said as gone.
mkdir -p "$WORK/gone" && cp "$WORK/rec/summary.json" "$WORK/gone/"
expect report 4 "no trace in $WORK/gone \\($WORK/gone/trace has no CTF metadata\\), though its summary.json says the recording was: verified: .*; removed or moved since\\?$" "$WORK/gone"
mkdir -p "$WORK/bad/trace" && head -c 100 "$(find "$WORK/rec/trace" -name metadata | head -1)" >"$WORK/bad/trace/metadata"
expect report 5 "cannot read the trace $WORK/bad/trace: " "$WORK/bad"
mkfifo "$WORK/fifo"
expect report 3 "$WORK/fifo: not a directory" "$WORK/fifo"
# A directory its user cannot list is unreadable (5), not "no trace" (4): as nobody, with a
# copy of the command it can run (it links no library of the build).
mkdir -p "$WORK/nobody/closed" && chmod 700 "$WORK/nobody/closed" && chmod 755 "$WORK" "$WORK/nobody" &&
  install -m 755 "$JITPROV" "$WORK/nobody/jitprov" || fail "the unreadable directory's set-up"
SAVED=$JITPROV JITPROV=$WORK/nobody/jitprov RUN_AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
expect report 5 "$WORK/nobody/closed: Permission denied" "$WORK/nobody/closed"
# Its trace/ alone closed (record leaves it 0770, root's): 5, that directory named (was: 4,
# "no trace ... removed or moved since?").
mkdir -p "$WORK/nobody/rec" && cp -r "$WORK/rec/trace" "$WORK/rec/summary.json" "$WORK/nobody/rec/" &&
  chmod 755 "$WORK/nobody/rec" && chmod 700 "$WORK/nobody/rec/trace" || fail "the closed trace's set-up"
expect report 5 "$WORK/nobody/rec/trace: Permission denied \(a trace in it cannot be looked for\)" "$WORK/nobody/rec"
JITPROV=$SAVED RUN_AS=()
sleep 100 &
SL=$!
track_pid "$SL"
for _ in $(seq 50); do [ "$(cat /proc/$SL/comm 2>/dev/null)" = sleep ] && break; sleep 0.1; done  # exec'd: not bash yet
expect record 117 "-p $SL: PID $SL \(sleep\) runs no runtime jitprov knows" -p "$SL" -o "$WORK/e1"
mkdir -p "$WORK/noperf"
for c in java lttng lttng-sessiond; do ln -s "$(command -v $c)" "$WORK/noperf/$c"; done
RUN_PATH=$WORK/noperf expect record 118 "--perf: perf is not installed" --perf -o "$WORK/e2" -- java -version
# perf that cannot run (here a user's ~/.perfconfig it refuses; a user under Debian's
# kernel.perf_event_paranoid 3, a container): 118 before anything starts (was: perf failed
# before CMD ran, "java exited with status 255", nothing recorded, exit 255).
mkdir -p "$WORK/badperf" && printf '[record]\n\tcall-graph = nonsense\n' >"$WORK/badperf/.perfconfig"
HOME=$WORK/badperf expect record 118 "--perf: perf record cannot run here \(exit 255\): " --perf -o "$WORK/e3" -- java -version
[ ! -e "$WORK/e1" ] && [ ! -e "$WORK/e2" ] && [ ! -e "$WORK/e3" ] || fail "an early error created the output directory"
pass "jitprov report, record -p, --lockwait, --perf: all checks in $(($(date +%s) - T0)) s"
