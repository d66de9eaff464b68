// SPDX-License-Identifier: MIT
// HostKeyIndex (common/include/jitprov/host_key_index.h) against std::unordered_map, through the
// churn a host with collectible code makes: keys added and erased at random, runs of
// colliding keys that wrap around the array's end, growth.
#include <jitprov/host_key_index.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace jitprov {
namespace {

void expectSame(const HostKeyIndex& idx, const std::unordered_map<uint64_t, uint64_t>& ref,
                const std::vector<uint64_t>& probe) {
  ASSERT_EQ(idx.size(), ref.size());
  for (uint64_t k : probe) {
    auto it = ref.find(k);
    ASSERT_EQ(idx.find(k), it == ref.end() ? 0 : it->second) << "key " << k;
  }
}

TEST(HostKeyIndex, MatchesAMapThroughChurn) {
  std::mt19937_64 rng(42);
  HostKeyIndex idx;
  std::unordered_map<uint64_t, uint64_t> ref;
  std::vector<uint64_t> keys;
  // MethodDesc-like keys: 8-byte aligned, from a few small ranges (many land in runs).
  for (int i = 0; i < 20000; ++i) keys.push_back(0x7f0000000000ULL + (rng() % 4096) * 8 + (rng() % 4) * 0x100000);
  uint64_t next_value = 1;
  for (int step = 0; step < 200000; ++step) {
    const uint64_t k = keys[rng() % keys.size()];
    if (rng() % 3 != 0) {
      if (ref.count(k) == 0) {
        idx.insert(k, next_value);
        ref.emplace(k, next_value++);
      }
    } else {
      idx.erase(k);
      ref.erase(k);
    }
    if (step % 20000 == 0) expectSame(idx, ref, keys);
  }
  expectSame(idx, ref, keys);
  for (uint64_t k : keys) idx.erase(k);
  EXPECT_EQ(idx.size(), 0u);
  EXPECT_EQ(idx.find(keys[0]), 0u);
}

// Keys whose home is the last slots: their run wraps to the array's start, and erasing
// inside it must move the wrapped entries back across the end.
TEST(HostKeyIndex, ErasureShiftsBackAcrossTheEnd) {
  HostKeyIndex idx;
  idx.insert(1, 1);  // the first insertion makes 64 slots
  // 64 slots: home = (key * golden) >> 58; collect keys whose home is 62 or 63.
  std::vector<uint64_t> tail;
  for (uint64_t k = 2; tail.size() < 12; ++k)
    if (((k * 0x9E3779B97F4A7C15ULL) >> 58) >= 62) tail.push_back(k);
  std::unordered_map<uint64_t, uint64_t> ref{{1, 1}};
  for (size_t i = 0; i < tail.size(); ++i) {
    idx.insert(tail[i], 100 + i);
    ref.emplace(tail[i], 100 + i);
  }
  std::vector<uint64_t> all = tail;
  all.push_back(1);
  for (size_t i = 0; i < tail.size(); i += 2) {  // every other one, from the run's head
    idx.erase(tail[i]);
    ref.erase(tail[i]);
    expectSame(idx, ref, all);
  }
  idx.erase(999999);  // absent: nothing changes
  expectSame(idx, ref, all);
}

// An entry at its own home just past the end (slot 0) after a hole at the last slot
// must stay: moving it back across the end would put it before its home, where no
// probe looks.
TEST(HostKeyIndex, AnEntryAtItsHomePastTheEndStays) {
  auto homeOf = [](uint64_t k) { return (k * 0x9E3779B97F4A7C15ULL) >> 58; };  // 64 slots
  uint64_t last = 0, first = 0;
  for (uint64_t k = 1; last == 0 || first == 0; ++k) {
    if (last == 0 && homeOf(k) == 63) last = k;
    if (first == 0 && homeOf(k) == 0) first = k;
  }
  HostKeyIndex idx;
  idx.insert(last, 1);   // slot 63
  idx.insert(first, 2);  // slot 0
  idx.erase(last);
  EXPECT_EQ(idx.find(first), 2u);
  EXPECT_EQ(idx.size(), 1u);
}

// Growth is spread over the insertions after it: no insertion moves more than
// kMigrateSlots of the old array's slots (one that rehashed the whole array, as the
// index did before, moved 262 144 at the 131 073rd key), and every key stays findable
// while the old array drains, through erasures and reinsertions in the middle of it.
TEST(HostKeyIndex, GrowthIsSpreadOverTheInsertionsAfterIt) {
  std::mt19937_64 rng(7);
  HostKeyIndex idx;
  std::unordered_map<uint64_t, uint64_t> ref;
  std::vector<uint64_t> live;
  uint64_t next_key = 1, next_value = 1, drains_seen = 0, checked = 0;
  bool was_draining = false;
  while (next_key <= 300000) {
    const uint64_t k = 0x7f0000000000ULL + next_key++ * 8;
    idx.insert(k, next_value);
    ref.emplace(k, next_value++);
    live.push_back(k);
    if (rng() % 4 == 0) {  // an erasure, of a key that may sit in either array
      const size_t i = rng() % live.size();
      idx.erase(live[i]);
      ref.erase(live[i]);
      if (rng() % 2 == 0) {  // and its reinsertion, under a new value (into the new array)
        idx.insert(live[i], next_value);
        ref.emplace(live[i], next_value++);
      } else {
        live[i] = live.back();
        live.pop_back();
      }
    }
    if (idx.draining() && !was_draining) ++drains_seen;
    was_draining = idx.draining();
    // While draining, every live key and a few erased or unknown ones, now and then.
    if (idx.draining() && rng() % 512 == 0) {
      ++checked;
      ASSERT_EQ(idx.size(), ref.size());
      for (int j = 0; j < 64; ++j) {
        const uint64_t probe = live[rng() % live.size()];
        ASSERT_EQ(idx.find(probe), ref.at(probe)) << "key " << probe;
        const uint64_t gone = 0x7f0000000000ULL + (rng() % (next_key + 100)) * 8;
        const auto it = ref.find(gone);
        ASSERT_EQ(idx.find(gone), it == ref.end() ? 0 : it->second) << "key " << gone;
      }
    }
  }
  EXPECT_LE(idx.largestStep(), HostKeyIndex::kMigrateSlots);
  EXPECT_GE(drains_seen, 12u);  // 64 slots to 2^20 (300 000 keys): every growth drained
  EXPECT_GT(checked, 50u);
  for (const auto& [k, v] : ref) ASSERT_EQ(idx.find(k), v) << "key " << k;
  EXPECT_EQ(idx.size(), ref.size());
  for (const auto& [k, v] : ref) idx.erase(k);
  EXPECT_EQ(idx.size(), 0u);
}

}  // namespace
}  // namespace jitprov
