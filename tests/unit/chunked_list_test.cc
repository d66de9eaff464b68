// SPDX-License-Identifier: MIT
// ChunkedList (runtime/chunked_list.h): a module's list of methods. Against a
// std::vector through appends and unordered erasures across the chunks' boundaries
// (16, 32, ..., 4096, then 4096 each), and values that never move as the list grows.
#include "chunked_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace jitprov {
namespace {

std::vector<uint64_t> contents(const ChunkedList<uint64_t>& l) {
  std::vector<uint64_t> out;
  l.forEach([&](const uint64_t& v) { out.push_back(v); });
  return out;
}

TEST(ChunkedList, MatchesAVectorThroughAppendsAndErasures) {
  std::mt19937_64 rng(3);
  ChunkedList<uint64_t> l;
  std::vector<uint64_t> ref;
  uint64_t next = 1;
  for (int step = 0; step < 24000; ++step) {
    if (ref.empty() || rng() % 4 != 0) {
      l.reserveOne();
      l.push_back(next);
      ref.push_back(next++);
    } else {
      // Mostly one of the newest (a method unloaded alone), sometimes any.
      const size_t i = rng() % 2 == 0 ? ref.size() - 1 - rng() % std::min<size_t>(ref.size(), 8) : rng() % ref.size();
      ASSERT_TRUE(l.eraseOne(ref[i]));
      ref[i] = ref.back();  // the list's order is its own: compared as sets below
      ref.pop_back();
    }
    ASSERT_EQ(l.size(), ref.size());
    if (step % 4999 == 0) {
      std::vector<uint64_t> got = contents(l), want = ref;
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      ASSERT_EQ(got, want) << "step " << step;
    }
  }
  EXPECT_GT(l.size(), 4080u + 4096u) << "past the growing chunks into the fixed ones";
  EXPECT_FALSE(l.eraseOne(0));  // absent
  std::vector<uint64_t> got = contents(l), want = ref;
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  // Capacity: whole chunks, at most one of 4096 values unused.
  EXPECT_LT(l.capacity() - l.size(), 4096u + 1);
}

TEST(ChunkedList, AppendingNeverMovesAValue) {
  ChunkedList<uint64_t> l;
  for (uint64_t v = 1; v <= 10000; ++v) {
    l.reserveOne();
    l.push_back(v);
  }
  std::vector<const uint64_t*> where;
  l.forEach([&](const uint64_t& v) { where.push_back(&v); });
  for (uint64_t v = 10001; v <= 200000; ++v) {
    l.reserveOne();
    l.push_back(v);
  }
  size_t i = 0;
  l.forEach([&](const uint64_t& v) {
    if (i < where.size()) {
      EXPECT_EQ(&v, where[i]) << "value " << v << " moved";
    }
    ++i;
  });
  EXPECT_EQ(i, 200000u);
}

}  // namespace
}  // namespace jitprov
