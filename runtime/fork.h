// fork() support (fork.cc): every live runtime is known to the process's atfork handlers.
#pragma once

#include <jitprov/runtime.h>

namespace jitprov::fork {
// From the State's constructor and destructor. track() may throw std::bad_alloc.
void track(Runtime::State* s);
void untrack(Runtime::State* s) noexcept;
}  // namespace jitprov::fork
