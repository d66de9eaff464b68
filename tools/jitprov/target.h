/* SPDX-License-Identifier: MIT */
// The target of `jitprov attach PID`, read once from /proc (findTarget), and the checks
// made before any protocol runs: may we attach (our euid is the target's, or we hold
// CAP_SYS_PTRACE), which agent library it gets and whether the target can open it.
#pragma once

#include "attach.h"
#include "proc_path.h"

#include <sys/types.h>

#include <memory>
#include <string>

namespace jitprov::cli {

// What findTarget() also reads for the protocols: the signal masks and the state.
struct TargetInfo {
  Target target;
  std::string comm;                  // /proc/PID/comm
  unsigned long long sig_cgt = 0;    // SigCgt: caught signals
  unsigned long long sig_ign = 0;    // SigIgn: ignored signals
  char state = '?';                  // State: R, S, T (stopped), t (traced), Z ...
  pid_t tgid = 0;                    // Tgid: its process (not PID when PID is a thread)
  bool node_client_loaded = false;   // node: jitprov_node.node (the client addon) mapped
  bool node_client_started = false;  // node: and started (its threads run; a refused one stays mapped)
  // pidfd_open(pid), taken before /proc is read (null where the kernel has none): a
  // signal sent through it (signalTarget) reaches this process, never a later one that
  // reuses its pid. Shared by the copies, closed with the last.
  std::shared_ptr<const int> pidfd;
};

// Reads /proc/PID/status, comm and maps. kAttached with *out filled, or the status and
// one line: kNoSuchProcess, kPermission (not its euid and no CAP_SYS_PTRACE, or /proc
// refuses), kNotARuntime. `born` (non-zero): the start time of the process seen at PID
// before; another one there now (it exited, and its pid was taken) is kNoSuchProcess.
AttachOutcome findTarget(pid_t pid, TargetInfo* out, unsigned long long born = 0);

// The lines of /proc/PID/status into *t: NSpid's last field (nspid), Uid's and Gid's
// second (euid, egid), SigCgt, SigIgn, State. False when there is no Uid: line (the
// process is gone). Pure: unit-testable.
bool parseProcStatus(const std::string& status, TargetInfo* t);

// A path of /proc/PID/maps or /proc/PID/exe without the kernel's " (deleted)".
using tools::stripDeleted;

// Re-reads the status line State: of PID ('\0': the process is gone).
char processState(pid_t pid);

// Sends `sig` to the target through its pidfd (kill() when it has none); 0 with sig 0
// checks that it still exists. 0 or errno (ESRCH: gone).
int signalTarget(const TargetInfo& t, int sig);

// Whether the target still runs: signalTarget(t, 0) finds it (EPERM counts) and it is no
// zombie.
bool targetAlive(const TargetInfo& t);

// Whether our effective capabilities include CAP_SYS_PTRACE (CapEff bit 19).
bool havePtraceCapability();

// The agent library for `runtime`: `requested` when given, else the one beside this
// binary in a build tree (<build>/tools/jitprov/jitprov -> <build>/tools/jvmti/...),
// else the one installed in JITPROV_AGENT_DIR. Checks that it exists (kNoAgent) and
// that the target sees the same file at that path in its own mount namespace (same
// st_dev and st_ino through /proc/PID/root; kNoAgent when not). *path: absolute.
AttachOutcome findAgent(const TargetInfo& t, const std::string& requested, std::string* path);

// libjitprov-preload.so (tools/preload/preload.c), which `jitprov record` preloads into
// CMD: in the build tree beside this command, else installed; "" when it is in neither,
// or its path cannot be a word of LD_PRELOAD (a blank, a colon or a `$` in it): CMD then
// runs without it, as it would have before it existed.
std::string preloadLibraryPath();
// The agent library for `runtime` when none is named: the one beside this binary in a
// build tree, else the one installed in JITPROV_AGENT_DIR (not checked to exist).
std::string defaultAgentPath(Runtime runtime);
// The Debian package that installs that agent (tools/package): "jitprov-jvm", ...
const char* agentPackage(Runtime runtime);

// <build>/SUBDIR/NAME when this binary is <build>/tools/jitprov/jitprov in a build tree
// (SUBDIR relative to <build>/tools) and that file exists; "" otherwise.
std::string besideInBuildTree(const std::string& subdir, const std::string& name);

// Node's version from its executable (the release URL it embeds: "20.20.2"); "" unknown.
// Scans the file once per device and inode.
std::string nodeVersion(const TargetInfo& t);

// `pid` in the words of the lines: "PID 1234 (java)".
std::string describe(const TargetInfo& t);

// PID's start time in clock ticks after boot (field 22 of /proc/PID/stat); 0 unknown.
unsigned long long processStartTicks(pid_t pid);

// Milliseconds since a process started at `start_ticks` (processStartTicks, against
// /proc/uptime); -1 when unknown (start_ticks 0).
long long processAgeMs(unsigned long long start_ticks);

}  // namespace jitprov::cli
