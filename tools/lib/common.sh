# SPDX-License-Identifier: MIT
# Shared by tools/check and tools/demo: the package list (the one place it is kept),
# installing what is missing, and configuring the build directories.
# shellcheck shell=bash

# Debian bookworm packages jitprov needs to build, test and demo.
JITPROV_PACKAGES=(
  g++ clang llvm meson ninja-build pkg-config      # toolchain; clang builds the BPF programs
  clang-format                                     # the format test (.clang-format)
  libclang-rt-14-dev                               # libFuzzer and sanitizer runtimes (tests/fuzz)
  liburcu-dev                                      # RCU grace periods for the lock-free registry
  libabsl-dev                                      # Abseil's B-tree: the host-mode range index (headers)
  systemtap-sdt-dev                                # sys/sdt.h: USDT probes with semaphores
  libgtest-dev libgmock-dev libbenchmark-dev       # tests and benchmarks
  liblttng-ust-dev lttng-tools                     # tracepoint provider; lttng-sessiond, lttng
  babeltrace2 libbabeltrace2-dev python3 python3-bt2  # reading CTF traces; JSON and bt2 in tests
  bpftrace libbpf-dev bpftool libelf-dev zlib1g-dev  # eBPF measurement
  libcli11-dev nlohmann-json3-dev                  # command-line tools
  libxxhash-dev                                    # XXH3-128: jitprov-verify's per-version digest (G2)
  gnuplot-nox                                      # plots
  openjdk-17-jdk-headless                          # the JVM agent: jvmti.h, java, javac, jcmd
  openjdk-17-source libh2-java                     # Java programs nobody here wrote: java.util's sources for javac, H2 (jvm-apps)
  unzip                                            # java.util's sources out of the JDK's src.zip (jvm-apps)
  linux-perf                                       # perf record -k 1, perf inject --jit: the jitdump tests
  bc                                               # arithmetic in the benchmark scripts
  strace                                           # jitprov-record: what a recorded process does before its first thread
  util-linux procps                                # unshare, setarch; pgrep, ps
  iproute2                                         # ip netns, veth, ss: the live-relay test's two "machines"
  spin                                             # the model checker of the model suite (tests/model)
  scdoc man-db                                     # the man pages (docs/man) and their test (man --warnings, lexgrog)
  dpkg-dev debhelper lintian                       # tools/package: the Debian packages (debian/), and the package test
  ccache                                           # the compiler cache: a build after another compiles what changed
)

# ccache, which meson puts before the compiler when it is installed (and tools/check
# before clang for the fuzz build): a check after another, from any clone (the CI's
# included), compiles only what changed. Paths under the clone hashed relative to it
# (CCACHE_BASEDIR), the build directory not hashed (CCACHE_NOHASHDIR: the debug info of
# a hit may name the clone that compiled it first; nothing here reads that name). Its
# depend mode: a miss costs no extra run of the preprocessor (meson's -MD lists the
# headers), so that a build from a cold cache takes what it took without ccache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1} CCACHE_DEPEND=${CCACHE_DEPEND:-1}

# The main build directory (build) is configured for /usr, the packages' prefix, so that
# tools/check's package test packages it as built (tools/package --build-dir build)
# instead of compiling everything again; nothing else depends on its prefix (`meson
# install` of it would write into /usr: the install test uses --destdir).
MAIN_BUILD_OPTIONS="-Dprefix=/usr"

log() { printf '%s\n' "$*" >&2; }
die() { printf '%s: %s\n' "${0##*/}" "$*" >&2; exit 1; }

missing_packages() {
  local p out=()
  for p in "${JITPROV_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null || out+=("$p")
  done
  [ "${#out[@]}" -eq 0 ] || printf '%s\n' "${out[@]}"
}

ensure_packages() {
  local missing
  mapfile -t missing < <(missing_packages)
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    die "missing Debian packages (run as root to install them): ${missing[*]}"
  fi
  log "installing ${#missing[@]} missing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install failed for: ${missing[*]}"
}

# configure_build DIR [meson options...]: set up DIR once, reconfigure when it exists.
configure_build() {
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then
    meson configure "$dir" "$@" >/dev/null || die "meson configure $dir failed"
  else
    rm -rf "$dir"
    local setup_log
    setup_log=$(mktemp)  # not beside the build directory: the tree stays clean
    meson setup "$dir" "$@" >"$setup_log" 2>&1 || { cat "$setup_log" >&2; rm -f "$setup_log"; die "meson setup $dir failed"; }
    rm -f "$setup_log"
  fi
}
