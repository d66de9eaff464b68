/* SPDX-License-Identifier: MIT */
/* The LTTng tracepoint, sys/sdt.h or X-macro tables below are aligned by hand. */
/* clang-format off */
/* The trace ABI's enumerations, defined once (SPEC.md): the numeric values are what the
 * events, the USDT probes and the C API carry; never renumber them. Plain C
 * preprocessor, no includes, so that every consumer can use it:
 *   - the C API (jitprov.h) and the C++ runtime (types.h, types.cc): enums and names;
 *   - the LTTng provider: the events' enum mappings (the labels in the metadata);
 *   - the common library (common/): the names, the log2 histogram;
 *   - the BPF program (probes/bpf/lockwait.h): its array sizes, site ranges, sentinel;
 *   - tests/trace_abi_check.py: the bpftrace scripts' and docs/spec.md's lists.
 * Each list is X(value, C API name, C++ enumerator, label). */
#ifndef JITPROV_TRACE_ABI_H
#define JITPROV_TRACE_ABI_H

#define JITPROV_TIERS(X)                                            \
  X(0, JITPROV_TIER0, kTier0, "tier0")                              \
  X(1, JITPROV_TIER1, kTier1, "tier1")                              \
  X(2, JITPROV_TIER1_OSR, kTier1Osr, "tier1_osr")                   \
  X(3, JITPROV_TIER_INSTRUMENTED, kInstrumented, "instrumented")    \
  X(4, JITPROV_TIER_OPTIMIZED, kOptimized, "optimized")

/* Lock sites: the `site` argument of the lock probes. 0 is never a site. */
#define JITPROV_LOCK_SITE_LIST(X)                                   \
  X(1, JITPROV_SITE_TIER0_PUBLISH, kTier0Publish, "tier0_publish")  \
  X(2, JITPROV_SITE_TIER1_PUBLISH, kTier1Publish, "tier1_publish")  \
  X(3, JITPROV_SITE_OSR_PUBLISH, kOsrPublish, "osr_publish")        \
  X(4, JITPROV_SITE_REJIT, kRejit, "rejit")                         \
  X(5, JITPROV_SITE_ACTIVATE, kActivate, "activate")                \
  X(6, JITPROV_SITE_UNLOAD, kUnload, "unload")                      \
  X(7, JITPROV_SITE_RUNDOWN, kRundown, "rundown")                   \
  X(8, JITPROV_SITE_LOOKUP, kLookup, "lookup")

#define JITPROV_RUNDOWN_MODES(X)                                    \
  X(0, JITPROV_RUNDOWN_LOCKFREE, kLockFree, "lockfree")             \
  X(1, JITPROV_RUNDOWN_LOCKED, kLocked, "locked")                   \
  X(2, JITPROV_RUNDOWN_PER_METHOD, kPerMethod, "per-method")

#define JITPROV_RUNDOWN_TRIGGERS(X)                                 \
  X(0, JITPROV_TRIGGER_API, kApi, "api")                            \
  X(1, JITPROV_TRIGGER_SESSION, kSession, "session")                \
  X(2, JITPROV_TRIGGER_SIGNAL, kSignal, "signal")                   \
  X(3, JITPROV_TRIGGER_EXIT, kExit, "exit")                         \
  X(4, JITPROV_TRIGGER_AT, kAt, "at")                               \
  X(5, JITPROV_TRIGGER_EVERY, kEvery, "every")

/* Helpers to expand a list. */
#define JITPROV_ABI_ONE(v, c, cxx, label) +1
#define JITPROV_ABI_COUNT(LIST) (0 LIST(JITPROV_ABI_ONE))
#define JITPROV_ABI_C_ENUMERATOR(v, c, cxx, label) c = v,
#define JITPROV_ABI_CXX_ENUMERATOR(v, c, cxx, label) cxx = v,

#define JITPROV_TIER_COUNT JITPROV_ABI_COUNT(JITPROV_TIERS)
#define JITPROV_LOCK_SITE_MAX JITPROV_ABI_COUNT(JITPROV_LOCK_SITE_LIST) /* sites are 1..max */
/* Site ranges: the JIT paths' sites (tier0_publish .. unload) and the rundown's; the
 * figures "JIT waits" and "JIT time blocked by the rundown" use them (checked against
 * the list by the common library, against the bpftrace scripts by tests/trace_abi_check.py). */
#define JITPROV_JIT_SITE_FIRST 1 /* tier0_publish */
#define JITPROV_JIT_SITE_LAST 6  /* unload */
#define JITPROV_RUNDOWN_SITE 7   /* rundown */
/* USDT lock_released's blocked_by: 0 the acquisition did not wait; a site 1..max the
 * holder's when the wait began; this value: it waited, the holder's site unknown. */
#define JITPROV_BLOCKED_BY_UNKNOWN 255
/* A duration the runtime did not measure (USDT lock_released's wait_ns and hold_ns,
 * jit_end's jit_ns: it began before a tracer attached): all ones. */
#define JITPROV_UNMEASURED_NS 0xFFFFFFFFFFFFFFFFULL
/* Log2 histograms of nanoseconds (the C API's jitprov_hist, the runtime's lock
 * statistics, jitprov-lockwait's BPF maps): bucket i counts 2^(i-1) <= ns < 2^i,
 * bucket 0 counts 0; the last bucket also counts everything above. */
#define JITPROV_HIST_BUCKETS 48
/* Longest string the events carry, in bytes; longer ones are cut on a UTF-8 boundary. */
#define JITPROV_MAX_TRACE_STRING 4096

#endif
