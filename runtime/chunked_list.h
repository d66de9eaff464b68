/* SPDX-License-Identifier: MIT */
// ChunkedList: an unordered list of trivially copyable values (a module's methods) in
// chunks that never move, so that appending never copies the list. A std::vector
// doubled by copying: the registration that found a module's list of 131 072 methods
// full copied 1 MB into 2 MB of fresh pages under the loader mutex (2.9-3.7 ms on this
// VM, whose 4 KB page faults take 11 us; 6.1-6.4 ms at 262 144). Chunk c holds
// 16 << min(c, 8) values (16, 32, ..., 4096, then 4096 each): a small module stays small,
// a large one wastes at most one chunk of 32 KB.
// Not synchronised: the owner's lock (the loader mutex for Module::methods).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace jitprov {

template <class T>
class ChunkedList {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr size_t kFirstChunk = 16;
  static constexpr unsigned kMaxShift = 8;  // chunks of kFirstChunk << 8 = 4096 at most

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return capacity_; }
  // The bytes it holds: its chunks and their directory.
  size_t bytes() const noexcept { return capacity_ * sizeof(T) + chunks_.capacity() * sizeof(chunks_[0]); }

  // Makes room for one more value (push_back cannot fail then). Throws std::bad_alloc,
  // leaving the list as it was.
  void reserveOne() {
    if (size_ < capacity_) return;
    const size_t n = chunkSize(chunks_.size());
    std::unique_ptr<T[]> chunk(new T[n]);  // first: a throw leaves the directory as it was too
    if (chunks_.size() == chunks_.capacity()) chunks_.reserve(chunks_.empty() ? 8 : 2 * chunks_.size());
    chunks_.push_back(std::move(chunk));  // reserved: cannot throw
    capacity_ += n;
  }
  // After reserveOne().
  void push_back(T v) noexcept {
    *slot(size_) = v;
    ++size_;
  }
  // Removes one value equal to v, searched from the newest (the slot it leaves takes the
  // newest value). Whether one was found.
  bool eraseOne(T v) noexcept {
    for (size_t i = size_; i-- > 0;) {
      T* p = slot(i);
      if (!(*p == v)) continue;
      *p = *slot(size_ - 1);
      --size_;
      return true;
    }
    return false;
  }
  template <class F>
  void forEach(F&& f) const {
    size_t left = size_;
    for (size_t c = 0; left != 0; ++c) {
      const size_t n = left < chunkSize(c) ? left : chunkSize(c);
      for (size_t i = 0; i < n; ++i) f(chunks_[c][i]);
      left -= n;
    }
  }

 private:
  static constexpr size_t chunkSize(size_t c) noexcept { return kFirstChunk << (c < kMaxShift ? c : kMaxShift); }
  // The slot of value i: chunks 0..kMaxShift-1 hold kFirstChunk * (2^c - 1) values before
  // chunk c, and each later chunk kFirstChunk << kMaxShift.
  T* slot(size_t i) const noexcept {
    constexpr size_t kSmall = kFirstChunk * ((size_t{1} << kMaxShift) - 1);  // in the growing chunks
    if (i >= kSmall) {
      const size_t j = i - kSmall;
      return &chunks_[kMaxShift + j / chunkSize(kMaxShift)][j % chunkSize(kMaxShift)];
    }
    // i / kFirstChunk + 1 = 2^c + r: c is its highest bit.
    const size_t q = i / kFirstChunk + 1;
    const unsigned c = 63 - unsigned(__builtin_clzll(q));
    return &chunks_[c][i - kFirstChunk * ((size_t{1} << c) - 1)];
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0, capacity_ = 0;
};

}  // namespace jitprov
