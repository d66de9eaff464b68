# Helpers for the integration tests (bash). Source it first.
# shellcheck shell=bash
set -uo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
# A missing prerequisite skips (77) on a developer's machine and fails under CI=true.
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL (CI=true, would skip): $*" >&2; exit 1; fi
  echo "SKIP: $*" >&2; exit 77
}
require_cmd() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "$c not installed"; done; }
require_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (BPF, uprobes, a private mount namespace)"; }

# Runs the rest of the script inside a private mount namespace with a tmpfs over
# /var/run/lttng (so a test never meets a system or another test's session daemon)
# and tracefs mounted (bpftrace detaches its uprobes through it).
enter_private_namespace() {
  if [ -z "${JITPROV_IN_NS:-}" ]; then
    command -v unshare >/dev/null || skip "unshare not installed"
    JITPROV_IN_NS=1 exec unshare -m --propagation private -- "$0" "$@"
  fi
  mkdir -p /var/run/lttng
  mount -t tmpfs none /var/run/lttng || fail "mount tmpfs on /var/run/lttng"
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
}

# Kills, by pid, only processes this test started.
STARTED_PIDS=()
track_pid() { STARTED_PIDS+=("$1"); }
cleanup_pids() {
  local p
  for p in "${STARTED_PIDS[@]+"${STARTED_PIDS[@]}"}"; do kill "$p" 2>/dev/null; done
  for p in "${STARTED_PIDS[@]+"${STARTED_PIDS[@]}"}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  return 0
}
trap cleanup_pids EXIT
