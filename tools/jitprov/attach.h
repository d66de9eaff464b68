/* SPDX-License-Identifier: MIT */
// `jitprov attach PID`: what the command and its two protocols share. The target is found
// and checked once (target.cc); each runtime's protocol (hotspot_attach.cc: HotSpot's
// dynamic attach; clr_attach.cc: CoreCLR's diagnostics IPC) gets an AttachRequest and
// answers with an AttachOutcome: an exit status of its own for each way it can fail
// (docs/spec.md, "jitprov attach") and one line for the user.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace jitprov::cli {

// Exit statuses of `jitprov attach` (and of `jitprov record -p`), one per way it fails.
enum AttachStatus : int {
  kAttached = 0,
  kError = 1,           // anything not below (an I/O error, an unexpected reply)
  kUsage = 2,           // bad options
  kNoSuchProcess = 3,   // no process PID (or it exited during the attach)
  kNotARuntime = 4,     // no runtime jitprov knows in PID
  kPermission = 5,      // not the target's uid and no CAP_SYS_PTRACE, the target refused our credentials, or a
                        // network namespace we may not enter (node: CAP_SYS_ADMIN over it)
  kRuntimeTooOld = 6,   // a runtime version without the attach jitprov needs
  kAttachDisabled = 7,  // -XX:+DisableAttachMechanism, -Xrs, DOTNET_EnableDiagnostics=0, ...
  kOtherProfiler = 8,   // CoreCLR: another profiler is loaded
  kAlreadyLoaded = 9,   // jitprov is loaded in PID already (nothing registered twice)
  kTimedOut = 10,       // the target did not answer within --timeout
  kAgentFailed = 11,    // the agent was loaded but refused to start (its reason in the line)
  kNoAgent = 12,        // the agent library for this runtime is not installed / not found
  kInUse = 13,          // node: its inspector is open already (--inspect, a debugger) or its port is taken
};

enum class Runtime { kNone, kHotSpot, kCoreClr, kNode };

// A process as /proc shows it, read once by findTarget() (target.h).
struct Target {
  pid_t pid = 0;    // in our pid namespace
  pid_t nspid = 0;  // in its own (the last field of NSpid in /proc/PID/status)
  uid_t euid = 0;   // its effective uid and gid (Uid:/Gid: second fields)
  gid_t egid = 0;
  std::string root;  // "/proc/PID/root": its view of the file system
  Runtime runtime = Runtime::kNone;
  std::string runtime_lib;      // the mapped libjvm.so / libcoreclr.so, as the target names it
  bool jitprov_loaded = false;  // libjitprov.so.1 already mapped in it (node: the client addon)
  // Its start time in clock ticks after boot (processStartTicks, target.h), read after its
  // pidfd was taken: a process that took the pid of one seen before has a later one;
  // CoreCLR's diagnostics socket is named with it. 0 unknown.
  unsigned long long start_ticks = 0;
};

struct AttachRequest {
  Target target;
  std::string agent;    // absolute path of the agent library, as the target will open it
  std::string options;  // the agent's options ("" for its defaults)
  std::chrono::milliseconds timeout{10000};
  // The process may be waited for (younger than kStartingGrace when the try began):
  // HotSpot then answers a JVM not initialized yet with NotYet::kYoung, nothing sent;
  // else it attaches whatever the JVM's hsperfdata says.
  bool starting = false;
};

struct AttachOutcome {
  int status = kError;  // an AttachStatus
  std::string line;     // one line for the user: what happened (error or success)
  std::string version;  // the runtime's version when known ("17.0.21", "10.0.12")
  // The target may just be starting, and nothing was loaded: attachProcess asks again.
  //   kYoung: nothing sent; CoreCLR not loaded yet by the .NET host, its diagnostics
  //     socket not there yet, node's SIGUSR1 handler not installed yet, or a JVM not
  //     in JVMTI's live phase yet (attached before it, a JVM refused the agent: no JVMTI
  //     1.2 environment). Asked again while the process is young (kStartingGrace).
  //   kStarting: CoreCLR answered AttachProfiler DS_IPC_E_NOT_YET_AVAILABLE (asked again
  //     until the deadline: a runtime paused at its start waits for a monitor).
  enum class NotYet : unsigned char { kNo, kYoung, kStarting };
  NotYet not_yet = NotYet::kNo;
};

// How long a process is given from its start to load its runtime and bring up its attach
// mechanism: an outcome of kYoung is asked again until the process is this old.
inline constexpr std::chrono::milliseconds kStartingGrace{5000};

}  // namespace jitprov::cli
