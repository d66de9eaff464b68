# SPDX-License-Identifier: MIT
# The lttng set-up shared by the integration tests (tests/integration/lib.sh), the demos
# and the benchmarks (tools/bench/): a private mount namespace with its own
# lttng-sessiond, started and stopped by its pid, and the documented lossless session
# (docs/tracing.md): the rundown events in a channel that may block, the runtime events
# in one that never does. The lossless channel flags are defined here for the shell and
# once more for `jitprov record` (tools/jitprov/record.cc, kRundownChannel): change both.
# Every function prints what failed to stderr and returns non-zero; the caller decides
# (a test fails or skips, a tool dies).
# shellcheck shell=bash

# The rundown channel: large sub-buffers, and a writer that waits for room instead of
# discarding (lttng-ust blocks only with LTTNG_UST_ALLOW_BLOCKING=1, which the runtime
# sets for its rundown thread).
JITPROV_LOSSLESS_CHANNEL=(--subbuf-size=8M --num-subbuf=8 --blocking-timeout=inf)
# The runtime events' channel: never blocks a JIT path.
JITPROV_RUNTIME_CHANNEL=(--subbuf-size=1M --num-subbuf=4)
# `jitprov record`'s channels (tools/jitprov/record.cc, kRundownChannel and
# kRuntimeChannel: change both), for the benchmarks that measure what its users pay:
# smaller than the tests' lossless channel, as every traced process maps every CPU's
# buffers (docs/tracing.md, "Sizing the channels").
JITPROV_RECORD_RUNDOWN_CHANNEL=(--subbuf-size=2M --num-subbuf=8 --blocking-timeout=inf)
JITPROV_RECORD_RUNTIME_CHANNEL=(--subbuf-size=1M --num-subbuf=8)

lttng_err() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

# A scratch directory for traces: work_dir NAME [GIB] prints a new NAME.XXXXXX in /dev/shm
# when it is a tmpfs with GIB (default 4) GiB free, not mounted noexec (tests run programs
# from their directory), else in /tmp. Traces and files stay off the disk: lttng's
# consumer daemon syncs each sub-buffer it writes there (sync_file_range) and perf inject
# --jit writes tens of thousands of small files, both then waiting on any other writer (a
# build beside the tests: the jitdump test took 90 s here on the disk, 56 s on tmpfs, and
# 264 s in CI; at 10 M methods tools/bench/rundown-emit's rundown passes stalled on it;
# docs/tracing.md for lttng's).
work_dir() {
  local base=/dev/shm free
  free=$(df -P -k "$base" 2>/dev/null | awk 'NR == 2 {print $4}')
  if [ "$(stat -f -c %T "$base" 2>/dev/null)" != tmpfs ] || [ "${free:-0}" -lt $((${2:-4} * 1048576)) ] ||
     awk -v b="$base" '$2 == b && $4 ~ /(^|,)noexec(,|$)/ {f = 1} END {exit !f}' /proc/mounts; then
    base=/tmp
  fi
  mktemp -d "$base/$1.XXXXXX"
}

# lttng_enter_namespace ARGS...: runs the calling script again ("$0" ARGS) inside a
# private mount namespace, once (JITPROV_IN_NS marks the second run, and its children),
# then mounts a tmpfs over /var/run/lttng there, so that its lttng-sessiond never meets
# a system's or another run's, and tracefs (bpftrace detaches its uprobes through it).
lttng_enter_namespace() {
  if [ -z "${JITPROV_IN_NS:-}" ]; then
    command -v unshare >/dev/null || { lttng_err "unshare not installed (util-linux)"; return 1; }
    JITPROV_IN_NS=1 exec unshare -m --propagation private -- "$0" "$@"
  fi
  mkdir -p /var/run/lttng && mount -t tmpfs none /var/run/lttng ||
    { lttng_err "mount a tmpfs on /var/run/lttng"; return 1; }
  mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
  return 0
}

# lttng_sessiond_start [COMMAND PREFIX...]: starts lttng-sessiond (after the prefix,
# e.g. `ip netns exec NS`), sets LTTNG_SESSIOND_PID and waits until it answers (30 s: it
# starts its consumer daemons first, which a loaded machine makes slow), or has exited.
lttng_sessiond_start() {
  "$@" lttng-sessiond --quiet &
  LTTNG_SESSIOND_PID=$!
  for _ in $(seq 300); do
    lttng list >/dev/null 2>&1 && return 0
    kill -0 "$LTTNG_SESSIOND_PID" 2>/dev/null || break
    sleep 0.1
  done
  lttng_err "lttng-sessiond did not come up"
  return 1
}

# lttng_sessiond_stop: stops the lttng-sessiond lttng_sessiond_start started (by its
# pid: SIGTERM, then SIGKILL after 5 s) and waits for it.
lttng_sessiond_stop() {
  local p=${LTTNG_SESSIOND_PID:-}
  [ -n "$p" ] || return 0
  kill "$p" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  LTTNG_SESSIOND_PID=
  return 0
}

# lttng_channel SESSION CHANNEL EVENTS [CHANNEL OPTIONS...]: a user-space channel of
# SESSION recording EVENTS (lttng event names, comma-separated); the options default to
# the lossless ones.
lttng_channel() {
  local s=$1 c=$2 ev=$3
  shift 3
  local opts=("$@")
  [ ${#opts[@]} -gt 0 ] || opts=("${JITPROV_LOSSLESS_CHANNEL[@]}")
  lttng enable-channel -u -s "$s" "$c" "${opts[@]}" >/dev/null || { lttng_err "lttng enable-channel $c"; return 1; }
  lttng enable-event -u -s "$s" -c "$c" "$ev" >/dev/null || { lttng_err "lttng enable-event $ev"; return 1; }
}

# lttng_lossless_session NAME OUTPUT_DIR [OPTIONS...]: creates session NAME (not started)
# writing to OUTPUT_DIR, with the rundown events jitprov_rundown:* in the lossless
# channel jitprov_rundown. OPTIONS:
#   --runtime          the runtime events too, in the channel jitprov_runtime
#   --runtime-opts 'O' the same, with channel options O instead of JITPROV_RUNTIME_CHANNEL
#   --rundown-opts 'O' the rundown channel with options O instead of the lossless ones
#   --events LIST      more events (comma-separated) in the rundown channel
#   --vpid             the vpid context (jitprov-verify keys events by process)
#   --pidns            the pid_ns context too (processes of several pid namespaces)
#   --create 'O'       lttng create options O instead of --output (e.g. a live session)
lttng_lossless_session() {
  local name=$1 runtime=0 vpid=0 events='jitprov_rundown:*' create="--output=$2"
  local rundown_opts=("${JITPROV_LOSSLESS_CHANNEL[@]}") runtime_opts=("${JITPROV_RUNTIME_CHANNEL[@]}")
  shift 2
  while [ $# -gt 0 ]; do
    case $1 in
      --runtime) runtime=1; shift ;;
      --runtime-opts) runtime=1; read -ra runtime_opts <<<"$2"; shift 2 ;;
      --rundown-opts) read -ra rundown_opts <<<"$2"; shift 2 ;;
      --events) events="$events,$2"; shift 2 ;;
      --vpid) vpid=1; shift ;;
      --pidns) vpid=2; shift ;;
      --create) create=$2; shift 2 ;;
      *) lttng_err "lttng_lossless_session: unknown option '$1'"; return 2 ;;
    esac
  done
  # shellcheck disable=SC2086
  lttng create "$name" $create >/dev/null || { lttng_err "lttng create $name"; return 1; }
  lttng_channel "$name" jitprov_rundown "$events" "${rundown_opts[@]}" || return 1
  if [ $runtime = 1 ]; then
    lttng_channel "$name" jitprov_runtime 'jitprov_runtime:*' "${runtime_opts[@]}" || return 1
  fi
  if [ $vpid != 0 ]; then
    lttng add-context -u -s "$name" -t vpid >/dev/null || { lttng_err "lttng add-context vpid"; return 1; }
  fi
  if [ $vpid = 2 ]; then
    lttng add-context -u -s "$name" -t pid_ns >/dev/null || { lttng_err "lttng add-context pid_ns"; return 1; }
  fi
  return 0
}
