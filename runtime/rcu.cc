// SPDX-License-Identifier: MIT
#include "rcu.h"

#include <new>
#include <shared_mutex>

namespace jitprov::rcu {

namespace {
// retire()'s enqueue against fork(): liburcu's call_rcu_before_fork() pauses the call_rcu
// threads but does not stop other threads enqueueing. An enqueue is two steps (the
// queue's tail swapped, then the old tail's next set); a fork between them leaves the
// child a queue whose next pointer nobody will set, and the child's call_rcu thread
// waits on it for good, with every rcu_barrier() behind it (a fork test's child hung in
// urcu_bp_barrier, 2026-12-05). Shared by every enqueue, exclusive across fork().
// Never destroyed: fork() may come while the process exits.
std::shared_mutex& enqueueMutex() {
  static auto* mu = new std::shared_mutex();
  return *mu;
}
}  // namespace

#if defined(__SANITIZE_THREAD__)
char grace_period_clock;
#endif

void retire(rcu_head* head, void (*reclaim)(rcu_head*)) noexcept {
  tsanRelease();
  std::shared_lock<std::shared_mutex> no_fork(enqueueMutex());
  urcu_bp_call_rcu(head, reclaim);
}

bool canWait() noexcept { return !urcu_bp_read_ongoing(); }

void registerThread() noexcept {
  // initial-exec: see cvm_lock.cc. liburcu-bp keeps a thread registered until it ends
  // (and the thread that forks, in the child), as long as this flag lives.
  static thread_local __attribute__((tls_model("initial-exec"))) bool registered = false;
  if (registered) return;
  urcu_bp_read_lock();
  urcu_bp_read_unlock();
  registered = true;
}

bool synchronize() noexcept {
  if (!canWait()) return false;  // would wait for itself
  urcu_bp_synchronize_rcu();
  tsanAcquire();  // every read section that could hold the memory has ended
  return true;
}

void barrier() noexcept {
  urcu_bp_barrier();
  tsanAcquire();  // every callback's ReclaimScope released before it returned
}

// The call_rcu threads pause first: one of them may be inside a grace period, which
// urcu_bp_before_fork() (taking the grace-period lock) would otherwise wait for.
// The enqueues end first: one may need liburcu's locks (a thread's first read section,
// the process's first call_rcu), which the two calls after take.
void beforeFork() noexcept {
  enqueueMutex().lock();
  urcu_bp_call_rcu_before_fork();
  urcu_bp_before_fork();
}
void afterForkParent() noexcept {
  urcu_bp_after_fork_parent();
  urcu_bp_call_rcu_after_fork_parent();
  enqueueMutex().unlock();
}
void afterForkChild() noexcept {
  urcu_bp_after_fork_child();  // prunes the readers that are not in the child
  urcu_bp_call_rcu_after_fork_child();
  // A fresh one, held by none: glibc's rwlock knows its writer by thread id, and the
  // forking thread has another one in the child (its unlock there would not unlock).
  new (&enqueueMutex()) std::shared_mutex();
}

}  // namespace jitprov::rcu
