// SPDX-License-Identifier: MIT
// The semaphores of the jitprov USDT probes (see jitprov_usdt.h). They live in the
// .probes section, where sys/sdt.h's probe notes point and where tracers find them.
#include "jitprov_usdt.h"

#define JITPROV_USDT_DEFINE(name)                                                                     \
  extern "C" {                                                                                        \
  __attribute__((section(".probes"), used)) volatile unsigned short JITPROV_USDT_SEMAPHORE(name) = 0; \
  }

JITPROV_USDT_DEFINE(lock_wait_begin)
JITPROV_USDT_DEFINE(lock_acquired)
JITPROV_USDT_DEFINE(lock_released)
JITPROV_USDT_DEFINE(jit_begin)
JITPROV_USDT_DEFINE(jit_end)
JITPROV_USDT_DEFINE(rundown_begin)
JITPROV_USDT_DEFINE(rundown_end)
