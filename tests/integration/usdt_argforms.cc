// A target for jitprov-lockwait whose probe arguments take the operand forms a
// compiler other than this build's may give them. Built without optimization, so that
// an argument held in a variable is a memory operand (`-4@-20(%rbp)`) and a literal a
// constant (`-4@$2`), where the library's optimized build has registers only.
// lockwait_args.sh checks that the tool reads each form right.
//   jitprov-usdt-argforms N     prints "waiting", waits (up to 30 s) for a tracer on lock_released, then
//                              makes N JIT paths: jit_begin, lock_acquired (site 3,
//                              uncontended), lock_released, jit_end (tier 2); prints
//                              "done N"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "jitprov_usdt.h"

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000;
  int site = 3;  // at -O0 a local stays in memory: a memory operand
  unsigned long long method = 1;
  std::printf("waiting\n");
  std::fflush(stdout);
  for (int i = 0; i < 3000 && !JITPROV_USDT_ENABLED(lock_released); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!JITPROV_USDT_ENABLED(lock_released)) {
    std::fprintf(stderr, "jitprov-usdt-argforms: no tracer attached in 30 s\n");
    return 1;
  }
  for (long i = 0; i < n; ++i) {
    method = method + 1;
    JITPROV_PROBE_JIT_BEGIN(method, 2);
    JITPROV_PROBE_LOCK_ACQUIRED(site, method, 0);
    JITPROV_PROBE_LOCK_RELEASED(site, method);
    JITPROV_PROBE_JIT_END(method, 2, 0x1000 + i, 64);  // tier: a constant operand
  }
  if (n < 0) {  // never: the tool attaches to every jitprov probe, so the binary has them all
    JITPROV_PROBE_LOCK_WAIT_BEGIN(site, method);
    JITPROV_PROBE_RUNDOWN_BEGIN(method, 0, 0);
    JITPROV_PROBE_RUNDOWN_END(method, 0, 0, 0);
  }
  std::printf("done %ld\n", n);
  return 0;
}
