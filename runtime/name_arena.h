/* SPDX-License-Identifier: MIT */
// NameArena: the strings of one module's methods (namespace, name, signature), copied
// once into chunks the module owns and freed with it: no allocation per method, no
// allocator header per string. Namespaces and signatures recur within a module (a
// type's methods share its namespace; signatures repeat across types): those are
// interned, stored once per module.
//
// Lifetime (registry.h P4, P5): a method's strings are immutable once it is committed
// and are freed only with its module's record, by the reclamation callback, after a
// grace period: a lock-free reader holding the method reads them for as long as its
// read section lasts. Not thread-safe: the owner's loader mutex serialises copy/intern.
#pragma once

#include <jitprov/populate.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace jitprov {

class NameArena {
 public:
  // A NUL-terminated copy of `s`. Throws std::bad_alloc.
  const char* copy(std::string_view s) { return copyAfter(s, nullptr, 0); }

  // A copy of `s` preceded by the `n` bytes at `prefix` (read back at copy - n, with
  // memcpy: no alignment). Throws std::bad_alloc.
  const char* copyAfter(std::string_view s, const void* prefix, size_t n) {
    const size_t need = n + s.size() + 1;
    char* p;
    if (need > kMaxChunk / 4) {  // a long string: a chunk of its own; the current one stays current
      chunks_.push_back(std::make_unique_for_overwrite<char[]>(need));
      bytes_ += need;
      p = chunks_.back().get();
    } else {
      if (need > cap_ - used_) newChunk(need);
      p = current_ + used_;
      used_ += need;
    }
    if (n != 0) std::memcpy(p, prefix, n);
    p += n;
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
    return p;
  }

  // The one copy of `s` in this arena (made on first use), its length before it
  // (internedLength()). Throws std::bad_alloc.
  const char* intern(std::string_view s) {
    // Open addressing, linear probing, at most half full; an entry keeps its string's
    // hash, so that a probe compares bytes only when the hashes agree.
    if (2 * (interned_ + 1) > set_.size()) growSet();
    const uint32_t h = hash(s);
    const size_t mask = set_.size() - 1;
    size_t i = h & mask;
    for (; set_[i].p != nullptr; i = (i + 1) & mask) {
      const Entry& e = set_[i];
      // (An empty view may have no data: memcmp is not given a null pointer.)
      if (e.hash == h && e.len == s.size() && (s.empty() || std::memcmp(e.p, s.data(), s.size()) == 0)) return e.p;
    }
    const uint32_t len = uint32_t(s.size());
    const char* p = copyAfter(s, &len, sizeof len);
    set_[i] = Entry{p, len, h};
    ++interned_;
    return p;
  }

  // The length of a string intern() returned (stored just before it).
  static uint32_t internedLength(const char* interned) noexcept {
    uint32_t len;
    std::memcpy(&len, interned - sizeof len, sizeof len);
    return len;
  }

  // Bytes allocated: chunks and the intern set.
  uint64_t bytes() const noexcept { return bytes_ + set_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    const char* p;
    uint32_t len, hash;
  };
  // 8 bytes a step (names are short): a multiply and a shift each.
  static uint32_t hash(std::string_view s) noexcept {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
    uint64_t h = s.size() * kMul;
    size_t i = 0;
    for (; s.size() - i >= 8; i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = (h ^ w) * kMul;
      h ^= h >> 29;
    }
    if (i < s.size()) {
      uint64_t w = 0;
      std::memcpy(&w, s.data() + i, s.size() - i);
      h = (h ^ w) * kMul;
      h ^= h >> 29;
    }
    return uint32_t(h ^ (h >> 32));
  }
  void growSet() {
    std::vector<Entry> next(set_.empty() ? 16 : 2 * set_.size(), Entry{nullptr, 0, 0});
    for (const Entry& e : set_) {
      if (e.p == nullptr) continue;
      size_t i = e.hash & (next.size() - 1);
      while (next[i].p != nullptr) i = (i + 1) & (next.size() - 1);
      next[i] = e;
    }
    set_.swap(next);
  }
  // Chunks double from 512 B to 64 KB: a small module stays small. A chunk is not
  // zeroed (every byte handed out is written first); the pages of one of 16 KB or more
  // are made present at once (populate.h): the strings' first writes faulted them in one
  // by one, at 11-16 us each on this project's VM.
  static constexpr size_t kFirstChunk = 512, kMaxChunk = 64 * 1024;

  void newChunk(size_t need) {
    const size_t size = std::max(need, std::min(kMaxChunk, std::max(kFirstChunk, 2 * cap_)));
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    if (size >= kMaxChunk / 4) (void)populatePages(chunks_.back().get(), size);
    bytes_ += size;
    current_ = chunks_.back().get();
    cap_ = size;
    used_ = 0;
  }

  std::vector<std::unique_ptr<char[]>> chunks_;
  char* current_ = nullptr;
  size_t used_ = 0, cap_ = 0;
  std::vector<Entry> set_;  // interned strings
  size_t interned_ = 0;
  uint64_t bytes_ = 0;  // chunks
};

}  // namespace jitprov
