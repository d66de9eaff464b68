// The runtime's side of the LTTng-UST providers: loading the provider shared object
// and firing the events. Every function is a no-op (one load and a branch) while its
// event is disabled or the provider is absent.
#pragma once

#include <jitprov/types.h>

#include <cstdint>
#include <string>

namespace jitprov::trace {

// dlopen()s the provider once per process (later calls return the first result).
// $JITPROV_PROVIDER when set (that one or none), otherwise beside libjitprov.so.0 (the
// object this code is linked into), then the library search path. A library without
// the provider's ABI symbol is refused.
bool loadProvider();
// "loaded <path>" or why not; JITPROV_TRACE_DEBUG=1 prints it to stderr when decided.
std::string providerStatus();

void moduleLoad(ModuleId id, const char* path);
void moduleUnload(ModuleId id, const char* path);
void methodLoad(const VersionView& v);
void methodUnload(MethodId method, ModuleId module);
void codeUnload(MethodId method, VersionId version, uint64_t code_start, uint32_t code_size);
void rejitRequest(MethodId method, RejitId rejit);

bool rundownEventsEnabled() noexcept;  // the session trigger watches this
void rundownBegin(uint64_t id, RundownMode mode, RundownTrigger trigger, uint64_t method_count);
void rundownModule(uint64_t id, const ModuleView& m);
void rundownMethod(uint64_t id, const VersionView& v);
void rundownEnd(uint64_t id, uint64_t modules, uint64_t methods, uint64_t versions, uint64_t skipped,
                uint64_t retried, uint64_t duration_ns);

// Longest string the events carry (bytes); longer ones are cut on a UTF-8 boundary.
inline constexpr size_t kMaxTraceString = 4096;

}  // namespace jitprov::trace
