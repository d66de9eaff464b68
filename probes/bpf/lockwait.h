/* Shared by lockwait.bpf.c and tools/jitprov_lockwait.cc: what the BPF side
 * aggregates, per CPU, for user space to sum. */
#ifndef JITPROV_LOCKWAIT_H
#define JITPROV_LOCKWAIT_H

#include <jitprov/trace_abi.h>

#define LW_SITES (JITPROV_LOCK_SITE_MAX + 1) /* lock sites 1..max; 0: unused (holder unknown) */
#define LW_TIERS JITPROV_TIER_COUNT
#define LW_BUCKETS 48   /* log2 buckets of nanoseconds, as jitprov::log2Bucket */

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
  LW_DROP_THREAD_MAP_FULL = 0, /* lost: no room to remember a thread's wait or JIT path */
  LW_INCOMPLETE_ACQUIRE = 1,   /* lock_acquired with no lock_wait_begin: began before attaching */
  LW_INCOMPLETE_RELEASE = 2,   /* lock_released with no lock_acquired: acquired before attaching */
  LW_INCOMPLETE_JIT = 3,       /* jit_end with no jit_begin: began before attaching */
  LW_BAD_ARG = 4,              /* lost: a site, tier or flag outside its range, or an argument unreadable */
  LW_DROP_KINDS = 5,
};

/* Per-thread state while a wait, a hold or a JIT path is in progress. */
struct lw_thread {
  unsigned long long wait_start;
  unsigned long long hold_start;
  unsigned long long jit_start;
  unsigned int site;
  unsigned int in_rundown;
  unsigned int blocked_by; /* the site that held the lock when the wait began; 0 unknown */
};

/* Per traced process: rundowns in progress (begun while attached, not yet ended) and
 * the site that holds the lock now (0: free, or acquired before attaching). */
struct lw_proc {
  unsigned int rundowns;
  unsigned int holder_site;
};

/* A rundown in progress, by process and id. */
struct lw_rundown_key {
  unsigned int tgid;
  unsigned int pad;
  unsigned long long rundown_id;
};

/* Waits of one site blamed on the site that held the lock when they began. */
struct lw_blame {
  unsigned long long count;
  unsigned long long total_ns;
  unsigned long long max_ns;
};

#endif
