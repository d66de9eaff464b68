/* SPDX-License-Identifier: MIT */
// HostKeyIndex: the host's keys of its methods (jitprov_method_desc.host_key) -> their
// method ids, for registerMethod's duplicate check and findMethod. Not thread-safe: its
// owner serialises every call (the registry's loader mutex; the JVM agent's qmu).
//
// A host with collectible code registers and forgets methods all the time (the .NET
// client: three in four loads are a method seen for the first time), so a lookup, an
// insertion and an erasure each cost one probe sequence in one flat array: open
// addressing, linear probing, at most half full, erasure by shifting the entries after
// it back (no tombstones, so lookups never slow down with erasures). A node-based
// std::unordered_map cost a division, a bucket load and a node load per lookup and an
// allocation per insertion, on the JIT path.
//
// Growth is incremental: a full array is not rehashed by the one insertion that finds it
// full, which held the registering thread (under the loader mutex) for the whole copy
// and the new array's page faults: 27 ms at the 131 073rd key on this VM (4 KB pages
// take 11 us each to fault in here; 8 MB of them). The insertion that doubles it makes
// the new array (calloc'd: a large one is freshly mapped, its pages faulted in as they
// are first written) and keeps the old one, and it and every later insertion move the
// entries of kMigrateSlots slots of the old array into the new one, until the old array
// is empty and freed. Meanwhile lookups try the new array, then the old; an erasure
// removes the key from the new array and marks it erased in the old (its value set to 0,
// its key kept so that the old array's probe sequences stay whole). The old array is
// drained long before the new one is half full (the next growth): it has twice as many
// slots as it holds entries, kMigrateSlots >= 2 of them go per insertion, and the new
// array takes as many insertions again before it is half full.
// The new array's pages are made present ahead of its random writes, a block of
// kPopulateBlock per insertion from its start (populate.h): a fault each cost 11-16 us
// here, a block 20 us.
//
// In the common layer: the runtime's index of host keys, and the JVM agent's set of the
// jmethodIDs whose names it queued (on HotSpot's Service Thread, where a node-based set
// cost a division and two cache misses a lookup).
#pragma once

#include <jitprov/populate.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace jitprov {

class HostKeyIndex {
 public:
  // Old slots whose entries an insertion moves while the old array drains.
  static constexpr size_t kMigrateSlots = 8;

  // The value stored for `key` (!= 0), or 0 when there is none.
  uint64_t find(uint64_t key) const noexcept {
    if (const uint64_t v = cur_.find(key); v != 0) return v;
    return old_.find(key);  // 0 when there is no old array, or the key was erased there
  }

  // Adds key (!= 0, not present) -> value (!= 0). Throws std::bad_alloc (nothing added).
  void insert(uint64_t key, uint64_t value) {
    if (2 * (size_ + 1) > cur_.capacity()) grow();
    migrate(kMigrateSlots);
    cur_.populateNext();
    cur_.insert(key, value);
    ++size_;
  }

  // Removes key if present.
  void erase(uint64_t key) noexcept {
    // A migrated key is in both arrays: counted once.
    const bool in_cur = cur_.erase(key);
    const bool in_old = old_.markErased(key);
    if (in_cur || in_old) --size_;
  }

  size_t size() const noexcept { return size_; }
  size_t bytes() const noexcept { return (cur_.capacity() + old_.capacity()) * sizeof(Slot); }
  // For tests: whether an old array is draining, and the most old slots one call moved.
  bool draining() const noexcept { return old_.capacity() != 0; }
  size_t largestStep() const noexcept { return largest_step_; }

 private:
  struct Slot {
    uint64_t key = 0;    // 0: empty
    uint64_t value = 0;  // 0 in the old array: erased there (the key stays for its probes)
  };
  struct FreeDeleter {
    void operator()(Slot* p) const noexcept { std::free(p); }
  };

  // One array: a power of two of slots (at least 64), or none.
  class Table {
   public:
    Table() = default;
    explicit Table(size_t n) : slots_(static_cast<Slot*>(std::calloc(n, sizeof(Slot)))), n_(n) {
      if (slots_ == nullptr) throw std::bad_alloc();
      shift_ = 64 - unsigned(__builtin_ctzll(n));
    }
    size_t capacity() const noexcept { return n_; }
    const Slot& at(size_t i) const noexcept { return slots_.get()[i]; }
    // The next kPopulateBlock of the array made present (with the pages at its ends),
    // until all of it is.
    void populateNext() noexcept {
      const size_t bytes = n_ * sizeof(Slot);
      if (populated_ >= bytes) return;
      const size_t n = std::min(kPopulateBlock, bytes - populated_);
      (void)populatePages(reinterpret_cast<unsigned char*>(slots_.get()) + populated_, n);
      populated_ += n;
    }

    uint64_t find(uint64_t key) const noexcept {
      if (n_ == 0) return 0;
      for (size_t i = home(key);; i = next(i)) {
        const Slot& s = slots_.get()[i];
        if (s.key == key) return s.value;
        if (s.key == 0) return 0;
      }
    }
    // key is not in this array; there is a free slot.
    void insert(uint64_t key, uint64_t value) noexcept {
      Slot* s = slots_.get();
      size_t i = home(key);
      while (s[i].key != 0) i = next(i);
      s[i] = Slot{key, value};
    }
    // Removes key by backward shift; whether it was there.
    bool erase(uint64_t key) noexcept {
      if (n_ == 0) return false;
      Slot* s = slots_.get();
      size_t i = home(key);
      while (s[i].key != key) {
        if (s[i].key == 0) return false;
        i = next(i);
      }
      // Backward shift: each following entry of the run that may move into the hole
      // (its home is not in (hole, its position]) moves there, and leaves a new hole.
      size_t hole = i;
      for (size_t j = next(i); s[j].key != 0; j = next(j)) {
        const size_t h = home(s[j].key);
        const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
        if (stays) continue;
        s[hole] = s[j];
        hole = j;
      }
      s[hole] = Slot{};
      return true;
    }
    // The old array's erasure: the value goes, the key stays. Whether it was live there.
    bool markErased(uint64_t key) noexcept {
      if (n_ == 0) return false;
      Slot* s = slots_.get();
      for (size_t i = home(key);; i = next(i)) {
        if (s[i].key == key) {
          const bool live = s[i].value != 0;
          s[i].value = 0;
          return live;
        }
        if (s[i].key == 0) return false;
      }
    }

   private:
    size_t home(uint64_t key) const noexcept { return size_t((key * 0x9E3779B97F4A7C15ULL) >> shift_); }
    size_t next(size_t i) const noexcept { return (i + 1) & (n_ - 1); }
    std::unique_ptr<Slot, FreeDeleter> slots_;
    size_t n_ = 0;
    unsigned shift_ = 64;
    size_t populated_ = 0;  // bytes from the start that populateNext() made present
  };

  void grow() {
    Table bigger(cur_.capacity() == 0 ? 64 : 2 * cur_.capacity());  // may throw: nothing changed
    migrate(old_.capacity());  // not reached while insertions drive the draining (above)
    old_ = std::move(cur_);
    cur_ = std::move(bigger);
    drained_ = 0;
  }

  // Moves the live entries of the old array's next `slots` slots into the new array, and
  // frees the old array once every slot was moved.
  void migrate(size_t slots) noexcept {
    if (old_.capacity() == 0) return;
    const size_t end = std::min(old_.capacity(), drained_ + slots);
    largest_step_ = std::max(largest_step_, end - drained_);
    for (; drained_ < end; ++drained_) {
      const Slot& s = old_.at(drained_);
      if (s.key != 0 && s.value != 0) cur_.insert(s.key, s.value);
    }
    if (drained_ == old_.capacity()) old_ = Table();
  }

  Table cur_;           // where insertions go
  Table old_;           // the array before the last growth, while it drains
  size_t drained_ = 0;  // old_'s slots below this were moved
  size_t size_ = 0;     // live keys
  size_t largest_step_ = 0;
};

}  // namespace jitprov
