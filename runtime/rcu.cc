#include "rcu.h"

// For liburcu's own per-thread "registered" flag (URCU_TLS(urcu_memb_reader)).
#include <urcu/static/urcu-memb.h>

#include <atomic>

namespace jitprov::rcu {

#if defined(__SANITIZE_THREAD__)
char grace_period_clock;
#endif

namespace {
// `registered`: the thread is known to liburcu (by us or by someone else); `ours`: we
// registered it, so we unregister it when the thread exits.
struct ThreadRegistration {
  bool registered = false;
  bool ours = false;
  ~ThreadRegistration() {
    if (ours) urcu_memb_unregister_thread();
  }
};
// initial-exec: see threadTag() in cvm_lock.cc.
thread_local ThreadRegistration t_registration __attribute__((tls_model("initial-exec")));
// Set once in a forked child (relaxed: written by the child's only thread, in its
// fork handler, before anything else runs there).
std::atomic<bool> g_forked_child{false};
std::atomic<uint64_t> g_leaked{0};
}  // namespace

void ensureThreadRegistered() noexcept {
  if (t_registration.registered) return;
  // The host (or another copy of jitprov in the process) may use liburcu-memb too and
  // have registered this thread already: registering twice is an error in liburcu.
  if (!URCU_TLS(urcu_memb_reader).registered) {
    urcu_memb_register_thread();
    t_registration.ours = true;
  }
  t_registration.registered = true;
}

void retire(rcu_head* head, void (*reclaim)(rcu_head*)) noexcept {
  if (g_forked_child.load(std::memory_order_relaxed)) {
    g_leaked.fetch_add(1, std::memory_order_relaxed);  // see rcu.h: never reclaimed in a child
    return;
  }
  ensureThreadRegistered();  // call_rcu reads per-thread state under a read lock
  tsanRelease();
  urcu_memb_call_rcu(head, reclaim);
}

bool canWait() noexcept {
  if (g_forked_child.load(std::memory_order_relaxed)) return false;
  ensureThreadRegistered();
  return !urcu_memb_read_ongoing();
}

bool synchronize() noexcept {
  if (!canWait()) return false;
  urcu_memb_synchronize_rcu();
  tsanAcquire();  // every read section that could hold the memory has ended
  return true;
}

void barrier() noexcept {
  if (g_forked_child.load(std::memory_order_relaxed)) return;
  ensureThreadRegistered();
  urcu_memb_barrier();
  tsanAcquire();  // every callback's ReclaimScope released before it returned
}

// liburcu's call_rcu threads pause across the fork (their state is rebuilt in the child).
void beforeFork() noexcept { urcu_memb_call_rcu_before_fork(); }
void afterForkParent() noexcept { urcu_memb_call_rcu_after_fork_parent(); }
void afterForkChild() noexcept {
  urcu_memb_call_rcu_after_fork_child();
  g_forked_child.store(true, std::memory_order_relaxed);
}
uint64_t leakedInChild() noexcept { return g_leaked.load(std::memory_order_relaxed); }
bool inForkedChild() noexcept { return g_forked_child.load(std::memory_order_relaxed); }

}  // namespace jitprov::rcu
