// SPDX-License-Identifier: MIT
#include "rcu.h"

namespace jitprov::rcu {

#if defined(__SANITIZE_THREAD__)
char grace_period_clock;
#endif

void retire(rcu_head* head, void (*reclaim)(rcu_head*)) noexcept {
  tsanRelease();
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
void beforeFork() noexcept {
  urcu_bp_call_rcu_before_fork();
  urcu_bp_before_fork();
}
void afterForkParent() noexcept {
  urcu_bp_after_fork_parent();
  urcu_bp_call_rcu_after_fork_parent();
}
void afterForkChild() noexcept {
  urcu_bp_after_fork_child();  // prunes the readers that are not in the child
  urcu_bp_call_rcu_after_fork_child();
}

}  // namespace jitprov::rcu
