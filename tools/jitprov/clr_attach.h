/* SPDX-License-Identifier: MIT */
// `jitprov attach PID` for CoreCLR: the .NET client loaded into a running process over
// CoreCLR's diagnostics IPC (docs/dotnet.md, "Attach"). The diagnostics socket is found
// in the target's view of the file system (/proc/PID/root, its TMPDIR), the runtime's
// version read (ProcessInfo3, else ProcessInfo2), then AttachProfiler sent with the
// client's class id, the agent's path and the options as client data; the runtime
// answers once the client's InitializeForAttach and ProfilerAttachComplete returned.
#pragma once

#include <cstdint>
#include <string>

#include "attach.h"

namespace jitprov::cli {

AttachOutcome attachCoreClr(const AttachRequest& req);

// What an HRESULT of an AttachProfiler reply means for the user, and its exit status
// (AttachStatus). `agent_loaded_jitprov`: the target maps jitprov's .NET client (for
// CORPROF_E_PROFILER_ALREADY_ACTIVE: jitprov itself, or another profiler).
int clrStatusOf(uint32_t hresult, bool agent_loaded_jitprov, std::string* why);

}  // namespace jitprov::cli
