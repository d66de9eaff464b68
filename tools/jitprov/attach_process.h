/* SPDX-License-Identifier: MIT */
// jitprov's agent loaded into a running process, whatever its runtime: the target found
// and checked (target.h), the agent found, then HotSpot's dynamic attach or CoreCLR's
// diagnostics IPC. What `jitprov attach PID` and `jitprov record -p PID` both run.
#pragma once

#include "attach.h"
#include "target.h"

#include <chrono>
#include <functional>
#include <string>

namespace jitprov::cli {

// Attaches the agent (`agent`: "" for the default one) with `options` to `pid`; *t: the
// target as read, *r: the request made (its agent's absolute path). kAttached, or the
// status and line of the step that failed. A process that is starting (a JVM before
// JVMTI's live phase, a .NET host that has not loaded CoreCLR, no diagnostics socket yet,
// CoreCLR's "not yet available", node's SIGUSR1 handler not installed yet) is asked
// again every 50 ms, within `timeout`, until `cancelled` (when given) says stop; still
// starting when the timeout runs out: kTimedOut. `born`: the process's start time as
// seen before (Target::start_ticks; 0: read now); a process that took its pid
// meanwhile is not attached (kNoSuchProcess).
AttachOutcome attachProcess(pid_t pid, const std::string& agent, const std::string& options,
                            std::chrono::milliseconds timeout, TargetInfo* t, AttachRequest* r,
                            const std::function<bool()>& cancelled = {}, unsigned long long born = 0);

// findTarget(), asked again as attachProcess does while the process is starting (and
// kNoSuchProcess when its pid changes hands meanwhile).
AttachOutcome findStartedTarget(pid_t pid, TargetInfo* t, std::chrono::milliseconds timeout,
                                const std::function<bool()>& cancelled = {});

}  // namespace jitprov::cli
