// SPDX-License-Identifier: MIT
// A target for jitprov-lockwait whose probe arguments take the operand forms a
// compiler other than this build's may give them. Built without optimization, so that
// an argument held in a variable is a memory operand (`-4@-20(%rbp)`) and a literal a
// constant (`-4@$2`), where the library's optimized build has registers only.
// lockwait_args.sh checks that the tool reads each form right.
//   jitprov-usdt-argforms N     prints "waiting", waits (up to 30 s) for SIGUSR1 (sent once
//                              the tracer says it is attached), checks that lock_released
//                              and jit_end are attached (their semaphores), then makes N JIT
//                              paths; path i (from 0): jit_begin, lock_acquired
//                              (site 3, contended), lock_released (site 3, wait i ns, hold
//                              1000 + i ns, in a rundown when i is odd, blocked by nothing,
//                              site 7 (rundown) or an unknown holder (255) as i % 3 is 0, 1, 2),
//                              jit_end (tier 2, 5000 + i ns, in a rundown when i is odd);
//                              every 100th path (i % 100 == 99) reports its acquisition and
//                              its JIT path unmeasured. Prints "done N".
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "jitprov_usdt.h"

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000;
  int site = 3;  // at -O0 a local stays in memory: a memory operand
  unsigned long long method = 1;
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, nullptr);
  std::printf("waiting\n");
  std::fflush(stdout);
  const timespec limit{30, 0};
  if (sigtimedwait(&usr1, nullptr, &limit) != SIGUSR1) {
    std::fprintf(stderr, "jitprov-usdt-argforms: no SIGUSR1 in 30 s\n");
    return 1;
  }
  if (!JITPROV_USDT_ENABLED(lock_released) || !JITPROV_USDT_ENABLED(jit_end)) {
    std::fprintf(stderr, "jitprov-usdt-argforms: SIGUSR1, but no tracer on lock_released and jit_end\n");
    return 1;
  }
  for (long i = 0; i < n; ++i) {
    method = method + 1;
    const bool unmeasured = i % 100 == 99;
    unsigned long long wait_ns = unmeasured ? JITPROV_USDT_UNMEASURED : (unsigned long long)i;
    unsigned long long hold_ns = unmeasured ? JITPROV_USDT_UNMEASURED : 1000ULL + i;
    unsigned long long jit_ns = unmeasured ? JITPROV_USDT_UNMEASURED : 5000ULL + i;
    int in_rundown = int(i & 1);
    int blocked_by = i % 3 == 0 ? 0 : i % 3 == 1 ? 7 : 255;  // no wait, the rundown, unknown
    JITPROV_PROBE_JIT_BEGIN(method, 2);
    JITPROV_PROBE_LOCK_ACQUIRED(site, method, 1);
    JITPROV_PROBE_LOCK_RELEASED(site, method, wait_ns, hold_ns, in_rundown, blocked_by);
    JITPROV_PROBE_JIT_END(method, 2, 0x1000 + i, 64, jit_ns, in_rundown);  // tier: a constant operand
  }
  if (n < 0) {  // never: the binary has every jitprov probe, as a runtime's would
    JITPROV_PROBE_LOCK_WAIT_BEGIN(site, method);
    JITPROV_PROBE_RUNDOWN_BEGIN(method, 0, 0);
    JITPROV_PROBE_RUNDOWN_END(method, 0, 0, 0);
  }
  std::printf("done %ld\n", n);
  return 0;
}
