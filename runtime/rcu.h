/* SPDX-License-Identifier: MIT */
// Safe memory reclamation for the lock-free read side, on liburcu.
//
// Flavour: urcu-bp ("bulletproof"). Readers here are ordinary threads of the host
// runtime (JIT threads, the rundown thread, any thread asking for an entry point), and
// the library is a guest in the host's process:
//  - QSBR would make every such thread announce quiescent states, which a host cannot
//    promise for threads it does not control;
//  - urcu-signal takes a signal from the host;
//  - urcu-mb puts a full fence in every read_lock;
//  - urcu-memb has the read side we want (a thread-local counter and compiler barriers,
//    the grace period paying with sys_membarrier) but no fork support: a parent thread
//    that was inside a read section at fork() stays registered, in that section, in the
//    child, whose grace periods then never end (its call_rcu thread hung in
//    synchronize_rcu, and every thread exit behind it: issue 22);
//  - urcu-bp has the same read side (membarrier on the grace-period side), registers a
//    thread on its first read section and unregisters it at thread exit by itself, and
//    has fork handlers (urcu_bp_before_fork and its two halves) that hold its locks
//    across fork() and, in the child, prune every reader but the forking thread. So the
//    child's grace periods complete and it reclaims like any process.
//
// ThreadSanitizer cannot see the ordering a grace period provides (it is made of
// membarrier and fences inside uninstrumented liburcu), so it would report the frees in
// reclamation callbacks as races with the readers' earlier loads. We teach it the real
// edge instead of suppressing reports: every read section ends with
// __tsan_release(&grace_period_clock), every retire() starts with the same release, and
// every reclamation callback runs inside a ReclaimScope, which acquires it on entry and
// releases it on exit (barrier() acquires it after liburcu's barrier returns). So TSan
// sees "everything readers and retirers did before" happen-before the free, which is
// exactly what call_rcu guarantees for readers that could reach the object. (It is a
// slight over-approximation, since it also orders readers that started after the
// object was unlinked; those cannot reach it, and AddressSanitizer builds would catch
// them if they did.) In builds without TSan the annotations compile to nothing.
#pragma once

#include <urcu/urcu-bp.h>

namespace jitprov::rcu {

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
extern char grace_period_clock;
inline void tsanRelease() noexcept { __tsan_release(&grace_period_clock); }
inline void tsanAcquire() noexcept { __tsan_acquire(&grace_period_clock); }
#else
inline void tsanRelease() noexcept {}
inline void tsanAcquire() noexcept {}
#endif

// RAII read-side critical section. Nests. Pointers loaded inside stay valid until the
// outermost section ends. The thread is registered by liburcu on its first one.
class ReadSection {
 public:
  ReadSection() noexcept { urcu_bp_read_lock(); }
  ~ReadSection() {
    tsanRelease();
    urcu_bp_read_unlock();
  }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;
};

// Registers this thread with liburcu-bp if it is not yet (its first read section does,
// taking liburcu's registry lock). Call it before taking a lock of ours under which a
// read section may open: fork() (fork.cc) takes liburcu's locks before ours, so a
// thread's first read section must not be taken under one of them.
void registerThread() noexcept;

// Queues `reclaim(head)` to run after a grace period: once every read section that
// might have loaded a pointer to the object has ended. The object must already be
// unreachable for new readers. `reclaim` must open a ReclaimScope first thing. Never
// with a lock that fork() takes (fork.cc), nor from a reclamation callback: fork() waits
// for the enqueues in progress before it takes those locks and pauses the callbacks.
void retire(rcu_head* head, void (*reclaim)(rcu_head*)) noexcept;

// Spans the body of every reclamation callback. For TSan: acquires the grace-period
// clock on entry (the readers' and retirer's accesses happen before the frees) and
// releases it on exit (the frees happen before barrier() returns).
class ReclaimScope {
 public:
  ReclaimScope() noexcept { tsanAcquire(); }
  ~ReclaimScope() { tsanRelease(); }
  ReclaimScope(const ReclaimScope&) = delete;
  ReclaimScope& operator=(const ReclaimScope&) = delete;
};

// Waits for a grace period (every read section that began before has ended), so that
// the caller may reclaim at once, inside a ReclaimScope, what it made unreachable
// before. False, without waiting, inside a read section (it would wait for itself).
bool synchronize() noexcept;

// Waits until every callback retired so far has run. Not from inside a read section.
void barrier() noexcept;

// Whether this thread may wait for reclamation (synchronize(), barrier()): not inside a
// read section (it would wait for itself).
bool canWait() noexcept;

// fork(): fork.cc calls these from its pthread_atfork handlers, around its own locks
// (beforeFork first, the after halves last). liburcu's call_rcu threads pause across the
// fork and its grace-period and registry locks are held, so that no grace period is
// half done in the copy; in the child the registry keeps only the forking thread and a
// new call_rcu thread takes over the callbacks queued before the fork (they free
// records that are unlinked in the child too).
void beforeFork() noexcept;
void afterForkParent() noexcept;
void afterForkChild() noexcept;

}  // namespace jitprov::rcu
