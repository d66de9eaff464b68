// Safe memory reclamation for the lock-free read side, on liburcu.
//
// Flavour: urcu-memb. Readers here are ordinary threads of the host runtime (JIT
// threads, the rundown thread, any thread asking for an entry point):
//  - QSBR would make every such thread announce quiescent states, which a host cannot
//    promise for threads it does not control;
//  - urcu-signal takes a signal from the host;
//  - urcu-mb puts a full fence in every read_lock;
//  - memb's read side is a thread-local counter and compiler barriers; the grace
//    period pays instead, with sys_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED).
// A thread is registered with liburcu the first time it enters a read section (or
// retires memory) and unregistered when it exits.
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

#include <urcu/urcu-memb.h>

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

// Registers the calling thread with liburcu once; unregisters it at thread exit.
void ensureThreadRegistered() noexcept;

// RAII read-side critical section. Nests. Pointers loaded inside stay valid until the
// outermost section ends.
class ReadSection {
 public:
  ReadSection() noexcept {
    ensureThreadRegistered();
    urcu_memb_read_lock();
  }
  ~ReadSection() {
    tsanRelease();
    urcu_memb_read_unlock();
  }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;
};

// Queues `reclaim(head)` to run after a grace period: once every read section that
// might have loaded a pointer to the object has ended. The object must already be
// unreachable for new readers. `reclaim` must open a ReclaimScope first thing.
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
// before. False, without waiting, when that is impossible: inside a read section, or in
// a forked child (then retire() instead).
bool synchronize() noexcept;

// Waits until every callback retired so far has run. Not from inside a read section.
void barrier() noexcept;

// Whether this thread may wait for reclamation (synchronize(), barrier()): not inside a
// read section (it would wait for itself), nor in a forked child (nothing is reclaimed
// there).
bool canWait() noexcept;

// fork(): the child of a fork does not reclaim what it retires. A thread of the parent
// that was inside a read section at the fork does not exist in the child, so its section
// never ends there, and a grace period in the child may never complete. In the child,
// retire() keeps the memory (counted by leakedInChild()) and barrier() returns at once.
// Callbacks the parent had queued move to the child's call_rcu thread (liburcu) and may
// still run there: so a runtime destroyed in a child leaks its state instead of freeing
// it under them (~Runtime). fork.cc calls these from its pthread_atfork handlers.
void beforeFork() noexcept;
void afterForkParent() noexcept;
void afterForkChild() noexcept;
uint64_t leakedInChild() noexcept;
bool inForkedChild() noexcept;

}  // namespace jitprov::rcu
