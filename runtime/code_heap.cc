// SPDX-License-Identifier: MIT
#include "code_heap.h"

#include <new>

namespace jitprov {

uint64_t CodeHeap::allocate(uint32_t size) {
  const uint64_t need = rounded(size);
  std::lock_guard<std::mutex> g(mu_);
  auto it = free_by_size_.lower_bound(Free{need, 0, {}});
  if (it != free_by_size_.end()) {
    BySize::node_type range = free_by_size_.extract(it);
    Free& f = range.value();
    const uint64_t start = f.start;
    if (f.size == need) {
      free_by_end_.erase(f.by_end);
    } else {
      f.start += need;  // the rest keeps its end, and so its place by end
      f.size -= need;
      f.by_end->second = f.start;
      free_by_size_.insert(std::move(range));
    }
    live_bytes_ += need;
    return start;
  }
  if (kLimit - bump_ < need) return 0;
  const uint64_t start = bump_;
  bump_ += need;
  live_bytes_ += need;
  return start;
}

void CodeHeap::release(uint64_t start, uint32_t size) {
  uint64_t end = start + rounded(size);
  std::lock_guard<std::mutex> g(mu_);
  live_bytes_ -= end - start;
  Entries merged;
  auto next = free_by_end_.upper_bound(start);  // the first free range above
  if (next != free_by_end_.begin() && std::prev(next)->first == start) {
    start = std::prev(next)->second;
    take(std::prev(next), &merged);
  }
  if (next != free_by_end_.end() && next->second == end) {
    end = next->first;
    take(next++, &merged);
  }
  if (end == bump_) {
    bump_ = start;  // the top grows down over it
    return;
  }
  try {
    put(std::move(merged), start, end, next);
  } catch (const std::bad_alloc&) {
    // Only a range with no free neighbour needs new entries. Without them it is lost to
    // the model heap (never handed out twice); release runs on the call_rcu thread,
    // which an exception would end.
  }
}

void CodeHeap::take(ByEnd::iterator it, Entries* e) {
  e->by_size = free_by_size_.extract(Free{it->first - it->second, it->second, {}});
  e->by_end = free_by_end_.extract(it);
}

void CodeHeap::put(Entries e, uint64_t start, uint64_t end, ByEnd::const_iterator next) {
  if (e.by_end.empty()) {
    const auto by_end = free_by_end_.emplace_hint(next, end, start);
    try {
      free_by_size_.insert(Free{end - start, start, by_end});
    } catch (...) {
      free_by_end_.erase(by_end);  // in both indexes or in neither
      throw;
    }
    return;
  }
  e.by_end.key() = end;
  e.by_end.mapped() = start;
  e.by_size.value() = Free{end - start, start, free_by_end_.insert(next, std::move(e.by_end))};
  free_by_size_.insert(std::move(e.by_size));
}

uint64_t CodeHeap::liveBytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return live_bytes_;
}

uint64_t CodeHeap::freeRanges() const {
  std::lock_guard<std::mutex> g(mu_);
  return free_by_end_.size();
}

}  // namespace jitprov
