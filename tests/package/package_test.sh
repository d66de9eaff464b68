#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages as a user gets them: built by tools/package (debhelper + meson,
# lintian clean: tools/package fails otherwise; from BUILD_DIR as it is built, when it is
# configured for /usr as tools/check's main build is, else compiled again in a copy of
# the tree, a few minutes more), checked (five packages at meson's version, six with
# jitprov-node when node's headers are here, as on tools/check's machines; SONAME, symbols, dependencies), installed on this machine with
# `apt-get install ./*.deb`, used from the installed files only (PATH without the source
# or build tree, run from elsewhere): `jitprov record -- java` on a small program
# compiled here, `jitprov record -- dotnet` on the generated .NET workload and
# `jitprov record -- node` on a script with a worker thread, each trace
# verified (the installed agents, provider and jitprov-verify), the man pages and
# pkg-config; then purged, and every file `dpkg -L` listed checked gone. Whatever
# happens, the EXIT trap purges what the test installed (the five packages and anything
# apt brought in for them), so that a failure never leaves them behind; the test refuses
# to start when any of them is installed already (it would remove them), unless a run of
# this test installed them and was killed before its trap ran (SIGKILL, a machine's
# session ended): its mark, /var/lib/jitprov-package-test/installed, names the version
# and the packages that run's install brought, and those, at that version, are purged
# first (said on stderr; refused when apt would purge anything else with them). One run
# at a time on a machine: the next waits for the lock in that directory.
#   package_test.sh SOURCE_DIR [BUILD_DIR]
. "$(dirname "$0")/../integration/lib.sh"
SRC=$(realpath "${1:?usage: package_test.sh SOURCE_DIR [BUILD_DIR]}")
BUILD=${2:+$(realpath "$2")}
PACKAGES=(libjitprov1 libjitprov-dev jitprov jitprov-jvm jitprov-dotnet)
# jitprov-node as tools/package decides: built when node's headers are there, node 20's
# or a later one's.
NODE=0
node_major=$(sed -n 's/^#define NODE_MAJOR_VERSION \([0-9]*\).*/\1/p' /usr/include/node/node_version.h 2>/dev/null)
[ -n "$node_major" ] && [ "$node_major" -ge 20 ] && NODE=1 && PACKAGES+=(jitprov-node)
require_lttng
require_cmd apt-get dpkg dpkg-deb java javac dotnet cc pkg-config man
installed_ours() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep '^.[^n]' >/dev/null && echo "$p"
  done
}
enter_private_namespace "$@"  # a private /var/run/lttng: jitprov record starts its own lttng-sessiond
# One run at a time on a machine (two would purge each other's packages): a lock held for
# the whole run, which the kernel drops when a run is killed, so that a mark found with
# the lock taken is a dead run's.
# dpkg's lock, held by another job (or by a killed run's dpkg, finishing): waited for.
APT_WAIT=(-o DPkg::Lock::Timeout=300)
MARK_DIR=/var/lib/jitprov-package-test
MARK=$MARK_DIR/installed
mkdir -p "$MARK_DIR" && exec {run_lock}>"$MARK_DIR/lock" || fail "open $MARK_DIR/lock"
flock -w 1200 "$run_lock" || fail "another run of the package test held $MARK_DIR/lock for 20 minutes"
# A run killed before its purge: its mark names the version it installed and the packages
# its install brought (ours and their dependencies). Those still there at that version are
# purged, as that run's trap would have, when apt would purge nothing else with them; a
# mark that does not match what is installed (jitprov installed since by other means) is
# dropped, and the check below refuses.
if [ -f "$MARK" ]; then
  # A kill during dpkg's run leaves its database half-done ("dpkg was interrupted"): the
  # configuration finished first, as dpkg asks (waiting while another dpkg holds its lock).
  for _ in $(seq 60); do
    dpkg --configure -a >/dev/null 2>"$MARK_DIR/configure.err" && break
    grep -qi "lock" "$MARK_DIR/configure.err" || fail "dpkg --configure -a: $(cat "$MARK_DIR/configure.err")"
    sleep 5
  done
  left_version=$(sed -n 's/^version //p' "$MARK")
  left=()
  for p in $(installed_ours); do
    [ "$(dpkg-query -W -f='${Version}' "$p")" = "$left_version" ] && left+=("$p")
  done
  if [ ${#left[@]} -gt 0 ] && [ "${#left[@]}" -eq "$(installed_ours | wc -l)" ]; then
    extra=()
    for p in $(sed -n 's/^brought //p' "$MARK"); do
      [[ " ${left[*]} " == *" $p "* ]] && continue
      dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep '^i' >/dev/null && extra+=("$p")
    done
    # apt purges what depends on them too: refused when that is more than these.
    more=$(apt-get -s purge "${left[@]}" "${extra[@]}" 2>/dev/null | sed -n 's/^Purg \([^ ]*\).*/\1/p' |
      while read -r p; do [[ " ${left[*]} ${extra[*]} " == *" ${p%%:*} "* ]] || echo "$p"; done | tr '\n' ' ')
    [ -z "$more" ] || fail "a run killed before its purge left ${left[*]} installed, and purging them would purge $more too: apt-get purge them yourself"
    echo "package test: a run killed before its purge left ${left[*]} ($left_version)${extra[*]:+ and ${extra[*]}} installed: purging them" >&2
    DEBIAN_FRONTEND=noninteractive apt-get purge "${APT_WAIT[@]}" -y -qq "${left[@]}" "${extra[@]}" >/dev/null ||
      fail "apt-get purge of what a killed run left"
  fi
  rm -f "$MARK"
fi
already=$(installed_ours | tr '\n' ' ')
[ -z "$already" ] || skip "jitprov's packages are installed on this machine ($already): this test installs and purges them; apt-get purge them first"
T0=$(date +%s)
WORK=$(work_dir jitprov-package)
export DEBIAN_FRONTEND=noninteractive
dpkg-query -W -f='${Package}:${Architecture}\n' | sort >"$WORK/before"

# The packages installed now that were not before and that the test's apt-get install
# brought ($WORK/would: what it said it would install, ours and their dependencies):
# another job installing packages meanwhile is none of the test's business.
brought() {
  [ -f "$WORK/would" ] || return 0
  dpkg-query -W -f='${Package}:${Architecture}\n' | sort | comm -13 "$WORK/before" - |
    while IFS= read -r p; do grep -qx "${p%%:*}" "$WORK/would" && echo "$p"; done
}
# Purges ours, then whatever else the test's install brought (their dependencies, marked
# automatic), by name: nothing the machine had before, nothing another job installed.
purge_installed() {
  local ours extra
  ours=$(installed_ours)
  if [ -n "$ours" ]; then
    # shellcheck disable=SC2086
    apt-get purge "${APT_WAIT[@]}" -y -qq $ours >"$WORK/purge.log" 2>&1 || dpkg --purge $ours >>"$WORK/purge.log" 2>&1
  fi
  extra=$(brought)
  if [ -n "$extra" ]; then
    # shellcheck disable=SC2086
    apt-get purge "${APT_WAIT[@]}" -y -qq $extra >>"$WORK/purge.log" 2>&1
  fi
}
on_exit() {
  local rc=$?
  cleanup_pids
  if [ -n "$(installed_ours)" ]; then
    echo "package test: purging what it installed" >&2
    purge_installed
    [ -z "$(installed_ours)" ] || echo "package test: COULD NOT PURGE $(installed_ours | tr '\n' ' '): $(tail -5 "$WORK/purge.log")" >&2
  fi
  [ -n "$(installed_ours)" ] || rm -f "$MARK"  # kept for the next run otherwise
  rm -rf "$WORK"
  exit $rc
}
trap on_exit EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# --- built by tools/package ----------------------------------------------------------------
# The tree as it was: tools/package builds in a copy.
tree_state() { git -C "$SRC" status --porcelain --untracked-files=all 2>/dev/null; }
tree_state >"$WORK/tree-before"
from=()
if [ -n "$BUILD" ] && [ "$(meson introspect "$BUILD" --buildoptions | $PY -c 'import json, sys
print({o["name"]: o["value"] for o in json.load(sys.stdin)}["prefix"])')" = /usr ]; then
  from=(--build-dir "$BUILD")
fi
t=$(date +%s)
"$SRC/tools/package" "${from[@]}" "$WORK/debs" >"$WORK/package.out" 2>&1 ||
  fail "tools/package ${from[*]}: $(tail -30 "$WORK/package.out")"
build_s=$(($(date +%s) - t))
tree_state | diff "$WORK/tree-before" - >"$WORK/tree.diff" || fail "tools/package changed the source tree: $(cat "$WORK/tree.diff")"
base=$(meson introspect --projectinfo "$SRC/meson.build" | $PY -c 'import json, sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)
# Each commit's own version: meson's, +git<commits>.<hash> (+dirty with changes not
# committed), so that apt replaces a build of another commit.
version=$(dpkg-deb -f "$(ls "$WORK/debs"/libjitprov1_*_"$arch".deb | head -1)" Version 2>/dev/null)
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  want=$base+git$(git -C "$SRC" rev-list --count HEAD).$(git -C "$SRC" rev-parse --short=10 HEAD)
  [ -z "$(git -C "$SRC" status --porcelain)" ] || want=$want+dirty
else
  want=$base
fi
[ "$version" = "$want" ] || fail "the packages' version is '$version', not '$want'"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in "${PACKAGES[@]}"; do
  [ -f "$WORK/debs/${p}_${version}_$arch.deb" ] || fail "no ${p}_${version}_$arch.deb: $(ls "$WORK/debs")"
done
[ "$(ls "$WORK/debs"/*.deb | wc -l)" -eq ${#PACKAGES[@]} ] || fail "not ${#PACKAGES[@]} packages: $(ls "$WORK/debs")"
# tools/package fails on an error or a warning; the information tags are shown (from a
# build directory, hardening-no-bindnow and -fortify-functions: meson's flags, not
# dpkg-buildflags').
! grep -E '^[EW]: ' "$WORK/debs/lintian.log" || fail "lintian: errors or warnings above"
infos=$(grep -c '^I: ' "$WORK/debs/lintian.log")
infos_kind=$(sed -n 's/^I: [^ ]* \([^ ]*\) .*/\1/p' "$WORK/debs/lintian.log" | sort -u | paste -sd' ')
field() { dpkg-deb -f "$WORK/debs/${1}_${version}_$arch.deb" "$2"; }
deb_files() { dpkg-deb -c "$WORK/debs/${1}_${version}_$arch.deb" | awk '{print $6}'; }
deb_files libjitprov1 | grep -x "./usr/lib/$multiarch/libjitprov.so.1" >/dev/null &&
  deb_files libjitprov1 | grep -x "./usr/lib/$multiarch/jitprov/libjitprov-lttng.so" >/dev/null ||
  fail "libjitprov1 files: $(deb_files libjitprov1)"
deb_files jitprov | grep -x "./usr/lib/$multiarch/jitprov/libjitprov-preload.so" >/dev/null ||
  fail "jitprov has no libjitprov-preload.so: $(deb_files jitprov)"
dpkg-deb --ctrl-tarfile "$WORK/debs/libjitprov1_${version}_$arch.deb" | tar -xOf - ./symbols >"$WORK/symbols" ||
  fail "libjitprov1 has no symbols file"
grep -q "^libjitprov.so.1 libjitprov1 " "$WORK/symbols" && grep -q "^ jitprov_runtime_create@JITPROV_0 " "$WORK/symbols" ||
  fail "libjitprov1's symbols: $(head -3 "$WORK/symbols")"
[[ "$(field libjitprov-dev Depends)" == *"libjitprov1 (= $version)"* ]] || fail "libjitprov-dev Depends: $(field libjitprov-dev Depends)"
[[ "$(field jitprov Depends)" == *"lttng-tools"* && "$(field jitprov Depends)" == *"libjitprov1 (>= "* ]] ||
  fail "jitprov Depends: $(field jitprov Depends)"
for p in "${PACKAGES[@]:3}"; do  # the agents
  [[ "$(field $p Depends)" == *"libjitprov1 (>= "* ]] || fail "$p Depends: $(field $p Depends)"
done
if [ $NODE -eq 1 ]; then
  major=$(node -p 'process.versions.node.split(".")[0]')
  [[ "$(field jitprov-node Depends)" == *"nodejs (>= $major), nodejs (<< $((major + 1)))"* ]] ||
    fail "jitprov-node Depends (node $major here): $(field jitprov-node Depends)"
fi
pass "tools/package ${from[*]:-(compiled in a copy of the tree)} in $build_s s, the source tree untouched: ${#PACKAGES[@]} packages at version $version, lintian without an error or a warning ($infos information tags${infos_kind:+: $infos_kind}), SONAME libjitprov.so.1 with its symbols file, dependencies:
$(for p in "${PACKAGES[@]}"; do printf '    %-15s %s\n' "$p" "$(field "$p" Depends)"; done)"

# --- installed ---------------------------------------------------------------------------------
t=$(date +%s)
apt-get install -s "$WORK/debs"/*.deb 2>/dev/null | sed -n 's/^Inst \([^ ]*\) .*/\1/p' | sort -u >"$WORK/would"
grep -qx libjitprov1 "$WORK/would" || fail "apt-get install -s does not name libjitprov1: $(head -5 "$WORK/would")"
# The mark, before the install: what a kill from here on leaves, for the next run.
mkdir -p "$MARK_DIR" && {
  echo "version $version"
  cut -d: -f1 "$WORK/before" | sort -u | comm -13 - "$WORK/would" | sed -n 's/^/brought /p'
} >"$MARK" || fail "write $MARK"
apt-get install "${APT_WAIT[@]}" -y -q "$WORK/debs"/*.deb >"$WORK/install.log" 2>&1 || fail "apt-get install: $(tail -20 "$WORK/install.log")"
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$p" | grep -x "ii  $version" >/dev/null || fail "$p is not installed: $(dpkg -l "$p")"
  dpkg -L "$p" >"$WORK/files-$p" || fail "dpkg -L $p"
done
pass "apt-get install ./*.deb in $(($(date +%s) - t)) s: $(sed -n 's/^\([0-9]* upgraded, [0-9]* newly installed\).*/\1/p' "$WORK/install.log")"

# From here on, only what the packages installed: a PATH without the source or build
# tree, the current directory elsewhere, none of jitprov's variables.
cd "$WORK" || fail "cd $WORK"
unset JITPROV_VERIFY JITPROV_PROVIDER LD_LIBRARY_PATH JAVA_TOOL_OPTIONS
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
[ "$(command -v jitprov)" = /usr/bin/jitprov ] && [ "$(command -v jitprov-verify)" = /usr/bin/jitprov-verify ] ||
  fail "jitprov from $(command -v jitprov), jitprov-verify from $(command -v jitprov-verify)"
AGENT_DIR=/usr/lib/$multiarch/jitprov
for page in jitprov jitprov-verify jitprov-lockwait jitprov-sim; do
  [ "$(man -w "$page")" = "/usr/share/man/man1/$page.1.gz" ] || fail "man -w $page: $(man -w "$page" 2>&1)"
done
MANWIDTH=250 MANROFFOPT=-rHY=0 man jitprov 2>/dev/null | grep "$AGENT_DIR/libjitprov-jvmti.so" >/dev/null || fail "man jitprov does not name $AGENT_DIR/libjitprov-jvmti.so"
printf '#include <jitprov/jitprov.h>\n#include <stdio.h>\nint main(void) { puts(jitprov_strerror(0)); return 0; }\n' >"$WORK/capi.c"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$WORK/capi.c" $(pkg-config --cflags --libs jitprov) -o "$WORK/capi" 2>"$WORK/cc.err" &&
  "$WORK/capi" >/dev/null || fail "a program built with pkg-config jitprov: $(cat "$WORK/cc.err")"
jitprov ps >"$WORK/ps.out" 2>&1 || fail "jitprov ps: $(cat "$WORK/ps.out")"
# The documentation by the names the man pages give (not compressed to spec.md.gz).
for d in spec tracing attach jvm-agent dotnet node; do
  [ -f "/usr/share/doc/jitprov/$d.md" ] || fail "/usr/share/doc/jitprov/$d.md: not there ($(ls /usr/share/doc/jitprov | paste -sd' '))"
done
MANWIDTH=250 MANROFFOPT=-rHY=0 man jitprov 2>/dev/null | grep "node.md" >/dev/null || fail "man jitprov does not name node.md"
pass "installed: jitprov and jitprov-verify in /usr/bin, the four man pages (man jitprov names $AGENT_DIR), the documentation they name, a C program built with pkg-config jitprov, jitprov ps"

# check_record DIR RUNTIME AGENT: the summary says verified, nothing lost, the installed
# agent, code bodies; the installed jitprov-verify agrees on the trace.
check_record() {
  $PY - "$1/summary.json" "$2" "$3" <<'PY' || fail "$1: $(cat "$1/stdout")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["exit_status"] == 0 and s["command_status"] == 0, (s["exit_status"], s["command_status"])
assert s["verdict"].startswith("verified") and s["verify_exit"] in (0, 4), (s["verdict"], s["verify_exit"])
assert s["events_lost"] == 0 and s["packets_lost"] == 0, s
assert s["agent"] == sys.argv[3], s["agent"]
assert s["code_bodies"][sys.argv[2]]["total"] > 0, s["code_bodies"]
assert s["rundowns"] >= 2, s["rundowns"]
PY
  jitprov-verify "$1/trace" >"$WORK/verify.out" 2>&1 || fail "jitprov-verify $1/trace: $(cat "$WORK/verify.out")"
}

# --- jitprov record -- java -------------------------------------------------------------------
mkdir -p "$WORK/java"
cat >"$WORK/java/Hello.java" <<'EOF'
import java.util.*;
public class Hello {  // enough calls that HotSpot compiles at every tier
  static int work(int n) { return Integer.toString(n * 31).hashCode() & 7; }
  public static void main(String[] args) {
    Map<Integer, Integer> m = new HashMap<>();
    long sum = 0;
    for (int i = 0; i < 3_000_000; i++) { m.merge(work(i), 1, Integer::sum); sum += m.size(); }
    System.out.println("Hello: " + sum);
    System.out.println("LD_PRELOAD=" + System.getenv("LD_PRELOAD"));
  }
}
EOF
javac -d "$WORK/java" "$WORK/java/Hello.java" || fail "javac Hello.java"
t=$(date +%s%N)
JITPROV_TRACE_DEBUG=1 jitprov record -o "$WORK/rec-java" -- java -cp "$WORK/java" Hello >"$WORK/java.out" 2>"$WORK/java.err"
rc=$?
ms=$((($(date +%s%N) - t) / 1000000))
[ $rc -eq 0 ] || fail "jitprov record -- java: exit $rc: $(cat "$WORK/java.out" "$WORK/java.err")"
cp "$WORK/java.out" "$WORK/rec-java/stdout"
grep -q "^Picked up JAVA_TOOL_OPTIONS: -agentpath:$AGENT_DIR/libjitprov-jvmti.so=" "$WORK/java.err" ||
  fail "java's agent: $(head -3 "$WORK/java.err")"
grep -qE "^LD_PRELOAD=(.*:)?$AGENT_DIR/libjitprov-preload.so$" "$WORK/java.out" ||
  fail "java's LD_PRELOAD, not the installed libjitprov-preload.so: $(grep LD_PRELOAD "$WORK/java.out")"
# (the loader may name the library by /lib, the merged /usr's link: the same file)
provider=$(sed -n 's/^jitprov: tracing provider loaded //p' "$WORK/java.err" | head -1)
[ -n "$provider" ] && [ "$(realpath "$provider")" = "$AGENT_DIR/libjitprov-lttng.so" ] ||
  fail "the provider was not the installed one: $(grep -i provider "$WORK/java.err")"
check_record "$WORK/rec-java" HotSpot "$AGENT_DIR/libjitprov-jvmti.so"
pass "jitprov record -- java Hello (installed agent, provider and preload library) in $ms ms:
$(sed -n '/^jitprov record:/,$p' "$WORK/java.out" | sed 's/^/    /')"

# --- jitprov record -- dotnet -------------------------------------------------------------------
build_dotnet_workload "$SRC" 20 100
t=$(date +%s%N)
jitprov record -o "$WORK/rec-dotnet" -- dotnet "$WORK/wl/out/JitWork.dll" --seconds 1 >"$WORK/dotnet.out" 2>"$WORK/dotnet.err"
rc=$?
ms=$((($(date +%s%N) - t) / 1000000))
[ $rc -eq 0 ] || fail "jitprov record -- dotnet: exit $rc: $(cat "$WORK/dotnet.out" "$WORK/dotnet.err")"
cp "$WORK/dotnet.out" "$WORK/rec-dotnet/stdout"
check_record "$WORK/rec-dotnet" CoreCLR "$AGENT_DIR/libjitprov-dotnet.so"
jitted=$(sed -n 's/^JitWork: jitted \([0-9]*\) bodies$/\1/p' "$WORK/dotnet.out")
[ -n "$jitted" ] && [ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["code_bodies"]["CoreCLR"]["total"])' \
  "$WORK/rec-dotnet/summary.json")" -eq "$jitted" ] || fail "dotnet: the app jitted ${jitted:-?} bodies: $(cat "$WORK/dotnet.out")"
pass "jitprov record -- dotnet JitWork.dll (installed client) in $ms ms, $jitted bodies as the app counted:
$(sed -n '/^jitprov record:/,$p' "$WORK/dotnet.out" | sed 's/^/    /')"

# --- jitprov record -- node ------------------------------------------------------------------------
if [ $NODE -eq 1 ]; then
  cat >"$WORK/app.js" <<'JS'
const { Worker, isMainThread } = require('worker_threads');
function hot(a) { let s = 0; for (let i = 0; i < a; i++) s += i * a; return s; }
let r = 0; for (let i = 0; i < 300000; i++) r += hot(i % 100);
if (isMainThread) new Worker(__filename).on('exit', () => console.log('done', r));
JS
  t=$(date +%s%N)
  jitprov record -o "$WORK/rec-node" -- node "$WORK/app.js" >"$WORK/node.out" 2>"$WORK/node.err"
  rc=$?
  ms=$((($(date +%s%N) - t) / 1000000))
  [ $rc -eq 0 ] || fail "jitprov record -- node: exit $rc: $(cat "$WORK/node.out" "$WORK/node.err")"
  cp "$WORK/node.out" "$WORK/rec-node/stdout"
  check_record "$WORK/rec-node" V8 "$AGENT_DIR/node/preload.js"
  grep -q '^done [0-9]' "$WORK/node.out" || fail "node app.js: $(cat "$WORK/node.out")"
  pass "jitprov record -- node app.js (installed client) in $ms ms:
$(sed -n '/^jitprov record:/,$p' "$WORK/node.out" | sed 's/^/    /')"
fi

# --- purged: nothing left ------------------------------------------------------------------------
t=$(date +%s)
purge_installed
[ -z "$(installed_ours)" ] || fail "still installed after apt-get purge: $(installed_ours) $(tail -5 "$WORK/purge.log")"
rm -f "$MARK"
left=()
for p in "${PACKAGES[@]}"; do
  while IFS= read -r f; do
    [ "$f" = /. ] && continue
    [ -e "$f" ] || [ -L "$f" ] || continue
    # A directory another package owns stays; anything else is left behind.
    [ -d "$f" ] && [ ! -L "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue
    left+=("$f")
  done <"$WORK/files-$p"
done
[ ${#left[@]} -eq 0 ] || fail "left behind after the purge: ${left[*]}"
nfiles=$(cat "$WORK"/files-* | sort -u | wc -l)
left_pkgs=$(brought)
[ -z "$left_pkgs" ] || fail "still installed after the purge, brought by the test: $left_pkgs"
pass "apt-get purge in $(($(date +%s) - t)) s: the $nfiles paths dpkg -L listed gone (shared directories aside), nothing it brought left installed"
pass "packages: all checks in $(($(date +%s) - T0)) s"
