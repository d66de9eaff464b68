/* SPDX-License-Identifier: MIT */
// Internal entry points of the C API: compiled with hidden visibility, so they are in
// the static core (tests, the simulator's fault-injection build) but never exported
// from libjitprov.so.1.
#pragma once

#include <jitprov/jitprov.h>

namespace jitprov {
class Runtime;
}

extern "C" {
// Test-only: breaks every rundown of `rd` on purpose (RundownFault names: duplicate,
// torn, torn-name, skip, no-end, begin-twice, end-twice), so that trace verifiers are tested on real traces.
__attribute__((visibility("hidden"))) int jitprov_internal_inject_fault(jitprov_rundown* rd, const char* fault);
}

// Benchmark-only: the C++ runtime behind a C handle, so that the C API and the C++ core
// can be timed on one and the same runtime.
__attribute__((visibility("hidden"))) jitprov::Runtime* jitprovInternalRuntime(jitprov_runtime* rt);
