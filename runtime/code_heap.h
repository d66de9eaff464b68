// CodeHeap: the simulated executable-code heap. Hands out address ranges in a reserved
// (never mapped) part of the address space, so that code_start values look like real
// JIT code addresses and can be checked for overlap.
//
// Invariants:
//  - live ranges never overlap;
//  - a freed range is reused only after the caller freed it, and the registry frees a
//    version's range only from its RCU reclamation callback, i.e. after a grace period
//    following the unload: a lock-free reader holding the old version never sees its
//    address handed to another version.
// Thread-safety: allocate() and release() take the heap's own mutex (allocate is called
// under the CVM lock, release from the call_rcu thread).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace jitprov {

class CodeHeap {
 public:
  static constexpr uint64_t kBase = 0x7f3a00000000ULL;
  static constexpr uint64_t kLimit = kBase + (uint64_t{64} << 30);  // 64 GiB of code
  static constexpr uint64_t kAlign = 16;

  // 0 when the heap is exhausted. size > 0.
  uint64_t allocate(uint32_t size);
  void release(uint64_t start, uint32_t size);

  uint64_t liveBytes() const;
  uint64_t freeRanges() const;

  // fork() handlers only (fork.cc): a reclamation callback may be releasing a range.
  void lockForFork() noexcept { mu_.lock(); }
  void unlockAfterFork() noexcept { mu_.unlock(); }

 private:
  static uint64_t rounded(uint32_t size) { return (uint64_t{size} + kAlign - 1) & ~(kAlign - 1); }

  mutable std::mutex mu_;
  uint64_t bump_ = kBase;    // guarded by mu_
  uint64_t live_bytes_ = 0;  // guarded by mu_
  // Free ranges by rounded size (best fit; a larger range is split). Guarded by mu_.
  std::multimap<uint64_t, uint64_t> free_by_size_;
};

}  // namespace jitprov
