// SPDX-License-Identifier: MIT
// Unit tests of the model code heap (code_heap.h): best fit, and free ranges that merge
// with their neighbours and with the top, so that a heap freed in pieces serves a
// request as large as their sum. Addresses are numbers in an unmapped range: filling
// the whole heap (64 GiB) takes 32 allocations of 2 GiB and no memory.
#include "code_heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace jitprov {
namespace {

constexpr uint32_t k2G = uint32_t{1} << 31;
constexpr uint64_t kHeapBytes = CodeHeap::kLimit - CodeHeap::kBase;

std::vector<uint64_t> fill(CodeHeap& heap, uint32_t size) {
  std::vector<uint64_t> starts;
  for (uint64_t s; (s = heap.allocate(size)) != 0;) starts.push_back(s);
  return starts;
}

TEST(CodeHeap, RangesFreedInPiecesMergeIntoOne) {
  CodeHeap heap;
  const std::vector<uint64_t> starts = fill(heap, k2G);
  ASSERT_EQ(starts.size(), kHeapBytes / k2G);
  // All but the last: 62 GiB in 2 GiB pieces, the odd ones first (each alone), then the
  // even ones, each of which joins the free ranges on both sides.
  for (size_t i = 1; i + 1 < starts.size(); i += 2) heap.release(starts[i], k2G);
  EXPECT_EQ(heap.freeRanges(), starts.size() / 2 - 1);
  for (size_t i = 0; i + 1 < starts.size(); i += 2) heap.release(starts[i], k2G);
  EXPECT_EQ(heap.freeRanges(), 1u);
  EXPECT_EQ(heap.liveBytes(), k2G);
  // 4 GiB (UINT32_MAX rounded up) fits only in the merged range.
  EXPECT_EQ(heap.allocate(UINT32_MAX), starts[0]);
  EXPECT_EQ(heap.liveBytes(), uint64_t{3} * k2G);
}

TEST(CodeHeap, RangesAtTheTopGoBackToIt) {
  CodeHeap heap;
  const uint64_t a = heap.allocate(100), b = heap.allocate(200), c = heap.allocate(300);
  heap.release(a, 100);
  heap.release(c, 300);  // the top: no free range to keep
  EXPECT_EQ(heap.freeRanges(), 1u);
  heap.release(b, 200);  // joins a, and the top
  EXPECT_EQ(heap.freeRanges(), 0u);
  EXPECT_EQ(heap.liveBytes(), 0u);
  // The whole heap is one range again.
  const std::vector<uint64_t> starts = fill(heap, k2G);
  ASSERT_EQ(starts.size(), kHeapBytes / k2G);
  EXPECT_EQ(starts[0], CodeHeap::kBase);
}

TEST(CodeHeap, BestFitSplitsTheSmallestRangeThatFits) {
  CodeHeap heap;
  const uint64_t big = heap.allocate(4096), keep1 = heap.allocate(16), small = heap.allocate(64);
  const uint64_t keep2 = heap.allocate(16);
  heap.release(big, 4096);
  heap.release(small, 64);
  EXPECT_EQ(heap.allocate(48), small);       // rounded to 48: the 64-byte range, split
  EXPECT_EQ(heap.allocate(16), small + 48);  // its rest
  EXPECT_EQ(heap.allocate(100), big);        // then the large one
  EXPECT_EQ(heap.freeRanges(), 1u);          // what is left of it
  EXPECT_GT(keep1, big);
  EXPECT_GT(keep2, small);
}

// Random churn at the simulator's sizes: live ranges never overlap, and once all are
// released every piece has merged back into the top.
TEST(CodeHeap, ChurnNeverOverlapsAndMergesBackWhole) {
  CodeHeap heap;
  std::mt19937_64 rng(7);
  std::map<uint64_t, uint32_t> live;  // start -> size
  uint64_t live_bytes = 0;
  auto rounded = [](uint32_t n) { return (uint64_t{n} + CodeHeap::kAlign - 1) & ~(CodeHeap::kAlign - 1); };
  for (int i = 0; i < 200000; ++i) {
    if (!live.empty() && rng() % 2 == 0) {
      auto it = live.lower_bound(CodeHeap::kBase + rng() % (64 << 20));
      if (it == live.end()) it = live.begin();
      heap.release(it->first, it->second);
      live_bytes -= rounded(it->second);
      live.erase(it);
    } else {
      const uint32_t n = uint32_t(64 + rng() % 4000);
      const uint64_t s = heap.allocate(n);
      ASSERT_NE(s, 0u);
      auto [it, fresh] = live.emplace(s, n);
      ASSERT_TRUE(fresh);
      if (it != live.begin()) {
        ASSERT_LE(std::prev(it)->first + rounded(std::prev(it)->second), s);
      }
      if (std::next(it) != live.end()) {
        ASSERT_LE(s + rounded(n), std::next(it)->first);
      }
      live_bytes += rounded(n);
    }
  }
  EXPECT_EQ(heap.liveBytes(), live_bytes);
  for (const auto& [s, n] : live) heap.release(s, n);
  EXPECT_EQ(heap.freeRanges(), 0u);
  EXPECT_EQ(heap.liveBytes(), 0u);
  EXPECT_EQ(fill(heap, k2G).size(), kHeapBytes / k2G);
}

}  // namespace
}  // namespace jitprov
