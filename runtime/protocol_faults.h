// SPDX-License-Identifier: MIT
// Protocol faults, for tests only: meson option protocol_fault=NAME builds the registry
// with one publication rule of registry.h broken on purpose, and tools/check shows that
// the stress test catches each. Every step a fault can break is a named hook here: the
// rule's operation in a normal build, the broken one in that fault's build. So
// registry.cc reads as the algorithm, and the hooks compile to the plain operation (the
// build's fault is a constant). protocol_fault=runtime (tools/check's ThreadSanitizer
// build) takes the fault from the environment, JITPROV_PROTOCOL_FAULT=NAME, read once:
// one build runs every fault, none when the variable is unset.
#pragma once

#include "protocol_fault_config.h"  // generated: JITPROV_PROTOCOL_FAULT_<NAME> in a fault build
#include "registry.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <new>
#include <string_view>
#include <thread>

namespace jitprov::fault {

enum class Fault : uint8_t {
  kNone,
  kRelaxedHead,
  kLinkBeforeInit,
  kRelaxedCodeStart,
  kUnloadReuseWithoutGrace,
  kRetireReuseWithoutGrace,
  kUnlinkPoisonNext,
  kNoCatchUp,
  kUnloadNamesWithoutGrace,
  kRelaxedIlHead,
};

// Each fault by its name in meson_options.txt; kNone for none.
struct FaultName {
  std::string_view name;
  Fault fault;
};
inline constexpr FaultName kFaultNames[] = {
    {"none", Fault::kNone},
    {"relaxed-head", Fault::kRelaxedHead},
    {"link-before-init", Fault::kLinkBeforeInit},
    {"relaxed-code-start", Fault::kRelaxedCodeStart},
    {"unload-reuse-without-grace", Fault::kUnloadReuseWithoutGrace},
    {"retire-reuse-without-grace", Fault::kRetireReuseWithoutGrace},
    {"unlink-poison-next", Fault::kUnlinkPoisonNext},
    {"no-catch-up", Fault::kNoCatchUp},
    {"unload-names-without-grace", Fault::kUnloadNamesWithoutGrace},
    {"relaxed-il-head", Fault::kRelaxedIlHead},
};
// The index in kFaultNames of the fault NAME names, or -1 (an index, not a pointer: GCC
// does not take a pointer's comparison as a constant under -fsanitize=undefined).
constexpr int faultIndex(std::string_view name) noexcept {
  for (size_t i = 0; i < std::size(kFaultNames); i++) {
    if (kFaultNames[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

#if defined(JITPROV_PROTOCOL_FAULT_RUNTIME)
// The fault JITPROV_PROTOCOL_FAULT names, read at the first call: an active fault is said
// once on stderr (tools/check looks for that line), an unknown name aborts.
inline Fault activeFault() noexcept {
  static const Fault active = [] {
    const char* name = std::getenv("JITPROV_PROTOCOL_FAULT");
    if (name == nullptr || *name == '\0') return Fault::kNone;
    const int i = faultIndex(name);
    if (i < 0) {
      std::fprintf(stderr, "jitprov: JITPROV_PROTOCOL_FAULT=%s names no protocol fault (meson_options.txt)\n", name);
      std::abort();
    }
    const Fault f = kFaultNames[i].fault;
    if (f != Fault::kNone) {
      std::fprintf(stderr, "jitprov: protocol fault %s active (a test build: the registry is broken on purpose)\n",
                   name);
    }
    return f;
  }();
  return active;
}
inline bool on(Fault f) noexcept { return activeFault() == f; }
#else
// The build's fault, a constant (protocol_fault_config.h names it).
inline constexpr int kBuiltFaultIndex = faultIndex(JITPROV_PROTOCOL_FAULT_NAME);
static_assert(kBuiltFaultIndex >= 0, "a protocol_fault choice without its Fault");
inline constexpr Fault kBuiltFault = kFaultNames[kBuiltFaultIndex].fault;
constexpr bool on(Fault f) noexcept { return kBuiltFault == f; }
#endif

// P1 with a native version: its `next` when it is initialised (link-before-init: null,
// written after the node is linked).
inline NativeVersion* initialNext(NativeVersion* old_head) noexcept {
  return on(Fault::kLinkBeforeInit) ? nullptr : old_head;
}

// P1: links the complete node `v` at the head of its IL version's list (relaxed-head:
// without release; link-before-init: then writes its `next`, after a yield that stands
// for the writer being preempted, so that the stress test meets the window every run).
inline void linkNativeVersion(std::atomic<NativeVersion*>& head, NativeVersion* v, NativeVersion* old_head) noexcept {
  if (on(Fault::kRelaxedHead)) {
    head.store(v, std::memory_order_relaxed);
  } else {
    publish(head, v);
  }
  if (on(Fault::kLinkBeforeInit)) {
    std::this_thread::yield();
    v->next.store(old_head, std::memory_order_relaxed);
  }
}

// P1 with an IL version: the method's new head (relaxed-il-head: without release).
inline void linkIlVersion(std::atomic<IlVersion*>& head, IlVersion* il) noexcept {
  if (on(Fault::kRelaxedIlHead)) {
    head.store(il, std::memory_order_relaxed);
  } else {
    publish(head, il);
  }
}

// P2: publishes code: its size, then its start with release (relaxed-code-start: the
// start first, without release).
inline void publishCode(NativeVersion* v, uint64_t start, uint32_t size) noexcept {
  if (on(Fault::kRelaxedCodeStart)) {
    v->code_start.store(start, std::memory_order_relaxed);
    v->code_size = size;
  } else {
    v->code_size = size;
    publish(v->code_start, start);
  }
}

// P6: after `v` was unlinked (unlink-poison-next: its `next` cleared, so that walkers
// standing on it lose the rest of the list).
inline void afterUnlink(NativeVersion* v) noexcept {
  if (on(Fault::kUnlinkPoisonNext)) v->next.store(nullptr, std::memory_order_relaxed);
}

// P4, P9: a retired version, CVM lock held. False: it goes to the retire batch (after a
// grace period). retire-reuse-without-grace: freed at once, its slot reusable while
// walkers may still stand on it; true.
inline bool reclaimRetiredAtOnce(Runtime::State* s, NativeVersion* v) {
  if (!on(Fault::kRetireReuseWithoutGrace)) return false;
  rcu::ReclaimScope scope;
  s->freeVersion(v, true);
  return true;
}

// P5: after a module's unload, loader mutex held (unload-names-without-grace: its
// methods' strings freed at once, while walkers may still be reading them).
inline void afterUnload(Module* mod) {
  if (on(Fault::kUnloadNamesWithoutGrace)) {
    mod->names.~NameArena();
    new (&mod->names) NameArena();
  }
}

// P4: an unloaded module's records go to reclamation after a grace period
// (unload-reuse-without-grace: at once, slots reusable while readers hold them).
inline void reclaimModule(Runtime::State* s, Module* mod) {
  if (on(Fault::kUnloadReuseWithoutGrace)) {
    s->awaiting_reclamation.fetch_add(mod->records, std::memory_order_relaxed);
    Runtime::State::reclaimModule(&mod->rcu);
  } else {
    s->reclaimLater(&mod->rcu, &Runtime::State::reclaimModule, mod->records);
  }
}

// P8: whether a complete walk runs its catch-up (no-catch-up: it claims completeness up
// to P without it).
inline bool catchUp() noexcept { return !on(Fault::kNoCatchUp); }

}  // namespace jitprov::fault
