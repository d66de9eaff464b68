#include "rcu.h"

namespace jitprov::rcu {

#if defined(__SANITIZE_THREAD__)
char grace_period_clock;
#endif

namespace {
struct ThreadRegistration {
  bool registered = false;
  ~ThreadRegistration() {
    if (registered) urcu_memb_unregister_thread();
  }
};
thread_local ThreadRegistration t_registration;
}  // namespace

void ensureThreadRegistered() noexcept {
  if (!t_registration.registered) {
    urcu_memb_register_thread();
    t_registration.registered = true;
  }
}

void retire(rcu_head* head, void (*reclaim)(rcu_head*)) noexcept {
  ensureThreadRegistered();  // call_rcu reads per-thread state under a read lock
  tsanRelease();
  urcu_memb_call_rcu(head, reclaim);
}

void barrier() noexcept {
  ensureThreadRegistered();
  urcu_memb_barrier();
  tsanAcquire();  // every callback's ReclaimScope released before it returned
}

}  // namespace jitprov::rcu
