/* SPDX-License-Identifier: MIT */
/* The physical floor of an attached probe: what one bare uprobe hit costs on this
 * machine, on a 1-byte `nop` (int3 when attached) and on a 5-byte NOP (a call into the
 * uprobe trampoline on kernels that optimize it). Two functions that are nothing but
 * the site instruction and `ret`; tools/bench/lockwait-overhead attaches an empty
 * bpftrace probe to one of them.
 *   jitprov-uprobe-floor nop1|nop5 [CALLS]     prints "<ns per call>" */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((naked, noinline)) void jitprov_floor_site_nop1(void) { __asm__ volatile("nop\n\tret"); }
__attribute__((naked, noinline)) void jitprov_floor_site_nop5(void) { __asm__ volatile(".nops 5\n\tret"); }

int main(int argc, char** argv) {
  if (argc < 2 || (strcmp(argv[1], "nop1") != 0 && strcmp(argv[1], "nop5") != 0)) {
    fprintf(stderr, "usage: jitprov-uprobe-floor nop1|nop5 [CALLS]\n");
    return 2;
  }
  void (*volatile site)(void) = strcmp(argv[1], "nop1") == 0 ? jitprov_floor_site_nop1 : jitprov_floor_site_nop5;
  const long calls = argc > 2 ? atol(argv[2]) : 1000000;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < calls; ++i) site();
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)calls);
  return 0;
}
