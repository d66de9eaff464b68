/* SPDX-License-Identifier: MIT */
// What jitprov-verify keeps while it streams a trace: a few words per code version and
// the set of publication sequence numbers seen, never the events themselves. Pure data
// structures (no babeltrace2), unit-tested in tests/unit/verify_state_test.cc.
#pragma once

#include "verify_g2.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace jitprov::verify {

// What the trace says about one version: 56 bytes.
struct VersionEntry {
  uint64_t version_id;  // 0: an empty entry (an id of 0 is refused as damaged input)
  uint64_t method_id;   // from its method_load, else from its first rundown record
  uint64_t module_id;
  uint64_t publish_seq;  // 0: none known (a trace from before the field existed)
  Digest load;           // of its method_load's fields (verify_g2.h); empty: none in the trace
  uint64_t in_rundowns;  // bit k: in the k-th rundown of its process (k < kRundownBits);
                         // kRetired: a code_unload names it
  static constexpr unsigned kRundownBits = 63;
  static constexpr uint64_t kRetired = uint64_t{1} << 63;
};
static_assert(sizeof(VersionEntry) == 56);

// Versions by id. The registry's ids are `generation << 32 | slot`, slots dense from 1
// (runtime/slot_table.h; before slots, ids counted from 1): an entry is found at its
// slot in chunks of 262 144 (14 MB), mapped when first touched (pages never written are
// never resident), in huge pages where the kernel allows (a rundown's records come in
// the registry's walk order, not by id: page walks cost more than the entries). No
// hashing, no allocation per version, no slack but the last chunk's. The ids of a slot
// reused by later generations (or of damaged input) go to an open-addressing table
// beside, at most 3/4 full, grown by half: about 95 bytes per entry.
class VersionTable {
 public:
  static constexpr unsigned kChunkBits = 18;  // whole huge pages of 56-byte entries
  static constexpr uint64_t kChunkSize = uint64_t{1} << kChunkBits;
  // (A second layer of chunks for reused slots was tried: their later ids are spread
  // over the whole table, so it was touched everywhere for a few entries each.)

  VersionEntry* find(uint64_t id) {
    const uint64_t slot = id & 0xffffffffu;
    const uint64_t c = slot >> kChunkBits;
    if (c >= chunks_.size() || chunks_[c] == nullptr)
      return c < spilled_.size() && spilled_[c] ? overflow_.find(id) : nullptr;
    VersionEntry& e = chunks_[c].get()[slot & (kChunkSize - 1)];
    if (e.version_id == id) return &e;
    if (e.version_id == 0) return nullptr;  // entries are never removed: none beside
    return overflow_.find(id);
  }

  // Starts loading the entry of `id` into the cache (a rundown's records come in walk
  // order: each would miss; several misses in flight cost about one).
  void prefetch(uint64_t id) const {
    const uint64_t slot = id & 0xffffffffu;
    const uint64_t c = slot >> kChunkBits;
    if (c < chunks_.size() && chunks_[c] != nullptr)
      __builtin_prefetch(chunks_[c].get() + (slot & (kChunkSize - 1)), 1);
  }

  // The entry of `id` (non-zero), made empty but for its id when new; *created says so.
  // Valid until the next get() (an entry beside the chunks may move).
  VersionEntry& get(uint64_t id, bool* created = nullptr) {
    const uint64_t slot = id & 0xffffffffu;
    const uint64_t c = slot >> kChunkBits;
    if (c >= chunks_.size()) {
      chunks_.resize(c + 1);
      spilled_.resize(c + 1);
    }
    if (chunks_[c] == nullptr) {
      // A chunk (14 MB of address space, 2 MB resident at its first entry) only while
      // the chunks stay dense: two, and one more for every 65 536 entries held. The ids
      // of a slot range beyond that (sparse slots: damaged or hostile input, 2 MB for
      // each event before) go beside, and their range never gets a chunk (its ids are
      // found beside).
      if (spilled_[c] || chunks_used_ * kChunkSize > 4 * size_ + kChunkSize) {
        spilled_[c] = true;
        return besideEntry(id, created);
      }
      chunks_[c] = newChunk(c != 0);
      ++chunks_used_;
    }
    VersionEntry& e = chunks_[c].get()[slot & (kChunkSize - 1)];
    if (e.version_id == id) return found(e, false, created);
    if (e.version_id == 0) {
      e.version_id = id;
      return found(e, true, created);
    }
    return besideEntry(id, created);
  }

  // Every entry: those in chunks by slot, then the table beside.
  template <class F>
  void forEach(F&& f) {
    for (auto& chunk : chunks_) {
      if (chunk == nullptr) continue;
      for (uint64_t i = 0; i < kChunkSize; ++i)
        if (chunk.get()[i].version_id != 0) f(chunk.get()[i]);
    }
    overflow_.forEach(f);
  }

  size_t size() const { return size_; }
  // Entries beside the chunks (slots seen with more than one id).
  size_t overflowed() const { return overflowed_; }

 private:
  static constexpr size_t kChunkBytes = kChunkSize * sizeof(VersionEntry);  // 7 huge pages
  static_assert(kChunkBytes % (2u << 20) == 0);
  struct Free {
    void operator()(VersionEntry* p) const { munmap(p, kChunkBytes); }
  };
  using Chunk = std::unique_ptr<VersionEntry, Free>;

  // Huge pages for a large table only: the first chunk of every process's table in 4 KB
  // pages, so that a trace of thousands of short-lived runtimes (a version or two each)
  // does not take a 2 MB page for each.
  static Chunk newChunk(bool huge) {
    void* p = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    if (huge) madvise(p, kChunkBytes, MADV_HUGEPAGE);  // advice: without it, 4 KB pages
    return Chunk(static_cast<VersionEntry*>(p));
  }
  VersionEntry& besideEntry(uint64_t id, bool* created) {
    bool fresh = false;
    VersionEntry& beside = overflow_.get(id, &fresh);
    if (fresh) ++overflowed_;
    return found(beside, fresh, created);
  }
  VersionEntry& found(VersionEntry& e, bool fresh, bool* created) {
    if (fresh) ++size_;
    if (created != nullptr) *created = fresh;
    return e;
  }

  // Open addressing (linear probing, at most 3/4 full, any capacity) of entries by id.
  class Beside {
   public:
    VersionEntry* find(uint64_t id) {
      if (size_ == 0) return nullptr;
      VersionEntry& e = slots_[indexOf(slots_, id)];
      return e.version_id == id ? &e : nullptr;
    }
    VersionEntry& get(uint64_t id, bool* fresh) {
      if (4 * (size_ + 1) > 3 * slots_.size()) grow();
      VersionEntry& e = slots_[indexOf(slots_, id)];
      *fresh = e.version_id == 0;
      if (*fresh) {
        e.version_id = id;
        ++size_;
      }
      return e;
    }
    template <class F>
    void forEach(F&& f) {
      for (VersionEntry& e : slots_)
        if (e.version_id != 0) f(e);
    }

   private:
    static size_t indexOf(const std::vector<VersionEntry>& slots, uint64_t id) {
      uint64_t h = id * 0x9E3779B97F4A7C15u;
      h ^= h >> 29;
      // The hash scaled to the capacity (no power of two needed: growth by half).
      size_t i = size_t((unsigned __int128)h * slots.size() >> 64);
      for (;; i = i + 1 == slots.size() ? 0 : i + 1)
        if (slots[i].version_id == id || slots[i].version_id == 0) return i;
    }
    void grow() {
      std::vector<VersionEntry> next(slots_.empty() ? 64 : slots_.size() + slots_.size() / 2, VersionEntry{});
      for (const VersionEntry& e : slots_)
        if (e.version_id != 0) next[indexOf(next, e.version_id)] = e;
      slots_.swap(next);
    }
    std::vector<VersionEntry> slots_;
    size_t size_ = 0;
  };

  std::vector<Chunk> chunks_;
  std::vector<bool> spilled_;  // by chunk: a range whose ids went beside (never a chunk)
  uint64_t chunks_used_ = 0;
  Beside overflow_;
  size_t size_ = 0, overflowed_ = 0;
};

// A map from non-zero 64-bit ids to numbers, open addressing (linear probing, at most
// half full): one probe where std::unordered_map chases a bucket and a node. For the
// removals a trace shows (version, method, module -> sequence number), looked up once
// per version at the end.
class IdMap {
 public:
  // Inserts id -> value unless id is there already (the first is kept); false then.
  bool emplace(uint64_t id, uint64_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& s = slots_[indexOf(slots_, id)];
    if (s.id == id) return false;
    s = Slot{id, value};
    ++size_;
    return true;
  }
  const uint64_t* find(uint64_t id) const {
    if (size_ == 0) return nullptr;
    const Slot& s = slots_[indexOf(slots_, id)];
    return s.id == id ? &s.value : nullptr;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Slot {
    uint64_t id = 0, value = 0;  // id 0: empty
  };
  // Where id is, or the empty slot where it would go.
  static size_t indexOf(const std::vector<Slot>& slots, uint64_t id) {
    const size_t mask = slots.size() - 1;
    const uint64_t h = id * 0x9E3779B97F4A7C15u;
    for (size_t i = size_t(h ^ (h >> 32)) & mask;; i = (i + 1) & mask)
      if (slots[i].id == id || slots[i].id == 0) return i;
  }
  void grow() {
    std::vector<Slot> next(slots_.empty() ? 16 : 2 * slots_.size());
    for (const Slot& s : slots_)
      if (s.id != 0) next[indexOf(next, s.id)] = s;
    slots_.swap(next);
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// The sequence numbers a trace shows (publications and removals), as sorted disjoint
// ranges: a trace that shows every number costs one range. Numbers arrive almost in
// order (streams of several CPUs, merged by time): they are buffered and merged in
// batches at least as large as the set, so each costs O(log) amortized.
class SeqSet {
 public:
  void add(uint64_t s) {
    if (pending_.empty() && !ranges_.empty()) {  // in order, or seen already: the common cases
      auto& last = ranges_.back();
      if (last.second != UINT64_MAX && s == last.second + 1) {
        last.second = s;
        return;
      }
      if (s >= last.first && s <= last.second) return;
    }
    pending_.push_back(s);
    if (pending_.size() >= std::max<size_t>(kMinBatch, ranges_.size())) flush();
  }

  // Every number in [lo, hi] is in the set (true when lo > hi).
  bool covered(uint64_t lo, uint64_t hi) {
    if (lo > hi) return true;
    flush();
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), lo,
                               [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.first; });
    if (it == ranges_.begin()) return false;
    --it;
    return it->first <= lo && hi <= it->second;
  }

  size_t ranges() {
    flush();
    return ranges_.size();
  }

  void flush() {
    if (pending_.empty()) return;
    std::sort(pending_.begin(), pending_.end());
    std::vector<std::pair<uint64_t, uint64_t>> merged;
    merged.reserve(ranges_.size() + 1);
    auto append = [&](uint64_t lo, uint64_t hi) {
      if (!merged.empty() && (merged.back().second == UINT64_MAX || lo <= merged.back().second + 1))
        merged.back().second = std::max(merged.back().second, hi);
      else
        merged.emplace_back(lo, hi);
    };
    size_t i = 0;
    for (const uint64_t s : pending_) {
      while (i < ranges_.size() && ranges_[i].first <= s) append(ranges_[i].first, ranges_[i].second), ++i;
      append(s, s);
    }
    for (; i < ranges_.size(); ++i) append(ranges_[i].first, ranges_[i].second);
    ranges_ = std::move(merged);
    ranges_.shrink_to_fit();
    pending_.clear();
  }

 private:
  static constexpr size_t kMinBatch = 4096;
  std::vector<uint64_t> pending_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

}  // namespace jitprov::verify
