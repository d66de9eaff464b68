// SPDX-License-Identifier: MIT
// Protocol faults, for tests only: meson option protocol_fault=NAME builds the registry
// with one publication rule of registry.h broken on purpose, and tools/check shows that
// the stress test catches each. Every step a fault can break is a named hook here: the
// rule's operation in a normal build, the broken one in that fault's build. So
// registry.cc reads as the algorithm, and the hooks compile to the plain operation.
#pragma once

#include "protocol_fault_config.h"  // generated: JITPROV_PROTOCOL_FAULT_<NAME> in a fault build
#include "registry.h"

#include <atomic>
#include <new>
#include <thread>

namespace jitprov::fault {

// P1 with a native version: its `next` when it is initialised (link-before-init: null,
// written after the node is linked).
inline NativeVersion* initialNext(NativeVersion* old_head) noexcept {
#if defined(JITPROV_PROTOCOL_FAULT_LINK_BEFORE_INIT)
  (void)old_head;
  return nullptr;
#else
  return old_head;
#endif
}

// P1: links the complete node `v` at the head of its IL version's list (relaxed-head:
// without release; link-before-init: then writes its `next`, after a yield that stands
// for the writer being preempted, so that the stress test meets the window every run).
inline void linkNativeVersion(std::atomic<NativeVersion*>& head, NativeVersion* v, NativeVersion* old_head) noexcept {
#if defined(JITPROV_PROTOCOL_FAULT_RELAXED_HEAD)
  head.store(v, std::memory_order_relaxed);
#else
  publish(head, v);
#endif
#if defined(JITPROV_PROTOCOL_FAULT_LINK_BEFORE_INIT)
  std::this_thread::yield();
  v->next.store(old_head, std::memory_order_relaxed);
#else
  (void)old_head;
#endif
}

// P1 with an IL version: the method's new head (relaxed-il-head: without release).
inline void linkIlVersion(std::atomic<IlVersion*>& head, IlVersion* il) noexcept {
#if defined(JITPROV_PROTOCOL_FAULT_RELAXED_IL_HEAD)
  head.store(il, std::memory_order_relaxed);
#else
  publish(head, il);
#endif
}

// P2: publishes code: its size, then its start with release (relaxed-code-start: the
// start first, without release).
inline void publishCode(NativeVersion* v, uint64_t start, uint32_t size) noexcept {
#if defined(JITPROV_PROTOCOL_FAULT_RELAXED_CODE_START)
  v->code_start.store(start, std::memory_order_relaxed);
  v->code_size = size;
#else
  v->code_size = size;
  publish(v->code_start, start);
#endif
}

// P6: after `v` was unlinked (unlink-poison-next: its `next` cleared, so that walkers
// standing on it lose the rest of the list).
inline void afterUnlink(NativeVersion* v) noexcept {
#if defined(JITPROV_PROTOCOL_FAULT_UNLINK_POISON_NEXT)
  v->next.store(nullptr, std::memory_order_relaxed);
#else
  (void)v;
#endif
}

// P4, P9: a retired version, CVM lock held. False: it goes to the retire batch (after a
// grace period). retire-reuse-without-grace: freed at once, its slot reusable while
// walkers may still stand on it; true.
inline bool reclaimRetiredAtOnce(Runtime::State* s, NativeVersion* v) {
#if defined(JITPROV_PROTOCOL_FAULT_RETIRE_REUSE_WITHOUT_GRACE)
  rcu::ReclaimScope scope;
  s->freeVersion(v, true);
  return true;
#else
  (void)s;
  (void)v;
  return false;
#endif
}

// P5: after a module's unload, loader mutex held (unload-names-without-grace: its
// methods' strings freed at once, while walkers may still be reading them).
inline void afterUnload(Module* mod) {
#if defined(JITPROV_PROTOCOL_FAULT_UNLOAD_NAMES_WITHOUT_GRACE)
  mod->names.~NameArena();
  new (&mod->names) NameArena();
#else
  (void)mod;
#endif
}

// P4: an unloaded module's records go to reclamation after a grace period
// (unload-reuse-without-grace: at once, slots reusable while readers hold them).
inline void reclaimModule(Runtime::State* s, Module* mod) {
#if defined(JITPROV_PROTOCOL_FAULT_UNLOAD_REUSE_WITHOUT_GRACE)
  s->awaiting_reclamation.fetch_add(mod->records, std::memory_order_relaxed);
  Runtime::State::reclaimModule(&mod->rcu);
#else
  s->reclaimLater(&mod->rcu, &Runtime::State::reclaimModule, mod->records);
#endif
}

// P8: whether a complete walk runs its catch-up (no-catch-up: it claims completeness up
// to P without it).
#if defined(JITPROV_PROTOCOL_FAULT_NO_CATCH_UP)
inline constexpr bool kCatchUp = false;
#else
inline constexpr bool kCatchUp = true;
#endif

}  // namespace jitprov::fault
