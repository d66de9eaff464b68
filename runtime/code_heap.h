/* SPDX-License-Identifier: MIT */
// CodeHeap: the simulated executable-code heap. Hands out address ranges in a reserved
// (never mapped) part of the address space, so that code_start values look like real
// JIT code addresses and can be checked for overlap.
//
// Invariants:
//  - live ranges never overlap;
//  - a freed range is reused only after the caller freed it, and the registry frees a
//    version's range only from its RCU reclamation callback, i.e. after a grace period
//    following the unload: a lock-free reader holding the old version never sees its
//    address handed to another version;
//  - free ranges never touch each other or the untouched top of the heap: release()
//    merges a range with its free neighbours (and gives it back to the top when it
//    ends there), so that memory freed in pieces serves a request as large as their
//    sum (without it, 4 GiB was refused with 62 GiB free in 2 GiB pieces).
// Thread-safety: allocate() and release() take the heap's own mutex (allocate is called
// under the CVM lock, release from the call_rcu thread).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>

namespace jitprov {

class CodeHeap {
 public:
  static constexpr uint64_t kBase = 0x7f3a00000000ULL;
  static constexpr uint64_t kLimit = kBase + (uint64_t{64} << 30);  // 64 GiB of code
  static constexpr uint64_t kAlign = 16;

  // 0 when the heap is exhausted. size > 0. O(log free ranges); allocates no memory.
  uint64_t allocate(uint32_t size);
  // O(log free ranges).
  void release(uint64_t start, uint32_t size);

  uint64_t liveBytes() const;
  uint64_t freeRanges() const;

  // fork() handlers only (fork.cc): a reclamation callback may be releasing a range.
  void lockForFork() noexcept { mu_.lock(); }
  void unlockAfterFork() noexcept { mu_.unlock(); }

 private:
  // The free ranges below bump_, twice: by end (-> start), to find a released range's
  // neighbours, and by size, for the best fit (the lowest address among equals). Keyed
  // by end, a range that allocate() splits (from its start) keeps its place there, so
  // that allocation (under the CVM lock) costs what it did before ranges merged: one
  // search and one reinsertion by size.
  using ByEnd = std::map<uint64_t, uint64_t>;
  struct Free {
    uint64_t size, start;
    ByEnd::iterator by_end;  // its entry by end; not part of the order
    bool operator<(const Free& o) const { return size != o.size ? size < o.size : start < o.start; }
  };
  using BySize = std::set<Free>;
  // A free range's entries, out of both indexes. Reused for a merged range, so that
  // merging allocates nothing.
  struct Entries {
    ByEnd::node_type by_end;
    BySize::node_type by_size;
  };

  static uint64_t rounded(uint32_t size) { return (uint64_t{size} + kAlign - 1) & ~(kAlign - 1); }
  void take(ByEnd::iterator it, Entries* e);
  // `next`: the free range above [start, end), or end().
  void put(Entries e, uint64_t start, uint64_t end, ByEnd::const_iterator next);

  mutable std::mutex mu_;
  uint64_t bump_ = kBase;    // guarded by mu_: the top; [bump_, kLimit) was never handed out
  uint64_t live_bytes_ = 0;  // guarded by mu_
  ByEnd free_by_end_;        // guarded by mu_
  BySize free_by_size_;      // guarded by mu_
};

}  // namespace jitprov
