/* SPDX-License-Identifier: MIT */
// The attached client's catch-up (docs/dotnet.md, "Attach"): the code CoreCLR JIT'd
// before the client's session existed, enumerated (ICorProfilerInfo3::EnumJITedFunctions,
// ICorProfilerInfo9::GetNativeCodeStartAddresses and GetCodeInfo4), named from the
// metadata as CoreCLR's own events name it (clr_names.h), and published into the mirror
// under its catch-up mutex (mirror.h), while the session's events flow.
#pragma once

#include <cstdint>

#include "mirror.h"

namespace jitprov::dotnet {

struct CatchUpResult {
  uint64_t functions = 0;  // distinct FunctionIDs enumerated
  uint64_t elements = 0;   // the enumeration's elements (one per JIT'd body)
  uint64_t ns = 0;         // how long it took
};

// For tests only (JITPROV_DOTNET's catchup_delay_ms=, docs/dotnet.md): the catch-up
// waits delay_ms between its enumeration and its first method, and then on until an
// unload has come after the enumeration (at most kCatchUpUnloadWaitMs more), so that
// unloads land inside it on every run however slow the machine
// (tests/integration/dotnet_attach.sh). 0 in any real use.
constexpr uint32_t kCatchUpUnloadWaitMs = 5000;  // within the attach's 10 s with the test's 1.5 s
struct CatchUpTestHooks {
  uint32_t delay_ms = 0;
};

// info: ICorProfilerInfo12. Runs on CoreCLR's thread of ProfilerAttachComplete. Holds
// the mirror's catch-up mutex only around what takes none of CoreCLR's code heap and
// code version locks (catchup.cc: the lock order).
CatchUpResult catchUp(void* info, Mirror& mirror, const CatchUpTestHooks& hooks = {});

}  // namespace jitprov::dotnet
