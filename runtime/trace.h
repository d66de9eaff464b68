/* SPDX-License-Identifier: MIT */
// The runtime's side of the LTTng-UST providers: loading the provider shared object
// and firing the events. Every function is a no-op (one load and a branch) while its
// event is disabled or the provider is absent.
#pragma once

#include <jitprov/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace jitprov::trace {

// dlopen()s the provider once per process (later calls return the first result).
// $JITPROV_PROVIDER when set (that one or none), otherwise beside libjitprov.so.1 (the
// object this code is linked into), then the library search path. A library without
// the provider's ABI symbol is refused.
bool loadProvider();
// "loaded <path>" or why not; JITPROV_TRACE_DEBUG=1 prints it to stderr when decided.
std::string providerStatus();

// `instance`: the runtime's instance number in its process (Runtime::instance()), which
// every event carries: ids are per runtime, and two runtimes of a process hand out the
// same ones.
void moduleLoad(uint32_t instance, ModuleId id, const char* path);
void moduleUnload(uint32_t instance, ModuleId id, const char* path);
void methodLoad(uint32_t instance, const VersionView& v);
void methodUnload(uint32_t instance, MethodId method, ModuleId module, uint64_t unload_seq);
void codeUnload(uint32_t instance, MethodId method, VersionId version, uint64_t code_start, uint32_t code_size,
                uint64_t retire_seq);
void rejitRequest(uint32_t instance, MethodId method, RejitId rejit);

// --- sessions (docs/spec.md "Rundown") ----------------------------------------------
// An lttng-ust session, opaque (struct lttng_ust_session*): only compared and passed
// back to the provider, which records a rundown event into that session only.
using Session = void*;
using Sessions = std::span<const Session>;

bool rundownEventsEnabled() noexcept;  // some session records rundown events
// The active sessions that record jitprov_rundown events now (empty without provider).
std::vector<Session> recordingSessions();
// Calls fn(ctx, session) for every session that starts (and on `lttng regenerate
// statedump`), on lttng-ust's thread with its locks held: fn only hands it over. Returns
// a token for unwatchSessionStarts(), or 0 when sessions cannot be watched (no provider,
// or lttng-ust refused the probe: then providerStatus() says why).
uint64_t watchSessionStarts(void (*fn)(void* ctx, Session session), void* ctx);
// After it returns, fn is no longer called for this token.
void unwatchSessionStarts(uint64_t token);

struct RundownEnd {
  uint64_t modules, methods, versions, skipped, retried, duration_ns;
  uint64_t publish_seq, end_seq, caught_up;
  bool cut_short;
  uint64_t caught_up_methods;
};
// One rundown's events: into every session of `to`, each with the runtime's instance.
struct Rundown {
  Sessions to;
  uint32_t instance;
  uint64_t id;
};
void rundownBegin(const Rundown& r, RundownMode mode, RundownTrigger trigger, uint64_t method_count,
                  uint64_t publish_seq);
void rundownModule(const Rundown& r, const ModuleView& m);
void rundownMethod(const Rundown& r, const VersionView& v);
// The same from a record the walk filled in place (Runtime::walkCompleteRecords), with
// rec.r.runtime_instance set to r.instance (overlong names are cut in a copy).
struct VersionRecord;  // version_record.h
void rundownRecord(const Rundown& r, const VersionRecord& rec);
// A version's record from its view (names as they are, with their lengths).
VersionRecord recordOf(uint32_t instance, const VersionView& v);
void rundownEnd(const Rundown& r, const RundownEnd& e);

// Longest string the events carry (bytes); longer ones are cut on a UTF-8 boundary.
inline constexpr size_t kMaxTraceString = JITPROV_MAX_TRACE_STRING;

}  // namespace jitprov::trace
