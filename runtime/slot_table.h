/* SPDX-License-Identifier: MIT */
// SlotTable: records of one kind, stored in place in slots that are reused after a grace
// period; an id names one occupancy of one slot and is never handed out twice.
//
// Layout: a fixed directory of chunk pointers; a chunk holds 2^kChunkBits slots and is
// allocated (zeroed: calloc'd or freshly mapped, see Paging) the first time a slot in it is claimed. A slot is an
// atomic `id` word and the storage of one T. Slot 0 is never used, so no id is 0.
//
// Ids (registry.h P9): id = generation << 32 | index. The first occupant of a slot has
// generation 0 (ids 1, 2, 3, ... as long as nothing is reused); each reuse takes the
// next generation. A slot whose generation would pass kMaxGeneration is never reused
// again (it costs one slot; at one reuse a microsecond that is 35 minutes of churn on
// that one slot), so an id is unique in the process for its whole life.
// The slot's id word: 0 = never occupied; `id` = occupied by the record with that id;
// `id | kFree` = its last occupant left (cleared), and readers can tell "gone" from
// "never issued" by comparing generations.
//
// Ordering:
//  - claim() hands the writer a slot whose previous occupant was destroyed after a grace
//    period that began when it was cleared; the writer constructs the record in place,
//    then commit() publish()es the id word (release), then the high-water mark.
//  - load(id)/at(index): readPublished() of the chunk and the id word (acquire): a reader
//    that sees the id sees every field the constructor wrote. The fields stay as they
//    are for as long as the reader's RCU read section lasts: clear() comes first, and
//    the record is destroyed, and its slot offered to claim() (recycle()), only from a
//    callback that runs after a grace period that began after clear() (rcu.h).
//  - A reader holding a record loaded before clear() keeps reading that record: the
//    slot cannot have a new occupant before the reader's read section ends.
// Concurrency: load/at/highWater/state may run concurrently with anything. claim,
// commit, unclaim and clear: serialised by the owner's lock. recycle(): any thread (the
// RCU callback thread), under the table's own mutex.
#pragma once

#include "publish.h"

#include <jitprov/populate.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <new>
#include <numeric>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define JITPROV_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define JITPROV_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define JITPROV_POISON(p, n) ((void)(p), (void)(n))
#define JITPROV_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace jitprov {

// How a table's chunks are paged (docs/measurements.md, "Huge pages"):
//  - kAtFirstTouch: chunks of 2 MB or more mapped at a 2 MB boundary and advised into
//    transparent huge pages, so each 2 MB is a huge page from its first touch, which the
//    writer pays; smaller chunks calloc'd.
//  - kAhead: chunks laid out back to back in 2 MB-aligned regions of whole huge pages,
//    advised into huge pages but for the table's first 2 MB (a small table stays small),
//    each populated two huge pages ahead of the writer by populateAhead(), which the
//    caller runs off the writer's path (and off its locks): the writer finds its pages
//    present where a huge page's first touch costs milliseconds (a VM whose host takes
//    free 2 MB blocks back), and the table's resident memory runs at most two huge pages
//    ahead of its use. Its 4 KB pages (the first 2 MB; all of them without huge pages)
//    are populated by the writer, 64 KB at a time as it enters them (claim()).
// JITPROV_HUGE_PAGES=0 in the environment leaves huge pages out (neither advice nor
// their population); JITPROV_HUGE_PAGES=noahead leaves kAhead tables in 4 KB pages.
enum class Paging { kAtFirstTouch, kAhead };

inline bool hugePagesWanted(Paging paging) noexcept {
  static const std::string_view setting = [] {
    const char* e = std::getenv("JITPROV_HUGE_PAGES");
    return std::string_view(e == nullptr ? "" : e);
  }();
  return setting != "0" && (paging != Paging::kAhead || setting != "noahead");
}

// A slot of a SlotTable<T>: the id word, then the record in place. Its layout depends on
// T alone, so that a record can find its own id word (SlotTable::idOf).
template <class T>
struct SlotOf {
  std::atomic<uint64_t> id;
  alignas(T) unsigned char storage[sizeof(T)];
};

template <class T, unsigned kChunkBits, size_t kMaxChunks, Paging kPaging = Paging::kAtFirstTouch>
class SlotTable {
 public:
  static constexpr unsigned kIndexBits = 32;
  static constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
  static constexpr uint64_t kFree = uint64_t{1} << 63;
  static constexpr uint64_t kMaxGeneration = (kFree >> kIndexBits) - 1;
  static constexpr uint64_t kChunkSize = uint64_t{1} << kChunkBits;
  // Records that can be live (or awaiting their grace period) at once.
  static constexpr uint64_t kCapacity = kChunkSize * kMaxChunks - 1;
  static_assert(kChunkSize * kMaxChunks <= kIndexMask);

  static uint64_t indexOf(uint64_t id) noexcept { return id & kIndexMask; }
  static uint64_t generationOf(uint64_t id) noexcept { return (id & ~kFree) >> kIndexBits; }

  struct Claim {
    uint64_t id = 0;
    void* storage = nullptr;
    // Paging::kAhead: this claim entered a huge page, and populateAhead() has pages to
    // populate (the caller arranges for it off its path, once its locks are released).
    bool populate = false;
  };
  enum class State { kLive, kGone, kNeverIssued };

  SlotTable() = default;
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;
  ~SlotTable() {
    for (auto& c : chunks_) {
      Slot* chunk = c.load(std::memory_order_relaxed);
      if (chunk == nullptr) continue;
      JITPROV_UNPOISON(chunk, kChunkBytes);
      if constexpr (kPaging == Paging::kAhead)
        continue;  // in a region, unmapped below
      else if (kMapped)
        munmap(chunk, kChunkBytes);
      else
        std::free(chunk);
    }
    if constexpr (kPaging == Paging::kAhead)
      for (auto& r : regions_)
        if (unsigned char* region = r.load(std::memory_order_relaxed)) munmap(region, kRegionBytes);
  }

  // Writer: a slot for a new record, and the id it will have. False when kCapacity
  // records are live or awaiting reclamation, or a chunk cannot be allocated.
  bool claim(Claim* out) noexcept {
    takeRecycled();
    uint64_t id;
    const bool fresh = free_.empty();
    if (!fresh) {
      std::pop_heap(free_.begin(), free_.end(), LowerIndexFirst{});
      id = free_.back();
      free_.pop_back();
    } else {
      id = claimed_hw_ + 1;
      if (id > kCapacity || ensureChunk(id >> kChunkBits) == nullptr) return false;
      claimed_hw_ = id;
    }
    Slot& s = slot(indexOf(id));
    JITPROV_UNPOISON(s.storage, sizeof(T));
    *out = Claim{id, s.storage, false};
    if constexpr (kPaging == Paging::kAhead) {
      const uint64_t at = indexOf(id) * sizeof(Slot);  // the regions' bytes counted back to back
      // A fresh slot that enters a block of kPopulateBlock in 4 KB pages (the first huge
      // page's, or every one without huge pages) with its last byte: the block made
      // present now, by one system call where its first touches faulted a page at a time.
      // (A slot lies in one chunk, and so in one region.)
      const uint64_t last = at + sizeof(Slot) - 1;
      if (fresh && last >= small_trigger_ && (last < kHugePage || !aheadWanted())) {
        const uint64_t block = last & ~uint64_t(kPopulateBlock - 1);
        small_trigger_ = block + kPopulateBlock;
        (void)populatePages(byteAt(block), kPopulateBlock);
      }
      // A fresh slot at or past the next trigger: ask for the huge pages up to kLookahead
      // after the one it is in.
      if (fresh && at >= ahead_trigger_) {
        const uint64_t page = at / kHugePage;
        ahead_trigger_ = (page + 1) * kHugePage;
        uint64_t want = page;
        while (want < page + kLookahead && hugePage(want + 1) != nullptr) ++want;  // maps their regions
        if (want > page) {
          // release: populateAhead() reads the regions' addresses the writer stored.
          want_upto_.store(want, std::memory_order_release);
          out->populate = true;
        }
      }
    }
    return true;
  }

  // Writer: the record is constructed in claim.storage; readers may find it from now on.
  void commit(const Claim& c) noexcept {
    const uint64_t index = indexOf(c.id);
    publish(slot(index).id, c.id);  // after the record's fields
    // relaxed: the writer is the only one storing hw_.
    if (index > hw_.load(std::memory_order_relaxed)) publish(hw_, index);  // after the id word
  }

  // Writer: the claimed slot was not used (nothing was constructed, or it was destroyed
  // before commit()); the same id may be handed out again.
  void unclaim(const Claim& c) noexcept {
    JITPROV_POISON(slot(indexOf(c.id)).storage, sizeof(T));
    if (c.id == claimed_hw_) {  // a fresh slot: never published, give the index back
      --claimed_hw_;
      return;
    }
    // It came from free_, whose capacity it left behind: push_back does not allocate.
    free_.push_back(c.id);
    std::push_heap(free_.begin(), free_.end(), LowerIndexFirst{});
  }

  // Writer: readers that load `id` from now on get nullptr. The record stays intact
  // until the caller's reclamation callback destroys it and calls recycle().
  void clear(uint64_t id) noexcept { publish(slot(indexOf(id)).id, id | kFree); }

  // Any thread, after a grace period that began after clear(id), once the record is
  // destroyed: the slot may be claimed again, by the next generation.
  void recycle(uint64_t id) noexcept {
    JITPROV_POISON(slot(indexOf(id)).storage, sizeof(T));
    std::lock_guard<std::mutex> g(recycled_mu_);
    if (generationOf(id) == kMaxGeneration) {
      ++exhausted_;  // never reused: its ids are used up
      return;
    }
    try {
      recycled_.push_back(id + (uint64_t{1} << kIndexBits));
    } catch (const std::bad_alloc&) {
      ++lost_;  // out of memory: the slot stays unused (counted, see lostSlots())
      return;
    }
    recycled_count_.store(recycled_.size(), std::memory_order_relaxed);
  }

  // The id of `record`, which is in a slot of a table of T's and was reached by a reader
  // (or the writer) that saw it live: its slot's id word without kFree. The word holds
  // that id from commit() until the slot's next occupant is committed, which is after a
  // grace period that began after clear() (P9), so within the reader's RCU read section
  // (or while the writer holds the record) the id is the record's, also once cleared.
  // A record need not store its id (Method: registry.h). Acquire, as every read of the
  // word: free on x86-64, and a reader that got the record through another path (a
  // version's il->method) still sees a word at least as new as the commit (P1, P9).
  static uint64_t idOf(const T* record) noexcept {
    static_assert(std::is_standard_layout_v<Slot>);
    const auto* s =
        reinterpret_cast<const Slot*>(reinterpret_cast<const unsigned char*>(record) - offsetof(Slot, storage));
    return readPublished(s->id) & ~kFree;
  }

  // Lock-free reader (or the writer): the live record with this id, or nullptr.
  T* load(uint64_t id) const noexcept {
    const uint64_t index = indexOf(id);
    if (index == 0 || index > kCapacity || (id & kFree) != 0) return nullptr;  // any id may come from a host
    Slot* chunk = readPublished(chunks_[index >> kChunkBits]);
    if (chunk == nullptr) return nullptr;
    Slot& s = chunk[index & (kChunkSize - 1)];
    return readPublished(s.id) == id ? reinterpret_cast<T*>(s.storage) : nullptr;
  }

  // Lock-free reader: the live record in slot `index` (1..highWater()), or nullptr.
  T* at(uint64_t index) const noexcept {
    Slot* chunk = readPublished(chunks_[index >> kChunkBits]);
    if (chunk == nullptr) return nullptr;
    Slot& s = chunk[index & (kChunkSize - 1)];
    const uint64_t id = readPublished(s.id);
    return id == 0 || (id & kFree) != 0 ? nullptr : reinterpret_cast<T*>(s.storage);
  }

  // For prefetching: the slot's address, or nullptr. Lock-free.
  const void* slotAddress(uint64_t index) const noexcept {
    if (index > kCapacity) return nullptr;
    Slot* chunk = readPublished(chunks_[index >> kChunkBits]);
    return chunk == nullptr ? nullptr : &chunk[index & (kChunkSize - 1)];
  }

  // Lock-free reader stepping through the slots in order (a walk): the live record in
  // the slot at `slot` (a slotAddress(), or that plus a multiple of slotBytes() that
  // stays in its chunk: a chunk's kChunkSize slots are contiguous), or nullptr: as at().
  static T* liveAt(const void* slot) noexcept {
    const Slot& s = *static_cast<const Slot*>(slot);
    const uint64_t id = readPublished(s.id);
    return id == 0 || (id & kFree) != 0 ? nullptr : reinterpret_cast<T*>(const_cast<unsigned char*>(s.storage));
  }

  // The highest slot index ever committed: a walk visits 1..highWater(). Slots are
  // claimed lowest index first, so it stays near the most records ever live at once.
  uint64_t highWater() const noexcept { return readPublished(hw_); }

  // For error messages: is `id` live, gone (its occupancy ended), or never handed out?
  State state(uint64_t id) const noexcept {
    const uint64_t index = indexOf(id);
    if (index == 0 || (id & kFree) != 0 || index > kCapacity) return State::kNeverIssued;
    Slot* chunk = readPublished(chunks_[index >> kChunkBits]);
    if (chunk == nullptr) return State::kNeverIssued;
    const uint64_t word = readPublished(chunk[index & (kChunkSize - 1)].id);
    if (word == 0) return State::kNeverIssued;
    if (word == id) return State::kLive;
    return generationOf(id) <= generationOf(word) ? State::kGone : State::kNeverIssued;
  }

  static constexpr uint64_t slotBytes() noexcept { return sizeof(Slot); }
  uint64_t allocatedBytes() const noexcept {
    uint64_t n = sizeof(*this);
    for (const auto& c : chunks_)
      if (c.load(std::memory_order_relaxed) != nullptr) n += kChunkSize * sizeof(Slot);
    return n;
  }
  // Paging::kAhead: populates the huge pages the writer asked for (claim()'s
  // Claim::populate) and not populated yet, so that the writer finds them present. Any
  // thread but the writer's, one at a time (a mutex); milliseconds a huge page on a VM
  // whose host takes free 2 MB blocks back. A page the writer reached first (it paid
  // its first touch) is counted late.
  struct PopulateStats {
    uint64_t ahead = 0;   // 2 MB ranges populated before the writer reached them
    uint64_t late = 0;    // ... that the writer had reached first
    uint64_t failed = 0;  // the kernel populated not (no memory; no MADV_POPULATE_WRITE: no
                          // huge pages are asked for then)
  };
  PopulateStats populateAhead() noexcept {
    std::lock_guard<std::mutex> g(populate_mu_);
    if constexpr (kPaging == Paging::kAhead) {
      const uint64_t want = want_upto_.load(std::memory_order_acquire);
      for (; populated_upto_ < want; ++populated_upto_) {
        unsigned char* page = hugePageAt(populated_upto_ + 1);
        unsigned char resident = 0;
        // relaxed: counters for statistics.
        if (mincore(page, kHugePage / 512, &resident) == 0 && (resident & 1) != 0)
          late_.fetch_add(1, std::memory_order_relaxed);
        else if (madvise(page, kHugePage, MADV_POPULATE_WRITE) == 0)
          ahead_.fetch_add(1, std::memory_order_relaxed);
        else
          populate_failed_.fetch_add(1, std::memory_order_relaxed);  // the writer will fault it in
      }
    }
    return populateStats();
  }
  PopulateStats populateStats() const noexcept {
    return {ahead_.load(std::memory_order_relaxed), late_.load(std::memory_order_relaxed),
            populate_failed_.load(std::memory_order_relaxed)};
  }

  // Slots retired for good because their generations ran out.
  uint64_t exhaustedSlots() const {
    std::lock_guard<std::mutex> g(recycled_mu_);
    return exhausted_;
  }
  // Slots left unused because recording them for reuse ran out of memory.
  uint64_t lostSlots() const {
    std::lock_guard<std::mutex> g(recycled_mu_);
    return lost_;
  }

 private:
  using Slot = SlotOf<T>;
  struct LowerIndexFirst {  // a min-heap on the slot index
    bool operator()(uint64_t a, uint64_t b) const noexcept { return indexOf(a) > indexOf(b); }
  };

  Slot& slot(uint64_t index) const noexcept {
    // acquire: recycle() runs on another thread than the one that allocated the chunk.
    return readPublished(chunks_[index >> kChunkBits])[index & (kChunkSize - 1)];
  }

  void takeRecycled() noexcept {
    if (recycled_count_.load(std::memory_order_relaxed) == 0) return;  // relaxed: a hint
    std::lock_guard<std::mutex> g(recycled_mu_);
    try {
      free_.reserve(free_.size() + recycled_.size());
    } catch (const std::bad_alloc&) {
      return;  // they stay in recycled_ for a later claim
    }
    for (uint64_t id : recycled_) {
      free_.push_back(id);
      std::push_heap(free_.begin(), free_.end(), LowerIndexFirst{});
    }
    recycled_.clear();
    recycled_count_.store(0, std::memory_order_relaxed);
  }

  Slot* ensureChunk(uint64_t c) noexcept {
    // relaxed: the writer is the only one storing chunks_.
    Slot* chunk = chunks_[c].load(std::memory_order_relaxed);
    if (chunk != nullptr) return chunk;
    static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free);
    // Zero bytes (calloc'd or freshly mapped) are valid `0` atomics (the static_assert above).
    if constexpr (kPaging == Paging::kAhead) {
      unsigned char* region = mapRegion(c / kRegionChunks);
      chunk = region == nullptr ? nullptr : reinterpret_cast<Slot*>(region + (c % kRegionChunks) * kChunkBytes);
    } else {
      chunk = static_cast<Slot*>(kMapped ? mapAligned(kChunkBytes, hugePagesWanted(kPaging))
                                         : std::calloc(kChunkSize, sizeof(Slot)));
    }
    if (chunk == nullptr) return nullptr;
    for (uint64_t i = 0; i < kChunkSize; ++i) JITPROV_POISON(chunk[i].storage, sizeof(T));
    publish(chunks_[c], chunk);
    return chunk;
  }

  // Paging::kAtFirstTouch maps chunks of 2 MB or more at a 2 MB boundary and advises
  // them into transparent huge pages (where the kernel allows; THP's "madvise" mode is
  // Debian's default); other chunks of that mode are calloc'd. Paging::kAhead maps
  // regions of kRegionChunks chunks, a whole number of huge pages, at a 2 MB boundary
  // (mapRegion). The walk reads the chunks in order, and with 4 KB pages a walk of
  // 10 M methods crosses 240 000 pages, each a TLB miss the hardware prefetcher does not
  // cross (docs/measurements.md, "Huge pages").
  static constexpr size_t kChunkBytes = kChunkSize * sizeof(Slot);
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr bool kMapped = kPaging == Paging::kAtFirstTouch && kChunkBytes >= kHugePage;
  static constexpr uint64_t kRegionChunks = kHugePage / std::gcd(kChunkBytes, kHugePage);
  static constexpr size_t kRegionBytes = kRegionChunks * kChunkBytes;
  static constexpr uint64_t kRegions = (kMaxChunks + kRegionChunks - 1) / kRegionChunks;
  static_assert(kPaging != Paging::kAhead || kRegionChunks <= 64, "a region of whole huge pages is a few chunks");
  static void* mapAligned(size_t bytes, bool advise) noexcept {
    void* p = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    const uintptr_t base = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (base + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
    if (aligned > base) munmap(p, aligned - base);
    if (const size_t tail = kHugePage - (aligned - base); tail > 0)
      munmap(reinterpret_cast<void*>(aligned + bytes), tail);
    if (advise) (void)madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);  // advice only
    return reinterpret_cast<void*>(aligned);
  }

  // The scalars first, the chunk and region arrays (up to 64 KB) after them: a claim
  // touches the scalars and the arrays' first entries, one page for a table below
  // 512 chunks, where a header after the arrays sat a page or more away (a TLB miss
  // each, on a thread whose caches its compiler keeps cold).
  std::atomic<uint64_t> hw_{0};  // published high-water slot index
  // Writer only.
  uint64_t claimed_hw_ = 0;
  std::vector<uint64_t> free_;  // next ids of reusable slots, a min-heap on the index
  // Recycled by reclamation callbacks, waiting for the writer.
  mutable std::mutex recycled_mu_;
  std::vector<uint64_t> recycled_;
  uint64_t exhausted_ = 0, lost_ = 0;
  std::atomic<size_t> recycled_count_{0};

  // Paging::kAhead. The regions mapped (from the first claim in them, or the writer's
  // look ahead; the writer stores them, release, populateAhead() reads them), and where
  // the next fresh slot asks for huge pages to be populated (writer only): from the
  // middle of the first huge page (which stays in 4 KB pages, so that a table of fewer
  // than 1 MB of slots stays small), then from each page's start, kLookahead pages ahead.
  static constexpr uint64_t kLookahead = 2;
  static constexpr uint64_t kPagesPerRegion = kRegionBytes / kHugePage;
  uint64_t ahead_trigger_ = kHugePage / 2;
  uint64_t small_trigger_ = 0;  // where the next block in 4 KB pages begins (writer only)
  // The highest page asked for (the writer stores it), and populated up to (populateAhead).
  std::atomic<uint64_t> want_upto_{0};
  std::mutex populate_mu_;
  uint64_t populated_upto_ = 0;
  std::atomic<uint64_t> ahead_{0}, late_{0}, populate_failed_{0};

  std::atomic<Slot*> chunks_[kMaxChunks] = {};
  std::atomic<unsigned char*> regions_[kPaging == Paging::kAhead ? kRegions : 1] = {};

  // Whether huge pages are asked for at all: wanted (JITPROV_HUGE_PAGES), and the kernel
  // can populate them ahead (MADV_POPULATE_WRITE, Linux 5.14; a zero length tells).
  static bool aheadWanted() noexcept { return hugePagesWanted(kPaging) && populateSupported(); }
  // Writer: region r, mapped now if it was not. Advised into huge pages but for the
  // first 2 MB of the first region, which, like every region without the advice, is
  // advised out of them (THP's "always" mode would make them huge at the first touch).
  unsigned char* mapRegion(uint64_t r) noexcept {
    // relaxed: the writer is the only one storing regions_.
    if (unsigned char* region = regions_[r].load(std::memory_order_relaxed)) return region;
    auto* region = static_cast<unsigned char*>(mapAligned(kRegionBytes, false));
    if (region == nullptr) return nullptr;
    const size_t small = !aheadWanted() ? kRegionBytes : r == 0 ? kHugePage : 0;
    if (small != 0) (void)madvise(region, small, MADV_NOHUGEPAGE);  // advice only
    if (small < kRegionBytes) (void)madvise(region + small, kRegionBytes - small, MADV_HUGEPAGE);
    regions_[r].store(region, std::memory_order_release);
    return region;
  }
  // Writer: the address of huge page `page` of the table (the regions' pages back to
  // back), its region mapped; nullptr for the first, past the table's capacity, without
  // huge pages, or when the mapping failed.
  unsigned char* hugePage(uint64_t page) noexcept {
    if (page == 0 || page >= kMaxChunks * kChunkBytes / kHugePage || !aheadWanted()) return nullptr;
    unsigned char* region = mapRegion(page / kPagesPerRegion);
    return region == nullptr ? nullptr : region + (page % kPagesPerRegion) * kHugePage;
  }
  // Writer: the address of byte `at` of the table (the regions' bytes back to back), in
  // a region mapped.
  unsigned char* byteAt(uint64_t at) const noexcept {
    return regions_[at / kRegionBytes].load(std::memory_order_relaxed) + at % kRegionBytes;
  }
  // populateAhead(): the address of a page the writer asked for (its region mapped).
  unsigned char* hugePageAt(uint64_t page) const noexcept {
    return regions_[page / kPagesPerRegion].load(std::memory_order_acquire) + (page % kPagesPerRegion) * kHugePage;
  }
};

}  // namespace jitprov
