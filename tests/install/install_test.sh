#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library as a runtime nobody here wrote uses it: `meson install --destdir` into a
# stage; the embedding example of docs/embedding.md, extracted
# from it, so the two cannot drift apart) built outside the project's build
# with `pkg-config --cflags --libs jitprov` from the stage; run in host mode inside a
# real lttng session (private lttng-sessiond); the trace checked by the staged
# jitprov-verify and by babeltrace2 for the host's own addresses. Also: SONAME, only
# jitprov_* exported, everything the install promises is there.
#   install_test.sh BUILD_DIR SOURCE_DIR
. "$(dirname "$0")/../integration/lib.sh"
BUILD=${1:?usage: install_test.sh BUILD_DIR SOURCE_DIR}
SRC=${2:?usage: install_test.sh BUILD_DIR SOURCE_DIR}
require_lttng
require_cmd cc pkg-config nm readelf meson
enter_private_namespace "$@"
WORK=$(work_dir jitprov-install)
STAGE=$WORK/stage

meson install -C "$BUILD" --destdir "$STAGE" --no-rebuild >"$WORK/install.log" 2>&1 ||
  { tail -20 "$WORK/install.log" >&2; fail "meson install --destdir"; }
lib=$(find "$STAGE" -name libjitprov.so.1 -printf '%h\n' | head -1)
[ -n "$lib" ] || fail "no libjitprov.so.1 in the stage"
prefix=$(cd "$lib/../.." && pwd)  # <stage>/usr/local from <stage>/usr/local/lib/<arch>
for f in "$lib/jitprov/libjitprov-lttng.so" "$lib/pkgconfig/jitprov.pc" "$prefix/include/jitprov/jitprov.h" \
         "$prefix/bin/jitprov-sim" "$prefix/bin/jitprov-verify" \
         "$prefix/share/jitprov/lockwait.bt" "$prefix/share/jitprov/rundown.bt" "$prefix/share/jitprov/jitpath.bt" \
         "$prefix/share/man/man1/jitprov.1" "$prefix/share/man/man1/jitprov-verify.1" "$prefix/share/doc/jitprov/spec.md"; do
  [ -e "$f" ] || fail "not installed: ${f#"$STAGE"}"
done
pass "installed: library, provider, header, jitprov.pc, tools, bpftrace scripts, man pages, documentation"
# The command; its default agents are in the library's jitprov/ directory (JITPROV_AGENT_DIR).
"$prefix/bin/jitprov" attach --help >/dev/null || fail "jitprov attach --help"
"$prefix/bin/jitprov" attach $$ 2>/dev/null; rc=$?
[ $rc -eq 4 ] || fail "installed jitprov attach to a shell: exit $rc, not 4 (not a runtime)"
if [ -e "$lib/jitprov/libjitprov-jvmti.so" ]; then
  grep -qaF "${lib#"$STAGE"}/jitprov" "$prefix/bin/jitprov" || fail "jitprov does not look for its agent in ${lib#"$STAGE"}/jitprov"
fi
pass "installed jitprov: attach --help, exit 4 for a shell, the agent's directory built in"

soname=$(readelf -d "$lib/libjitprov.so.1" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libjitprov.so.1 ] || fail "SONAME is '$soname', not libjitprov.so.1"
# Defined dynamic symbols: jitprov_* functions, and the version node of libjitprov.map
# (type A), nothing else.
nm -D --defined-only "$lib/libjitprov.so.1" >"$WORK/nm"
others=$(awk '!($2 == "A" && $3 == "JITPROV_0") && $3 !~ /^jitprov_/ {print $3}' "$WORK/nm")
[ -z "$others" ] || fail "exported besides jitprov_*: $(echo "$others" | head -5 | tr '\n' ' ')"
# Exactly the functions the installed header declares.
grep -o 'JITPROV_API[^(]*(' "$prefix/include/jitprov/jitprov.h" | grep -o 'jitprov_[a-z0-9_]*' | sort >"$WORK/declared"
awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' "$WORK/nm" | sort >"$WORK/exported"
diff "$WORK/declared" "$WORK/exported" >"$WORK/abi.diff" ||
  fail "exported functions differ from the header (< declared only, > exported only): $(cat "$WORK/abi.diff")"
exported=$(wc -l <"$WORK/exported")
pass "SONAME libjitprov.so.1; exactly the $exported functions of jitprov.h exported, nothing else"

# docs/embedding.md's program, compiled against the stage only.
sed -n '/<!-- embed-example: begin -->/,/<!-- embed-example: end -->/p' "$SRC/docs/embedding.md" |
  sed '1,2d' | sed '$d' | sed '$d' >"$WORK/embed.c"
grep -q 'jitprov_code_retire' "$WORK/embed.c" || fail "no embedding example in docs/embedding.md"
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$STAGE
flags=$(pkg-config --cflags --libs jitprov) || fail "pkg-config jitprov"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "$WORK/embed.c" $flags -o "$WORK/embed" 2>"$WORK/cc.err" ||
  { cat "$WORK/cc.err" >&2; fail "docs/embedding.md's example does not build with: cc -std=c11 embed.c $flags"; }
readelf -d "$WORK/embed" | grep 'NEEDED.*\[libjitprov.so.1\]' >/dev/null || fail "embed does not link libjitprov.so.1"
pass "docs/embedding.md's example builds with: pkg-config --cflags --libs jitprov -> $flags"

start_sessiond
setup_session embed "$WORK/trace"
lttng start embed >/dev/null || fail "lttng start"
LD_LIBRARY_PATH=$lib LTTNG_UST_ALLOW_BLOCKING=1 "$WORK/embed" >"$WORK/embed.out" 2>"$WORK/embed.err" ||
  { cat "$WORK/embed.out" "$WORK/embed.err" >&2; fail "embed exit status"; }
lttng stop embed >/dev/null && lttng destroy embed >/dev/null || fail "lttng stop/destroy"
cat "$WORK/embed.out"
grep -qx "provider: loaded $lib/jitprov/libjitprov-lttng.so" "$WORK/embed.out" ||
  fail "the provider was not loaded from the installed library's jitprov/ directory"

LD_LIBRARY_PATH=$lib "$prefix/bin/jitprov-verify" --json "$WORK/trace" >"$WORK/verify.json"; rc=$?
[ $rc -eq 0 ] || { cat "$WORK/verify.json" >&2; fail "jitprov-verify exit $rc"; }
LD_LIBRARY_PATH=$lib "$prefix/bin/jitprov-verify" "$WORK/trace" | head -1
PYTHONPATH="$SRC/tests/integration" $PY - "$WORK/embed.out" "$WORK/verify.json" "$WORK/trace" <<'PY' || fail "trace checks"
import json, re, sys
from bt2read import events  # babeltrace2's Python bindings: decoded fields, no text scraping
out = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
published = {int(v): (name, int(addr, 16)) for name, v, addr in
             re.findall(r"published (\w+) version (\d+) at (0x[0-9a-f]+)", out)}
retired = {int(v) for v in re.findall(r"retired cancel version (\d+)", out)}
assert len(published) == 4 and len(retired) == 1, out
rundown = {}
for _, f in events(sys.argv[3], ["jitprov_rundown:method"]):
    rundown[f["version_id"]] = (f["name"], f["code_start"], f["host_tier"])
live = {v: p for v, p in published.items() if v not in retired}
assert {v: r[:2] for v, r in rundown.items()} == live, (rundown, live)
# The reused address: the retired version of cancel and refund's optimized code.
cancel_addr = published[next(iter(retired))][1]
assert [r for r in rundown.values() if r[1] == cancel_addr] == [("refund", cancel_addr, 4)], rundown
p = d["sessions"][0]["processes"][0]
assert len(d["sessions"]) == 1 and len(d["sessions"][0]["processes"]) == 1, d
assert p["method_load"] == 4 and p["code_unload"] == 1, p
r = p["rundowns"][0]
assert len(p["rundowns"]) == 1 and r["method_records"] == r["rundown_end"]["versions"] == 3, r
for g in ("G2", "G3", "G4"):
    assert r[g]["status"] == "pass", (g, r[g])
print("rundown: %d versions at the host's addresses %s; retired %s absent; verify: G2 G3 G4 pass"
      % (len(rundown), sorted(hex(p[1]) for p in rundown.values()), sorted(retired)))
PY
pass "host-mode rundown into a real lttng session, verified"
rm -rf "$WORK"
