/* SPDX-License-Identifier: MIT */
// CvmLock: the one process-wide code-version-manager lock, instrumented.
//
// Every acquisition names its LockSite and the method it is for, and
//  - fires the USDT probes jitprov:lock_wait_begin / lock_acquired / lock_released
//    (each behind its own semaphore, so they cost a load when nobody is attached);
//  - when stats are on, or a tracer is attached to lock_released, measures the wait and
//    the hold (lock_released reports them, with the rundown state and the site that held
//    the lock when the wait began); with stats on, records them in per-site log2
//    histograms, split by whether a rundown was running when the wait began.
// Update-side code asserts the lock is held with JITPROV_ASSERT_HELD (debug builds).
#pragma once

#include <jitprov/lock_stats.h>
#include <jitprov/clock.h>
#include <jitprov/types.h>

#include <atomic>
#include <cassert>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>

namespace jitprov {

// A log2 histogram of the CVM lock's statistics. One writer at a time: the lock's
// holder records before it releases, so an update is plain relaxed loads and stores,
// no read-modify-write (no locked instruction, no compare-and-swap loop), and the
// histograms' cache lines travel with the lock's. Readers load the
// counters relaxed: a snapshot taken while the holder records may be off by that one
// update, which is fine for statistics (no decision is taken on them inside the runtime).
class AtomicHist {
 public:
  // Caller holds the CVM lock (the one writer).
  void record(uint64_t ns) noexcept;
  HistSnapshot snapshot() const noexcept;
  void reset() noexcept;

 private:
  std::atomic<uint64_t> count_{0}, total_{0}, max_{0};
  std::atomic<uint64_t> buckets_[kHistBuckets] = {};
};

class CvmLock {
 public:
  explicit CvmLock(bool stats) : stats_(stats), hists_(stats ? std::make_unique<Histograms>() : nullptr) {}

  class Guard {
   public:
    Guard(CvmLock& lock, LockSite site, uint64_t method_id) noexcept;
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    // The method the lock is held for, when the holder learns it under the lock (the
    // release probe reports it; the wait and acquisition ones fired with the first).
    void label(uint64_t method_id) noexcept { method_id_ = method_id; }

   private:
    CvmLock& lock_;
    uint64_t method_id_;
    uint64_t wait_start_ = 0;
    uint64_t acquired_ = 0;
    LockSite site_;
    uint8_t blocked_by_ = 0;  // lock_released's blocked_by: 0 no wait, else the holder's site (or unknown)
    bool in_rundown_;
    bool contended_ = false;
    bool timed_;  // wait_start_ and acquired_ were taken
  };

  // Whether a rundown ran at some time between two marks (JIT paths' "during a rundown").
  struct RundownMark {
    uint64_t starts;
    bool active;
  };
  RundownMark rundownMark() const noexcept {
    return {rundown_starts_.load(std::memory_order_relaxed), rundowns_.load(std::memory_order_relaxed) > 0};
  }
  static bool rundownBetween(RundownMark a, RundownMark b) noexcept {
    return a.active || b.active || a.starts != b.starts;
  }

  bool heldByThisThread() const noexcept;
  // fork() handlers only (fork.cc): held across fork() so that no mutation is half done
  // in the child.
  void lockForFork() noexcept { mu_.lock(); }
  void unlockAfterFork() noexcept { mu_.unlock(); }
  LockStatsSnapshot snapshot() const noexcept;
  void resetStats() noexcept;
  // relaxed: a plain counter consulted only to label statistics.
  void rundownActive(bool active) noexcept {
    if (active) rundown_starts_.fetch_add(1, std::memory_order_relaxed);
    rundowns_.fetch_add(active ? 1 : -1, std::memory_order_relaxed);
  }

 private:
  // What every acquisition and release touches, in one cache line (40 + 1 + 1 + 4 + 8
  // + 8 bytes): a JIT thread whose caches its compiler keeps cold fetches it once.
  alignas(64) std::mutex mu_;
  const bool stats_;
  // The holder's LockSite, stored after it acquires and cleared before it releases; read
  // by a thread whose try-lock failed, to say what it waits behind. relaxed: a label.
  std::atomic<uint8_t> holder_site_{0};
  std::atomic<int> rundowns_{0};
  // Written by the holder after lock / before unlock; read by the same thread's
  // assertions. relaxed: a thread only ever compares it against itself.
  std::atomic<uint64_t> owner_{0};
  std::atomic<uint64_t> rundown_starts_{0};
  // The statistics' histograms (14.7 KB), out of line: inline, they put the registry's
  // other fields that a publication touches pages away from the lock (each page a TLB
  // miss on a thread whose caches its compiler keeps cold). Null without statistics.
  struct Histograms {
    AtomicHist wait[2][kLockSiteMax + 1];
    AtomicHist hold[2][kLockSiteMax + 1];
  };
  const std::unique_ptr<Histograms> hists_;
};

#ifndef NDEBUG
#define JITPROV_ASSERT_HELD(lock) assert((lock).heldByThisThread())
#else
#define JITPROV_ASSERT_HELD(lock) ((void)0)
#endif

}  // namespace jitprov
