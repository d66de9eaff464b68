/* SPDX-License-Identifier: MIT */
/* The LTTng tracepoint, sys/sdt.h or X-macro tables below are aligned by hand. */
/* clang-format off */
// USDT probes of provider "jitprov" (SPEC.md "USDT probes").
//
// Each probe has its own semaphore: a 16-bit counter in the .probes section that a
// tracer (bpftrace, libbpf's USDT support) increments while it is attached. The
// JITPROV_PROBE_* macros test it first, so an unattached probe costs one load and a
// predicted branch; arguments are not even computed. The semaphores are defined once,
// in jitprov_usdt.cc.
//
// Argument types are part of the probe ABI: site and tier are u8-valued ints, ids,
// addresses and durations 64-bit. Arguments are only ever appended to a probe (a tracer
// that reads the first ones keeps working). Durations are measured by the runtime
// (CLOCK_MONOTONIC) only while a tracer is attached to the probe that reports them (a
// lock acquisition also when in-process lock statistics are on, which share the
// measurement): lock_released and jit_end carry everything a lock-wait tool needs, one
// probe hit per acquisition and one per JIT path, no clock in the tracer.
//
// The site instruction. sys/sdt.h (systemtap 4.8) places a 1-byte `nop` at each probe,
// which the kernel turns into an int3 trap while a tracer is attached. On x86-64 jitprov
// places a 5-byte NOP (`0f 1f 44 00 00`, emitted by `.nops 5`) instead: a kernel with the
// uprobe nop5 optimization (6.x) rewrites it into a call to a uprobe trampoline (the
// `[uprobes-trampoline]` mapping in the traced process), no trap; an older kernel traps
// on it as before. The note format is unchanged: readelf -n, bpftrace and libbpf see
// ordinary USDT probes. Meson option usdt_site=nop1 keeps systemtap's 1-byte nop (to
// measure both).
#pragma once

#define _SDT_HAS_SEMAPHORES 1
// Operands in registers or constants, never in memory, in optimized builds: a BPF
// program reads a register argument with a load from its context, a memory one with a
// bpf_probe_read_user() call per argument per hit. (Unoptimized code keeps sys/sdt.h's
// default, memory included: tests/integration/usdt_argforms.cc has each form.)
#if defined(__OPTIMIZE__) && defined(__x86_64__) && !defined(STAP_SDT_ARG_CONSTRAINT)
#define STAP_SDT_ARG_CONSTRAINT nr
#endif
#include <sys/sdt.h>

#include <jitprov/trace_abi.h>

#if defined(__x86_64__) && !defined(JITPROV_USDT_NOP1)
#undef _SDT_NOP
#define _SDT_NOP .nops 5
#endif

#define JITPROV_USDT_SEMAPHORE(name) jitprov_##name##_semaphore

#define JITPROV_USDT_DECLARE(name) \
  extern "C" volatile unsigned short JITPROV_USDT_SEMAPHORE(name)

JITPROV_USDT_DECLARE(lock_wait_begin);
JITPROV_USDT_DECLARE(lock_acquired);
JITPROV_USDT_DECLARE(lock_released);
JITPROV_USDT_DECLARE(jit_begin);
JITPROV_USDT_DECLARE(jit_end);
JITPROV_USDT_DECLARE(rundown_begin);
JITPROV_USDT_DECLARE(rundown_end);

#define JITPROV_USDT_ENABLED(name) __builtin_expect(JITPROV_USDT_SEMAPHORE(name) != 0, 0)

// A duration the runtime could not measure (its start came before the tracer attached).
#define JITPROV_USDT_UNMEASURED JITPROV_UNMEASURED_NS

// lock_wait_begin(site, method_id): the lock is held by another thread; about to wait.
#define JITPROV_PROBE_LOCK_WAIT_BEGIN(site, method_id) \
  do {                                                 \
    if (JITPROV_USDT_ENABLED(lock_wait_begin))         \
      STAP_PROBE2(jitprov, lock_wait_begin, (int)(site), (unsigned long long)(method_id)); \
  } while (0)
// lock_acquired(site, method_id, contended): now holds it. contended = 1 when a
// lock_wait_begin preceded it (the lock was held), 0 when it was free at once (then no
// lock_wait_begin fired).
#define JITPROV_PROBE_LOCK_ACQUIRED(site, method_id, contended) \
  do {                                                          \
    if (JITPROV_USDT_ENABLED(lock_acquired))                    \
      STAP_PROBE3(jitprov, lock_acquired, (int)(site), (unsigned long long)(method_id), (int)(contended)); \
  } while (0)
// lock_released(site, method_id, wait_ns, hold_ns, in_rundown, blocked_by): released
// it. The runtime measured the acquisition itself, so that a tracer needs one probe hit
// per acquisition (this one) for its whole story, and no clock of its own:
//  - wait_ns: from the lock_wait_begin probe (after the failed try-lock) to the
//    acquisition; 0 when uncontended;
//  - hold_ns: from the acquisition to the release;
//    both JITPROV_USDT_UNMEASURED (all ones) when the acquisition began before a tracer
//    attached to this probe (and in-process statistics are off): not measured;
//  - in_rundown: 1 when a rundown of this process was running as the wait began (the
//    runtime's own count: attaching in the middle of a rundown cannot mislabel it);
//  - blocked_by: 0 when the lock was free (lock_acquired's contended 0); else the site
//    that held it when the wait began, or JITPROV_BLOCKED_BY_UNKNOWN (255: the holder
//    was between its acquisition and storing its site).
// Six arguments: bpftrace 0.17 reads usdt arguments arg0..arg5 only.
#define JITPROV_PROBE_LOCK_RELEASED(site, method_id, wait_ns, hold_ns, in_rundown, blocked_by)              \
  do {                                                                                                    \
    if (JITPROV_USDT_ENABLED(lock_released))                                                              \
      STAP_PROBE6(jitprov, lock_released, (int)(site), (unsigned long long)(method_id),                    \
                  (unsigned long long)(wait_ns), (unsigned long long)(hold_ns), (int)(in_rundown),         \
                  (int)(blocked_by));                                                                     \
  } while (0)
// jit_begin(method_id, tier): a JIT path starts.
#define JITPROV_PROBE_JIT_BEGIN(method_id, tier) \
  do {                                           \
    if (JITPROV_USDT_ENABLED(jit_begin))         \
      STAP_PROBE2(jitprov, jit_begin, (unsigned long long)(method_id), (int)(tier)); \
  } while (0)
// jit_end(method_id, tier, code_start, code_size, jit_ns, in_rundown): its code is
// published. jit_ns: from this thread's last jit_begin, measured by the runtime
// (JITPROV_USDT_UNMEASURED when that jit_begin came before a tracer attached to jit_end);
// in_rundown: 1 when a rundown of this process ran at any time during the path.
#define JITPROV_PROBE_JIT_END(method_id, tier, code_start, code_size, jit_ns, in_rundown)                  \
  do {                                                                                                    \
    if (JITPROV_USDT_ENABLED(jit_end))                                                                    \
      STAP_PROBE6(jitprov, jit_end, (unsigned long long)(method_id), (int)(tier),                         \
                  (unsigned long long)(code_start), (unsigned long long)(code_size),                      \
                  (unsigned long long)(jit_ns), (int)(in_rundown));                                       \
  } while (0)
// rundown_begin(rundown_id, mode, trigger)
#define JITPROV_PROBE_RUNDOWN_BEGIN(rundown_id, mode, trigger)                             \
  do {                                                                                     \
    if (JITPROV_USDT_ENABLED(rundown_begin))                                               \
      STAP_PROBE3(jitprov, rundown_begin, (unsigned long long)(rundown_id), (int)(mode),   \
                  (int)(trigger));                                                         \
  } while (0)
// rundown_end(rundown_id, methods, versions, skipped)
#define JITPROV_PROBE_RUNDOWN_END(rundown_id, methods, versions, skipped)                  \
  do {                                                                                     \
    if (JITPROV_USDT_ENABLED(rundown_end))                                                 \
      STAP_PROBE4(jitprov, rundown_end, (unsigned long long)(rundown_id),                  \
                  (unsigned long long)(methods), (unsigned long long)(versions),           \
                  (unsigned long long)(skipped));                                          \
  } while (0)
