// SPDX-License-Identifier: MIT
/* BPF C with libbpf's map macros, which clang-format misreads: kept as written. */
/* clang-format off */
/* jitprov-lockwait's BPF side: attached to two jitprov USDT probes (libbpf USDT
 * support; the probes' semaphores are raised by the kernel while attached).
 *
 * The runtime measures each lock acquisition and each JIT path itself while a tracer is
 * attached, and reports it whole at its end: lock_released carries the wait and hold
 * times, the rundown state as the wait began and the site that held the lock then;
 * jit_end carries the JIT path's latency and whether a rundown ran during it. So one
 * probe hit per acquisition and one per JIT path give every figure: no clock read here,
 * no per-thread state, nothing left half-done by attaching in the middle of a wait or a
 * rundown. Per lock site and rundown state the programs aggregate wait and hold times,
 * per tier the JIT-path latency, into per-CPU log2 histograms that user space sums.
 * A sample that cannot be used is counted in `drops`. With emit_waits set (jitprov-lockwait
 * --waits), each acquisition that waited also goes to user space as one record in the
 * `waits` ring buffer; a record it has no room for is counted in `drops`
 * (LW_WAIT_RECORD_LOST), never silently lost. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "lockwait.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Knobs, set before load. */
const volatile unsigned int target_tgid = 0; /* 0: any process */
/* The pid namespace target_tgid and the waits' tids are numbered in: the tool's own
 * (the device and inode of its /proc/self/ns/pid), which is not the kernel's first one
 * when the tool runs in a container; 0: the first one. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile unsigned int emit_waits = 0;  /* 1: a record per wait into `waits` */
/* With tree_root set (--tree PID): only the processes that descend from PID (PID
 * included: `jitprov record --lockwait` gives its own pid, the parent of CMD), numbered
 * as the tool numbers them: in the pid namespace at pidns_level (its /proc/self/ns/pid is
 * pidns_ino). */
const volatile unsigned int tree_root = 0;
const volatile unsigned int pidns_level = 0;
#define LW_TREE_DEPTH 32

/* Per-wait records (struct lw_wait); user space sizes it before load (a page when off). */
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} waits SEC(".maps");

/* [waiting site][holder site] (holder 0: unknown). */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LW_SITES * LW_SITES);
  __type(key, __u32);
  __type(value, struct lw_blame);
} blame SEC(".maps");

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

/* The number of pid p in the tool's pid namespace (at pidns_level, its inode pidns_ino);
 * 0 when it has none there. */
static __always_inline __u32 nr_in_ns(struct pid* p) {
  if (!p || BPF_CORE_READ(p, level) < pidns_level) return 0;
  struct upid u = {};
  if (bpf_core_read(&u, sizeof(u), &p->numbers[pidns_level]) != 0) return 0;
  if (pidns_ino != 0 && BPF_CORE_READ(u.ns, ns.inum) != pidns_ino) return 0;
  return (__u32)u.nr;
}

/* The process id of task t in the tool's pid namespace; 0 when it has none there. */
static __always_inline __u32 tgid_in_ns(struct task_struct* t) {
  return nr_in_ns(BPF_CORE_READ(t, group_leader, thread_pid));
}

/* The current task's (tgid << 32 | pid) as the tool numbers them; 0 when it cannot be
 * numbered there (a task outside the tool's pid namespace). A task of the tool's own
 * namespace by the helper; one of a namespace below it (a container's process traced
 * from the host) by its struct pid's number at the tool's level: the helper numbers a
 * task only in the namespace it is in. */
static __always_inline __u64 current_ids(void) {
  if (pidns_ino == 0) return bpf_get_current_pid_tgid();
  struct bpf_pidns_info ns = {};
  if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) == 0) return ((__u64)ns.tgid << 32) | ns.pid;
  struct task_struct* t = bpf_get_current_task_btf();
  const __u32 tgid = tgid_in_ns(t), pid = nr_in_ns(BPF_CORE_READ(t, thread_pid));
  return tgid == 0 || pid == 0 ? 0 : ((__u64)tgid << 32) | pid;
}

static __always_inline int in_tree(void) {
  struct task_struct* t = bpf_get_current_task_btf();
  for (int i = 0; i < LW_TREE_DEPTH && t; i++) {
    if (tgid_in_ns(t) == tree_root) return 1;
    struct task_struct* parent = BPF_CORE_READ(t, real_parent);
    if (parent == t) break; /* the first process */
    t = parent;
  }
  return 0;
}

static __always_inline int mine(void) {
  if (tree_root != 0) return in_tree();
  return target_tgid == 0 || (current_ids() >> 32) == target_tgid;
}

/* A duration the runtime did not measure (trace_abi.h). */
#define LW_UNMEASURED JITPROV_UNMEASURED_NS

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

/* Argument n (0-based) of the hit whose spec is `spec`, into *out (sign-extended for a
 * signed argument); -1 when it cannot be read: every program counts that as a bad
 * argument (bpf_usdt_arg() would give 0, a valid tier or duration). */
static __always_inline int arg(struct pt_regs* ctx, struct __bpf_usdt_spec* spec, unsigned n, __u64* out) {
  /* Written on every path: the verifier refuses a program whose compiler read an
   * argument left unset on a failed path (undefined, so free to be any register). */
  *out = 0;
  if (!spec || n >= BPF_USDT_MAX_ARG_CNT || n >= (unsigned)spec->arg_cnt) return -1;
  struct __bpf_usdt_arg_spec* a = &spec->args[n];
  unsigned long val;
  switch (a->arg_type) {
    case BPF_USDT_ARG_CONST:
      val = a->val_off;
      break;
    case BPF_USDT_ARG_REG:
      if (usdt_reg(ctx, a->reg_off, &val) != 0) return -1;
      break;
    case BPF_USDT_ARG_REG_DEREF:
      if (usdt_reg(ctx, a->reg_off, &val) != 0) return -1;
      if (bpf_probe_read_user(&val, sizeof(val), (void*)(val + a->val_off)) != 0) return -1;
      break;
    default:
      return -1;
  }
  val <<= a->arg_bitshift;
  *out = a->arg_signed ? (__u64)((long)val >> a->arg_bitshift) : (val >> a->arg_bitshift);
  return 0;
}

/* (site, method_id, wait_ns, hold_ns, in_rundown, blocked_by) */
SEC("usdt")
int lock_released(struct pt_regs* ctx) {
  if (!mine()) return 0;
  struct __bpf_usdt_spec* spec = usdt_spec(ctx);
  __u64 site = 0, wait = 0, hold = 0, in_rundown = 0, by = 0;
  if (arg(ctx, spec, 0, &site) || arg(ctx, spec, 2, &wait) || arg(ctx, spec, 3, &hold) ||
      arg(ctx, spec, 4, &in_rundown) || arg(ctx, spec, 5, &by) || site == 0 || site >= LW_SITES ||
      in_rundown > 1 || (by >= LW_SITES && by != JITPROV_BLOCKED_BY_UNKNOWN)) {
    count_drop(LW_BAD_ARG);
    return 0;
  }
  if (wait == LW_UNMEASURED || hold == LW_UNMEASURED) {
    count_drop(LW_UNMEASURED_LOCK);
    return 0;
  }
  __u32 key = (__u32)(in_rundown * LW_SITES + site);
  struct lw_site* s = bpf_map_lookup_elem(&site_stats, &key);
  if (s) {
    hist_add(&s->wait, wait);
    hist_add(&s->hold, hold);
  }
  if (by != 0) { /* it waited: blame the holder (index 0: unknown) */
    __u32 bkey = (__u32)(site * LW_SITES + (by == JITPROV_BLOCKED_BY_UNKNOWN ? 0 : by));
    struct lw_blame* b = bpf_map_lookup_elem(&blame, &bkey);
    if (b) {
      b->count++;
      b->total_ns += wait;
      if (wait > b->max_ns) b->max_ns = wait;
    }
    if (emit_waits) {
      struct lw_wait* r = bpf_ringbuf_reserve(&waits, sizeof(*r), 0);
      if (!r) {
        count_drop(LW_WAIT_RECORD_LOST);
        return 0;
      }
      r->begin_ns = bpf_ktime_get_ns() - hold - wait;
      r->wait_ns = wait;
      r->hold_ns = hold;
      r->tid = (__u32)current_ids();
      r->site = (unsigned char)site;
      r->blocked_by = (unsigned char)by;
      r->in_rundown = (unsigned char)in_rundown;
      r->pad = 0;
      bpf_ringbuf_submit(r, 0);
    }
  }
  return 0;
}

/* (method_id, tier, code_start, code_size, jit_ns, in_rundown) */
SEC("usdt")
int jit_end(struct pt_regs* ctx) {
  if (!mine()) return 0;
  struct __bpf_usdt_spec* spec = usdt_spec(ctx);
  __u64 tier = 0, ns = 0, in_rundown = 0;
  if (arg(ctx, spec, 1, &tier) || arg(ctx, spec, 4, &ns) || arg(ctx, spec, 5, &in_rundown) ||
      tier >= LW_TIERS || in_rundown > 1) {
    count_drop(LW_BAD_ARG);
    return 0;
  }
  if (ns == LW_UNMEASURED) {
    count_drop(LW_UNMEASURED_JIT);
    return 0;
  }
  __u32 key = (__u32)(in_rundown * LW_TIERS + tier);
  struct lw_hist* h = bpf_map_lookup_elem(&jit_stats, &key);
  if (h) hist_add(h, ns);
  return 0;
}
