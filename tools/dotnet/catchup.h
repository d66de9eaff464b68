/* SPDX-License-Identifier: MIT */
// The attached client's catch-up (docs/dotnet.md, "Attach"): the code CoreCLR JIT'd
// before the client's session existed, enumerated (ICorProfilerInfo3::EnumJITedFunctions,
// ICorProfilerInfo9::GetNativeCodeStartAddresses and GetCodeInfo4), named from the
// metadata as CoreCLR's own events name it (clr_names.h), and published into the mirror
// with its gate closed and under its catch-up mutex (mirror.h), while the session's
// events flow.
#pragma once

#include <vector>

#include <cstdint>

#include "mirror.h"

namespace jitprov::dotnet {

struct CatchUpResult {
  uint64_t functions = 0;   // distinct FunctionIDs enumerated
  uint64_t elements = 0;    // the enumeration's elements (one per JIT'd body)
  uint64_t resolve_ns = 0;  // the enumeration and the resolution, the gate closed throughout
  uint64_t ns = 0;          // how long it all took
};

// For tests only (JITPROV_DOTNET's catchup_delay_ms=, docs/dotnet.md): the catch-up
// waits delay_ms between its resolution of the enumerated methods and its first
// method's turn, and then on until an unload has come after the resolution (at most
// kCatchUpUnloadWaitMs more), so that unloads land inside it on every run however slow
// the machine, and the contexts they unload are freed before the methods' turns
// (tests/integration/dotnet_attach.sh). 0 in any real use.
constexpr uint32_t kCatchUpUnloadWaitMs = 5000;  // within the attach's 10 s with the test's 1.5 s
struct CatchUpTestHooks {
  uint32_t delay_ms = 0;
};

// info: ICorProfilerInfo12. Runs on CoreCLR's thread of ProfilerAttachComplete, the
// mirror's gate closed (Mirror::beginCatchUp); opens it. Holds the mirror's catch-up
// mutex only around jitprov's own work (catchup.cc: why nothing it reads is freed under
// it, and the lock order).
CatchUpResult catchUp(void* info, Mirror& mirror, const CatchUpTestHooks& hooks = {});

// The modules whose unload can free the MethodDesc of FunctionID `fid`: its own, and
// those of its class and its type arguments, recursively (CoreCLR allocates an exact
// instantiation in the LoaderAllocator of its most collectible part). Empty when
// CoreCLR could not say.
std::vector<uint64_t> methodModules(void* info, uint64_t fid);

}  // namespace jitprov::dotnet
