// PublishedTable: an id -> record table that lock-free readers index while one writer at
// a time (serialised by the owner's lock) fills it.
//
// Layout: a fixed directory of chunk pointers; a chunk holds 2^kChunkBits record
// pointers and is allocated (zeroed, by calloc: fresh pages from mmap cost no zeroing
// under the owner's lock) the first time an index in it is stored.
//
// Ordering:
//  - store(): the chunk pointer is publish()ed after the chunk is allocated, the record
//    pointer is publish()ed after the record was fully initialised by the caller.
//  - load(): readPublished() of the chunk, then of the slot; pairs with the above.
//  - clear() stores nullptr (release, for symmetry; readers only test it for null).
// Concurrency: load() may run concurrently with anything; store()/clear() callers
// serialise among themselves. Records are owned by the caller, not the table.
#pragma once

#include "publish.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace jitprov {

template <class T, unsigned kChunkBits, size_t kMaxChunks>
class PublishedTable {
 public:
  static constexpr uint64_t kChunkSize = uint64_t{1} << kChunkBits;
  static constexpr uint64_t kCapacity = kChunkSize * kMaxChunks;

  PublishedTable() = default;
  PublishedTable(const PublishedTable&) = delete;
  PublishedTable& operator=(const PublishedTable&) = delete;
  ~PublishedTable() {
    for (auto& c : chunks_) std::free(c.load(std::memory_order_relaxed));
  }

  // Writer. False when idx is beyond capacity or the chunk cannot be allocated.
  bool store(uint64_t idx, T* record) noexcept {
    if (idx >= kCapacity) return false;
    std::atomic<T*>* chunk = ensureChunk(idx >> kChunkBits);
    if (chunk == nullptr) return false;
    publish(chunk[idx & (kChunkSize - 1)], record);
    return true;
  }

  // Writer: makes idx unreachable for readers that load it from now on.
  void clear(uint64_t idx) noexcept {
    if (idx >= kCapacity) return;
    // relaxed: only the writer allocates chunks, and it is the caller.
    std::atomic<T*>* chunk = chunks_[idx >> kChunkBits].load(std::memory_order_relaxed);
    if (chunk != nullptr) publish(chunk[idx & (kChunkSize - 1)], static_cast<T*>(nullptr));
  }

  // Lock-free reader. nullptr when never stored or cleared.
  T* load(uint64_t idx) const noexcept {
    if (idx >= kCapacity) return nullptr;
    std::atomic<T*>* chunk = readPublished(chunks_[idx >> kChunkBits]);
    if (chunk == nullptr) return nullptr;
    return readPublished(chunk[idx & (kChunkSize - 1)]);
  }

  // Address of a slot for prefetching; nullptr when its chunk does not exist.
  const std::atomic<T*>* slotAddress(uint64_t idx) const noexcept {
    if (idx >= kCapacity) return nullptr;
    std::atomic<T*>* chunk = readPublished(chunks_[idx >> kChunkBits]);
    return chunk == nullptr ? nullptr : &chunk[idx & (kChunkSize - 1)];
  }

  uint64_t allocatedBytes() const noexcept {
    uint64_t n = sizeof(*this);
    for (const auto& c : chunks_)
      if (c.load(std::memory_order_relaxed) != nullptr) n += kChunkSize * sizeof(std::atomic<T*>);
    return n;
  }

 private:
  std::atomic<T*>* ensureChunk(uint64_t c) noexcept {
    // relaxed: the caller is the only writer of chunks_ (serialised by its lock).
    std::atomic<T*>* chunk = chunks_[c].load(std::memory_order_relaxed);
    if (chunk != nullptr) return chunk;
    static_assert(sizeof(std::atomic<T*>) == sizeof(T*) && std::atomic<T*>::is_always_lock_free);
    // calloc'd zero bytes are valid null std::atomic<T*> objects on every ABI we build
    // for (the static_assert above), and large callocs come from fresh mmap pages.
    chunk = static_cast<std::atomic<T*>*>(std::calloc(kChunkSize, sizeof(std::atomic<T*>)));
    if (chunk == nullptr) return nullptr;
    publish(chunks_[c], chunk);
    return chunk;
  }

  std::atomic<std::atomic<T*>*> chunks_[kMaxChunks] = {};
};

}  // namespace jitprov
