// SPDX-License-Identifier: MIT
#include "cvm_lock.h"

#include "jitprov_usdt.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace jitprov {

namespace {
// initial-exec: in libjitprov.so.1 the default (global-dynamic) model would call
// __tls_get_addr on every lock acquisition; jitprov's TLS is a few bytes of the static
// TLS surplus glibc keeps for dlopen()ed libraries.
uint64_t threadTag() noexcept {
  static thread_local __attribute__((tls_model("initial-exec"))) uint64_t tag = 0;
  if (tag == 0) tag = uint64_t(syscall(SYS_gettid));
  return tag;
}

}  // namespace

void AtomicHist::record(uint64_t ns) noexcept {
  // relaxed, load then store: the CVM lock orders the writers (see the class).
  count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  total_.store(total_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
  if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
  std::atomic<uint64_t>& b = buckets_[log2Bucket(ns)];
  b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void AtomicHist::reset() noexcept {
  count_.store(0, std::memory_order_relaxed);
  total_.store(0, std::memory_order_relaxed);
  max_.store(0, std::memory_order_relaxed);
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
}

HistSnapshot AtomicHist::snapshot() const noexcept {
  HistSnapshot s;
  s.count = count_.load(std::memory_order_relaxed);
  s.total_ns = total_.load(std::memory_order_relaxed);
  s.max_ns = max_.load(std::memory_order_relaxed);
  for (int i = 0; i < kHistBuckets; ++i) s.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
  return s;
}

CvmLock::Guard::Guard(CvmLock& lock, LockSite site, uint64_t method_id) noexcept
    : lock_(lock), method_id_(method_id), site_(site) {
  // Timed for the statistics, or for a tracer on lock_released (which reports the
  // durations): two clock reads for an uncontended acquisition, three for a contended
  // one. An uncontended acquisition (the try-lock succeeds) waits for nothing and fires
  // one probe (lock_acquired, contended 0); a contended one fires lock_wait_begin first.
  // The clock reads sit inside the probes, so that a tracer's own cost (a uprobe hit per
  // probe) is not counted as waiting.
  timed_ = lock_.stats_ || JITPROV_USDT_ENABLED(lock_released);
  // "During a rundown": one was running when the wait began (read after the failed
  // try-lock, with the holder's site, so that a wait blamed on the rundown is labelled
  // with it), or when an uncontended acquisition took the lock.
  if (lock_.mu_.try_lock()) {
    in_rundown_ = lock_.rundowns_.load(std::memory_order_relaxed) > 0;
    if (timed_) wait_start_ = acquired_ = monotonicNs();
  } else {
    contended_ = true;
    const uint8_t holder = lock_.holder_site_.load(std::memory_order_relaxed);
    // A rundown holding the lock is running, whatever the counter (it is decremented
    // after the rundown's release) says.
    in_rundown_ =
        holder == static_cast<uint8_t>(LockSite::kRundown) || lock_.rundowns_.load(std::memory_order_relaxed) > 0;
    blocked_by_ = holder != 0 ? holder : JITPROV_BLOCKED_BY_UNKNOWN;
    JITPROV_PROBE_LOCK_WAIT_BEGIN(static_cast<int>(site_), method_id_);
    if (timed_) wait_start_ = monotonicNs();
    lock_.mu_.lock();
    if (timed_) acquired_ = monotonicNs();
  }
  lock_.holder_site_.store(static_cast<uint8_t>(site_), std::memory_order_relaxed);
  JITPROV_PROBE_LOCK_ACQUIRED(static_cast<int>(site_), method_id_, contended_ ? 1 : 0);
  lock_.owner_.store(threadTag(), std::memory_order_relaxed);
}

CvmLock::Guard::~Guard() {
  const uint64_t released = timed_ ? monotonicNs() : 0;
  if (lock_.stats_) {  // before the release: the lock orders the histograms' writers
    const int r = in_rundown_ ? 1 : 0;
    const int s = static_cast<int>(site_);
    lock_.hists_->wait[r][s].record(acquired_ - wait_start_);
    lock_.hists_->hold[r][s].record(released - acquired_);
  }
  lock_.owner_.store(0, std::memory_order_relaxed);
  lock_.holder_site_.store(0, std::memory_order_relaxed);
  lock_.mu_.unlock();
  JITPROV_PROBE_LOCK_RELEASED(
      static_cast<int>(site_), method_id_, timed_ ? acquired_ - wait_start_ : JITPROV_USDT_UNMEASURED,
      timed_ ? released - acquired_ : JITPROV_USDT_UNMEASURED, in_rundown_ ? 1 : 0, blocked_by_);
}

bool CvmLock::heldByThisThread() const noexcept { return owner_.load(std::memory_order_relaxed) == threadTag(); }

void CvmLock::resetStats() noexcept {
  if (!hists_) return;                 // no statistics kept
  std::lock_guard<std::mutex> g(mu_);  // the histograms' writers hold it
  for (int r = 0; r < 2; ++r) {
    for (int site = 1; site <= kLockSiteMax; ++site) {
      hists_->wait[r][site].reset();
      hists_->hold[r][site].reset();
    }
  }
}

LockStatsSnapshot CvmLock::snapshot() const noexcept {
  LockStatsSnapshot s;
  if (!hists_) return s;  // no statistics kept: all zero
  for (int r = 0; r < 2; ++r) {
    for (int site = 1; site <= kLockSiteMax; ++site) {
      s.sites[r][site].wait = hists_->wait[r][site].snapshot();
      s.sites[r][site].hold = hists_->hold[r][site].snapshot();
    }
  }
  return s;
}

}  // namespace jitprov
