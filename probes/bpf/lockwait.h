/* SPDX-License-Identifier: MIT */
/* Shared by lockwait.bpf.c and tools/lockwait/: what the BPF side
 * aggregates, per CPU, for user space to sum. */
#ifndef JITPROV_LOCKWAIT_H
#define JITPROV_LOCKWAIT_H

#include <jitprov/trace_abi.h>

#define LW_SITES (JITPROV_LOCK_SITE_MAX + 1) /* lock sites 1..max; 0: unused (holder unknown) */
#define LW_TIERS JITPROV_TIER_COUNT
#define LW_BUCKETS JITPROV_HIST_BUCKETS /* log2 buckets of nanoseconds, as jitprov::log2Bucket */

/* Histogram of one quantity. */
struct lw_hist {
  unsigned long long count;
  unsigned long long total_ns;
  unsigned long long max_ns;
  unsigned long long buckets[LW_BUCKETS];
};

/* One lock site in one rundown state. */
struct lw_site {
  struct lw_hist wait;
  struct lw_hist hold;
};

/* Where a sample can be lost or be incomplete (index into the `drops` map). */
enum lw_drop {
  LW_UNMEASURED_LOCK = 0,  /* an acquisition that began before the tracer attached: not measured */
  LW_UNMEASURED_JIT = 1,   /* a JIT path that began before the tracer attached: not measured */
  LW_BAD_ARG = 2,          /* lost: a site, tier or flag outside its range, or an argument unreadable */
  LW_WAIT_RECORD_LOST = 3, /* lost: a wait record the `waits` ring buffer had no room for */
  LW_DROP_KINDS = 4,
};

/* One lock acquisition that waited (blocked_by != 0), in the `waits` ring buffer when
 * the tool asked for them (--waits). */
struct lw_wait {
  unsigned long long begin_ns; /* CLOCK_MONOTONIC when the wait began: the probe's time - hold - wait */
  unsigned long long wait_ns;
  unsigned long long hold_ns;
  unsigned int tid;
  unsigned char site;
  unsigned char blocked_by; /* the holder's site then; JITPROV_BLOCKED_BY_UNKNOWN: unknown */
  unsigned char in_rundown; /* a rundown was running when it began */
  unsigned char pad;
};

/* Waits of one site blamed on the site that held the lock when they began. */
struct lw_blame {
  unsigned long long count;
  unsigned long long total_ns;
  unsigned long long max_ns;
};

#endif
