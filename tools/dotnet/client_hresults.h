/* SPDX-License-Identifier: MIT */
// The .NET client's own failure HRESULTs: what its InitializeForAttach returns when it
// cannot start, passed through unchanged by CoreCLR to the diagnostics IPC client that
// asked for the attach (`jitprov attach`, tools/jitprov/clr_attach.cc), which names
// them. Severity and customer bits set (0xA...): no CoreCLR or COM code has them.
#pragma once

#include <cstdint>

namespace jitprov::dotnet {

constexpr uint32_t kHrClientBadOptions = 0xA0A10001u;      // the options (client data) refused
constexpr uint32_t kHrClientRuntimeTooOld = 0xA0A10002u;   // no ICorProfilerInfo12 (.NET 5 or later needed)
constexpr uint32_t kHrClientAlreadyRunning = 0xA0A10003u;  // the client runs in this process already
constexpr uint32_t kHrClientRuntimeRefused = 0xA0A10004u;  // the event mask or the EventPipe session refused
constexpr uint32_t kHrClientStartFailed = 0xA0A10005u;     // jitprov's runtime or its rundowns did not start

}  // namespace jitprov::dotnet
