// SPDX-License-Identifier: MIT
/* jitprov-lockwait's BPF side: attached to the jitprov USDT probes (libbpf USDT
 * support; the probes' semaphores are raised by the kernel while attached).
 *
 * Per lock site and rundown state it aggregates wait (lock_wait_begin ->
 * lock_acquired) and hold (lock_acquired -> lock_released) times, and per tier the
 * JIT-path latency (jit_begin -> jit_end), into per-CPU log2 histograms that user
 * space sums. Nothing goes through a ring buffer, so nothing can overflow one; every
 * other way to lose or miss a sample is counted in `drops`. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "lockwait.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Knobs, set before load. */
const volatile unsigned int target_tgid = 0; /* 0: any process */

/* Per process: its rundowns in progress and its lock's holder (lw_proc). Rundown state
 * is per process and per rundown id: a rundown_end whose begin was not seen (attached in
 * the middle of it) changes nothing, and processes never share a state. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u32);
  __type(value, struct lw_proc);
} procs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct lw_rundown_key);
  __type(value, __u8);
} rundowns SEC(".maps");

/* [waiting site][holder site] (holder 0: unknown). */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LW_SITES * LW_SITES);
  __type(key, __u32);
  __type(value, struct lw_blame);
} blame SEC(".maps");

/* Per-thread state in task-local storage: one pointer away from the task (no hash
 * lookup on every probe hit), no size limit to overflow, freed when the thread exits. */
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct lw_thread);
} threads SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2 * LW_SITES); /* [in_rundown][site] */
  __type(key, __u32);
  __type(value, struct lw_site);
} site_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2 * LW_TIERS); /* [in_rundown][tier] */
  __type(key, __u32);
  __type(value, struct lw_hist);
} jit_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LW_DROP_KINDS);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

static __always_inline void count_drop(__u32 kind) {
  __u64* d = bpf_map_lookup_elem(&drops, &kind);
  if (d) *d += 1;
}

/* With -p PID (target_tgid set) the one process's state is a global: no helper call,
 * no hash lookup on every probe hit. */
struct lw_proc target_proc = {};

static __always_inline struct lw_proc* proc_state(int create) {
  if (target_tgid != 0) return &target_proc; /* mine() already checked the tgid */
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  struct lw_proc* p = bpf_map_lookup_elem(&procs, &tgid);
  if (!p && create) {
    struct lw_proc zero = {};
    bpf_map_update_elem(&procs, &tgid, &zero, BPF_NOEXIST);
    p = bpf_map_lookup_elem(&procs, &tgid);
    if (!p) count_drop(LW_DROP_THREAD_MAP_FULL);
  }
  return p;
}

static __always_inline unsigned int in_rundown(void) {
  struct lw_proc* p = proc_state(0);
  return p && p->rundowns > 0;
}

static __always_inline int mine(void) {
  return target_tgid == 0 || (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

static __always_inline __u32 log2_bucket(__u64 v) {
  __u32 b = 0;
  /* 64 - clz(v), bounded for the verifier */
#pragma unroll
  for (int i = 0; i < 6; i++) {
    __u32 shift = 32 >> i;
    if (v >> shift) {
      v >>= shift;
      b += shift;
    }
  }
  b += v ? 1 : 0;
  return b < LW_BUCKETS ? b : LW_BUCKETS - 1;
}

static __always_inline void hist_add(struct lw_hist* h, __u64 ns) {
  h->count++;
  h->total_ns += ns;
  if (ns > h->max_ns) h->max_ns = ns;
  __u32 b = log2_bucket(ns);
  if (b < LW_BUCKETS) h->buckets[b]++;
}

static __always_inline struct lw_thread* thread_state(int create) {
  struct lw_thread* t = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
                                             create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
  if (!t && create) count_drop(LW_DROP_THREAD_MAP_FULL); /* out of memory for it */
  return t;
}

/* The arguments a program uses, from the spec libbpf recorded for the probe site
 * (usdt.bpf.h's __bpf_usdt_specs, found by the attach cookie), looked up once per hit.
 * bpf_usdt_arg() would look the spec up again for every argument and read each
 * register with a bpf_probe_read_kernel() call; here a register is a plain load from
 * the context at a constant offset (one inline-asm load per register, so that the
 * compiler cannot merge the cases into a load at a variable offset, which the verifier
 * refuses). BPF_USDT would also fetch every declared argument: the programs below
 * fetch only those they use. */
static __always_inline struct __bpf_usdt_spec* usdt_spec(struct pt_regs* ctx) {
  int id = __bpf_usdt_spec_id(ctx);
  if (id < 0) return 0;
  return bpf_map_lookup_elem(&__bpf_usdt_specs, &id);
}

#define LW_REG(f)                                                                          \
  case __builtin_offsetof(struct pt_regs, f):                                              \
    asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(v) : "r"(ctx), "i"(__builtin_offsetof(struct pt_regs, f))); \
    break;

static __always_inline int usdt_reg(struct pt_regs* ctx, short off, unsigned long* out) {
  unsigned long v;
  switch (off) {
    LW_REG(r15) LW_REG(r14) LW_REG(r13) LW_REG(r12) LW_REG(bp) LW_REG(bx) LW_REG(r11) LW_REG(r10)
    LW_REG(r9) LW_REG(r8) LW_REG(ax) LW_REG(cx) LW_REG(dx) LW_REG(si) LW_REG(di) LW_REG(ip) LW_REG(sp)
    default:
      return -1;
  }
  *out = v;
  return 0;
}

/* Argument n (0-based) of the hit whose spec is `spec`; LW_ARG_UNREADABLE (-1) when it
 * cannot be read (bpf_usdt_arg() would give 0, a valid tier): every program counts that
 * as a bad argument, since no site, tier, flag or rundown id the runtime passes is -1. */
#define LW_ARG_UNREADABLE (-1L)
static __always_inline long arg(struct pt_regs* ctx, struct __bpf_usdt_spec* spec, unsigned n) {
  if (!spec || n >= BPF_USDT_MAX_ARG_CNT || n >= (unsigned)spec->arg_cnt) return LW_ARG_UNREADABLE;
  struct __bpf_usdt_arg_spec* a = &spec->args[n];
  unsigned long val;
  switch (a->arg_type) {
    case BPF_USDT_ARG_CONST:
      val = a->val_off;
      break;
    case BPF_USDT_ARG_REG:
      if (usdt_reg(ctx, a->reg_off, &val) != 0) return LW_ARG_UNREADABLE;
      break;
    case BPF_USDT_ARG_REG_DEREF:
      if (usdt_reg(ctx, a->reg_off, &val) != 0) return LW_ARG_UNREADABLE;
      if (bpf_probe_read_user(&val, sizeof(val), (void*)(val + a->val_off)) != 0) return LW_ARG_UNREADABLE;
      break;
    default:
      return LW_ARG_UNREADABLE;
  }
  val <<= a->arg_bitshift;
  return a->arg_signed ? (long)val >> a->arg_bitshift : (long)(val >> a->arg_bitshift);
}

SEC("usdt")
int lock_wait_begin(struct pt_regs* ctx) {  /* (site, method_id) */
  if (!mine()) return 0;
  int site = arg(ctx, usdt_spec(ctx), 0);
  if (site <= 0 || site >= LW_SITES) {
    count_drop(LW_BAD_ARG);
    return 0;
  }
  struct lw_thread* t = thread_state(1);
  if (!t) return 0;
  t->wait_start = bpf_ktime_get_ns();
  t->site = site;
  struct lw_proc* p = proc_state(0);
  t->in_rundown = p && p->rundowns > 0;
  t->blocked_by = p ? p->holder_site : 0;
  return 0;
}

/* contended = 0: the lock was free, no lock_wait_begin fired: a wait of 0 ns.
 * contended = 1: the wait began at this thread's lock_wait_begin; none seen (attached
 * in the middle of a wait) is counted as incomplete, never as a wait. */
SEC("usdt")
int lock_acquired(struct pt_regs* ctx) {  /* (site, method_id, contended) */
  if (!mine()) return 0;
  struct __bpf_usdt_spec* spec = usdt_spec(ctx);
  int site = arg(ctx, spec, 0);
  int contended = arg(ctx, spec, 2);
  if (site <= 0 || site >= LW_SITES || contended < 0 || contended > 1) {
    count_drop(LW_BAD_ARG);
    return 0;
  }
  __u64 now = bpf_ktime_get_ns();
  struct lw_thread* t = thread_state(!contended);
  __u64 wait = 0;
  if (!t) {
    if (contended) count_drop(LW_INCOMPLETE_ACQUIRE);
    return 0;
  }
  struct lw_proc* p = proc_state(1);
  if (p) p->holder_site = site; /* this thread holds it now */
  if (!contended) {
    t->site = site;
    t->in_rundown = p && p->rundowns > 0;
  } else if (t->wait_start == 0 || t->site != (__u32)site) {
    count_drop(LW_INCOMPLETE_ACQUIRE);
    t->hold_start = 0;
    return 0;
  } else {
    wait = now - t->wait_start;
    __u32 bkey = t->site * LW_SITES + (t->blocked_by < LW_SITES ? t->blocked_by : 0);
    struct lw_blame* b = bpf_map_lookup_elem(&blame, &bkey);
    if (b) {
      b->count++;
      b->total_ns += wait;
      if (wait > b->max_ns) b->max_ns = wait;
    }
  }
  __u32 key = t->in_rundown * LW_SITES + t->site;
  struct lw_site* s = bpf_map_lookup_elem(&site_stats, &key);
  if (s) hist_add(&s->wait, wait);
  t->wait_start = 0;
  t->hold_start = now;
  return 0;
}

SEC("usdt")
int lock_released(struct pt_regs* ctx) {  /* (site, method_id) */
  if (!mine()) return 0;
  int site = arg(ctx, usdt_spec(ctx), 0);
  __u64 now = bpf_ktime_get_ns();
  struct lw_proc* p = proc_state(0);
  if (p) p->holder_site = 0;
  if (site <= 0 || site >= LW_SITES) {
    count_drop(LW_BAD_ARG);
    return 0;
  }
  struct lw_thread* t = thread_state(0);
  if (!t || t->hold_start == 0 || t->site != (__u32)site) {
    count_drop(LW_INCOMPLETE_RELEASE);
    return 0;
  }
  __u32 key = t->in_rundown * LW_SITES + t->site;
  struct lw_site* s = bpf_map_lookup_elem(&site_stats, &key);
  if (s) hist_add(&s->hold, now - t->hold_start);
  t->hold_start = 0;
  return 0;
}

SEC("usdt")
int jit_begin(struct pt_regs* ctx) {  /* (method_id, tier): neither is needed here */
  if (!mine()) return 0;
  struct lw_thread* t = thread_state(1);
  if (t) t->jit_start = bpf_ktime_get_ns();
  return 0;
}

SEC("usdt")
int jit_end(struct pt_regs* ctx) {  /* (method_id, tier, code_start, code_size) */
  if (!mine()) return 0;
  int tier = arg(ctx, usdt_spec(ctx), 1);
  __u64 now = bpf_ktime_get_ns();
  struct lw_thread* t = thread_state(0);
  if (!t || t->jit_start == 0) {
    count_drop(LW_INCOMPLETE_JIT);
    return 0;
  }
  if (tier < 0 || tier >= LW_TIERS) {
    count_drop(LW_BAD_ARG);
    t->jit_start = 0;
    return 0;
  }
  __u32 key = (in_rundown() ? LW_TIERS : 0) + tier;
  struct lw_hist* h = bpf_map_lookup_elem(&jit_stats, &key);
  if (h) hist_add(h, now - t->jit_start);
  t->jit_start = 0;
  return 0;
}

SEC("usdt")
int rundown_begin(struct pt_regs* ctx) {  /* (rundown_id, mode, trigger) */
  if (!mine()) return 0;
  __u64 rundown_id = arg(ctx, usdt_spec(ctx), 0);
  if (rundown_id == (__u64)LW_ARG_UNREADABLE) {
    count_drop(LW_BAD_ARG);
    return 0;
  }
  struct lw_rundown_key k = {.tgid = bpf_get_current_pid_tgid() >> 32, .rundown_id = rundown_id};
  __u8 one = 1;
  if (bpf_map_update_elem(&rundowns, &k, &one, BPF_NOEXIST) != 0) return 0; /* seen, or no room */
  struct lw_proc* p = proc_state(1);
  if (p) __sync_fetch_and_add(&p->rundowns, 1);
  return 0;
}

SEC("usdt")
int rundown_end(struct pt_regs* ctx) {  /* (rundown_id, methods, versions, skipped) */
  if (!mine()) return 0;
  __u64 rundown_id = arg(ctx, usdt_spec(ctx), 0);
  if (rundown_id == (__u64)LW_ARG_UNREADABLE) {
    count_drop(LW_BAD_ARG);
    return 0;
  }
  struct lw_rundown_key k = {.tgid = bpf_get_current_pid_tgid() >> 32, .rundown_id = rundown_id};
  if (bpf_map_delete_elem(&rundowns, &k) != 0) return 0; /* began before we attached */
  struct lw_proc* p = proc_state(0);
  if (p && p->rundowns > 0) __sync_fetch_and_add(&p->rundowns, -1);
  return 0;
}
