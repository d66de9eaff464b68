/* SPDX-License-Identifier: MIT */
// fork() support (fork.cc): every live runtime, and every other object whose locks must
// not be copied half-held into a child (rundown engines), is known to the process's
// atfork handlers.
#pragma once

#include <jitprov/runtime.h>

namespace jitprov::fork {
// From the State's constructor and destructor. track() may throw std::bad_alloc.
void track(Runtime::State* s);
void untrack(Runtime::State* s) noexcept;

// An object's own fork handlers, run after every runtime's locks are taken (prepare) and
// before they are released (parent, child), in the order of registration (prepare) and
// the reverse (parent, child). prepare() takes the object's locks; child() runs on the
// child's only thread and repairs what threads that are not in the child left behind.
struct Hooks {
  void (*prepare)(void* ctx);
  void (*parent)(void* ctx);
  void (*child)(void* ctx);
  void* ctx;
};
// trackHooks() may throw std::bad_alloc; untrackHooks() takes the ctx given.
void trackHooks(const Hooks& h);
void untrackHooks(void* ctx) noexcept;
}  // namespace jitprov::fork
