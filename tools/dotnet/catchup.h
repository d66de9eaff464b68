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

// info: ICorProfilerInfo12. Runs on CoreCLR's thread of ProfilerAttachComplete.
CatchUpResult catchUp(void* info, Mirror& mirror);

}  // namespace jitprov::dotnet
