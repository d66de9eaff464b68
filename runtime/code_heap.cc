#include "code_heap.h"

namespace jitprov {

uint64_t CodeHeap::allocate(uint32_t size) {
  const uint64_t need = rounded(size);
  std::lock_guard<std::mutex> g(mu_);
  auto it = free_by_size_.lower_bound(need);
  if (it != free_by_size_.end()) {
    const uint64_t have = it->first;
    const uint64_t start = it->second;
    free_by_size_.erase(it);
    if (have > need) free_by_size_.emplace(have - need, start + need);
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
  const uint64_t n = rounded(size);
  std::lock_guard<std::mutex> g(mu_);
  live_bytes_ -= n;
  free_by_size_.emplace(n, start);
}

uint64_t CodeHeap::liveBytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return live_bytes_;
}

uint64_t CodeHeap::freeRanges() const {
  std::lock_guard<std::mutex> g(mu_);
  return free_by_size_.size();
}

}  // namespace jitprov
