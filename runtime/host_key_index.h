/* SPDX-License-Identifier: MIT */
// HostKeyIndex: the host's keys of its methods (jitprov_method_desc.host_key) -> their
// method ids, for registerMethod's duplicate check and findMethod. Loader mutex only.
//
// A host with collectible code registers and forgets methods all the time (the .NET
// client: three in four loads are a method seen for the first time), so a lookup, an
// insertion and an erasure each cost one probe sequence in one flat array: open
// addressing, linear probing, at most half full, erasure by shifting the entries after
// it back (no tombstones, so lookups never slow down with erasures). A node-based
// std::unordered_map cost a division, a bucket load and a node load per lookup and an
// allocation per insertion, on the JIT path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace jitprov {

class HostKeyIndex {
 public:
  // The value stored for `key` (!= 0), or 0 when there is none.
  uint64_t find(uint64_t key) const noexcept {
    if (size_ == 0) return 0;
    for (size_t i = home(key);; i = next(i)) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == 0) return 0;
    }
  }

  // Adds key (!= 0, not present) -> value. Throws std::bad_alloc (nothing added).
  void insert(uint64_t key, uint64_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = home(key);
    while (slots_[i].key != 0) i = next(i);
    slots_[i] = Slot{key, value};
    ++size_;
  }

  // Removes key if present.
  void erase(uint64_t key) noexcept {
    if (size_ == 0) return;
    size_t i = home(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == 0) return;
      i = next(i);
    }
    // Backward shift: each following entry of the run that may move into the hole
    // (its home is not in (hole, its position]) moves there, and leaves a new hole.
    size_t hole = i;
    for (size_t j = next(i); slots_[j].key != 0; j = next(j)) {
      const size_t h = home(slots_[j].key);
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole] = Slot{};
    --size_;
  }

  size_t size() const noexcept { return size_; }
  size_t bytes() const noexcept { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t key = 0;  // 0: empty
    uint64_t value = 0;
  };
  size_t home(uint64_t key) const noexcept { return size_t((key * 0x9E3779B97F4A7C15ULL) >> shift_); }
  size_t next(size_t i) const noexcept { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : 2 * slots_.size());
    old.swap(slots_);  // slots_: the new array; old: the entries
    shift_ = 64 - __builtin_ctzll(slots_.size());
    for (const Slot& s : old) {
      if (s.key == 0) continue;
      size_t i = home(s.key);
      while (slots_[i].key != 0) i = next(i);
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;  // a power of two of them, or none
  size_t size_ = 0;
  unsigned shift_ = 64;
};

}  // namespace jitprov
