// SPDX-License-Identifier: MIT
// jitprov-verify's streaming state (tools/verify/verify_state.h) and its fast name check
// (tools/verify/verify_checks.h), against plain models of the same questions.
#include "verify_state.h"
#include "verify_checks.h"

#include <jitprov/utf8.h>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

using jitprov::verify::SeqSet;
using jitprov::verify::VersionEntry;
using jitprov::verify::VersionTable;

TEST(VersionTable, FindsWhatItHoldsAndNothingElse) {
  VersionTable t;
  EXPECT_EQ(t.find(1), nullptr);
  bool created = false;
  VersionEntry& a = t.get(1, &created);
  EXPECT_TRUE(created);
  a.method_id = 10;
  EXPECT_EQ(&t.get(1, &created), &a);
  EXPECT_FALSE(created);
  EXPECT_EQ(t.find(1)->method_id, 10u);
  EXPECT_EQ(t.find(2), nullptr);
  // Past the first chunk, and far past it (a damaged id's slot).
  t.get(VersionTable::kChunkSize + 5).method_id = 11;
  t.get(0xffffffffu).method_id = 12;
  EXPECT_EQ(t.find(VersionTable::kChunkSize + 5)->method_id, 11u);
  EXPECT_EQ(t.find(0xffffffffu)->method_id, 12u);
  EXPECT_EQ(t.find(VersionTable::kChunkSize + 6), nullptr);
  EXPECT_EQ(t.size(), 3u);
}

// Ids whose slots are spread over the whole 32-bit range (a damaged or hostile trace:
// 2 MB resident for each before) take no chunk of their own past the first two; every one
// is still found, with its fields, and a dense range that follows gets its chunks as its
// entries grow.
TEST(VersionTable, SparseSlotsGoBesideTheChunks) {
  VersionTable t;
  std::vector<uint64_t> ids;
  for (uint64_t k = 0; k < 1000; ++k)
    ids.push_back(((k + 1) << 42) | (((k * 2654435761u) % 16383 + 1) << VersionTable::kChunkBits));
  for (size_t i = 0; i < ids.size(); ++i) t.get(ids[i]).method_id = i + 1;
  EXPECT_EQ(t.size(), ids.size());
  EXPECT_GE(t.overflowed(), ids.size() - 2);  // two chunks at most before any density
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_NE(t.find(ids[i]), nullptr) << i;
    EXPECT_EQ(t.find(ids[i])->method_id, i + 1);
    bool created = true;
    EXPECT_EQ(t.get(ids[i], &created).method_id, i + 1);
    EXPECT_FALSE(created);
  }
  size_t seen = 0;
  t.forEach([&](VersionEntry&) { ++seen; });
  EXPECT_EQ(seen, ids.size());
  // A dense range afterwards: 300 000 consecutive slots, in chunks as they fill.
  const size_t before = t.overflowed();
  for (uint64_t s = 1; s <= 300000; ++s) t.get(s).method_id = s;
  EXPECT_LE(t.overflowed() - before, VersionTable::kChunkSize);  // at most one chunk's worth beside
  for (uint64_t s = 1; s <= 300000; s += 997) EXPECT_EQ(t.find(s)->method_id, s);
  for (size_t i = 0; i < ids.size(); i += 37) EXPECT_EQ(t.find(ids[i])->method_id, i + 1);
}

TEST(VersionTable, ReusedSlotsKeepEveryGeneration) {
  // Ids generation << 32 | slot: generations 0..7 of slots 1..1000 (a churning
  // registry): the layers, then the table beside.
  VersionTable t;
  std::map<uint64_t, uint64_t> model;
  uint64_t n = 0;
  for (uint64_t gen = 0; gen < 8; ++gen)
    for (uint64_t slot = 1; slot <= 1000; ++slot) {
      const uint64_t id = gen << 32 | slot;
      t.get(id).method_id = ++n;
      model[id] = n;
    }
  EXPECT_EQ(t.size(), 8000u);
  EXPECT_EQ(t.overflowed(), 7000u);
  for (const auto& [id, m] : model) {
    ASSERT_NE(t.find(id), nullptr) << id;
    EXPECT_EQ(t.find(id)->method_id, m) << id;
  }
  EXPECT_EQ(t.find(uint64_t{8} << 32 | 1), nullptr);
  EXPECT_EQ(t.find(uint64_t{3} << 32 | 1001), nullptr);
  std::set<uint64_t> seen;
  t.forEach([&](const VersionEntry& e) { EXPECT_TRUE(seen.insert(e.version_id).second); });
  EXPECT_EQ(seen.size(), model.size());
}

TEST(IdMap, MatchesStdMapAndKeepsTheFirst) {
  jitprov::verify::IdMap m;
  std::map<uint64_t, uint64_t> model;
  std::mt19937_64 rng(11);
  EXPECT_EQ(m.find(1), nullptr);
  for (int i = 0; i < 50000; ++i) {
    const uint64_t id = 1 + (i % 3 == 0 ? rng() : rng() % 20000), v = rng();
    EXPECT_EQ(m.emplace(id, v), model.emplace(id, v).second);
  }
  EXPECT_EQ(m.size(), model.size());
  for (const auto& [id, v] : model) {
    ASSERT_NE(m.find(id), nullptr);
    EXPECT_EQ(*m.find(id), v);
  }
  for (int i = 0; i < 1000; ++i) {
    const uint64_t id = 1 + rng();
    EXPECT_EQ(m.find(id) != nullptr, model.count(id) != 0);
  }
}

TEST(SeqSet, CoveredMatchesAPlainSet) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    SeqSet s;
    std::set<uint64_t> model;
    // Mostly in order with small disorder and gaps, as streams of several CPUs merged.
    uint64_t next = 1;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t v = rng() % 10 == 0 ? next + rng() % 50 : next++;
      if (rng() % 97 == 0) ++next;  // a gap
      s.add(v);
      model.insert(v);
    }
    for (int q = 0; q < 2000; ++q) {
      const uint64_t lo = 1 + rng() % (next + 10), hi = lo + rng() % 40;
      bool all = true;
      for (uint64_t v = lo; v <= hi && all; ++v) all = model.count(v) != 0;
      ASSERT_EQ(s.covered(lo, hi), all) << lo << ".." << hi << " round " << round;
    }
    EXPECT_TRUE(s.covered(5, 4));  // an empty interval
  }
}

TEST(SeqSet, AWholeHistoryIsOneRange) {
  SeqSet s;
  for (uint64_t v = 1; v <= 100000; ++v) s.add(v);
  for (uint64_t v = 1; v <= 100000; v += 7) s.add(v);  // seen again (a rundown's records)
  EXPECT_EQ(s.ranges(), 1u);
  EXPECT_TRUE(s.covered(1, 100000));
  EXPECT_FALSE(s.covered(1, 100001));
  EXPECT_FALSE(s.covered(0, 5));
}

TEST(SeqSet, ExtremesDoNotWrap) {
  SeqSet s;
  s.add(UINT64_MAX);
  s.add(UINT64_MAX - 1);
  s.add(1);
  EXPECT_TRUE(s.covered(UINT64_MAX - 1, UINT64_MAX));
  EXPECT_FALSE(s.covered(1, 2));
  EXPECT_EQ(s.ranges(), 2u);
}

TEST(PlainAscii, OnlyWhenEveryByteIsAsciiAndNotNul) {
  const std::string names[] = {
      "", "a", "System.Collections.Generic", "Method_123(int32,string)", "1234567", "12345678", "123456789"};
  for (const std::string& n : names) EXPECT_TRUE(jitprov::verify::plainAscii(n)) << n;
  // Not plain: a byte with its high bit (valid UTF-8 or not), or a NUL, in any position.
  for (size_t len = 1; len <= 17; ++len)
    for (size_t pos = 0; pos < len; ++pos)
      for (const char c : {'\0', '\x80', '\xC3', '\xFF'}) {
        std::string s(len, 'x');
        s[pos] = c;
        EXPECT_FALSE(jitprov::verify::plainAscii(s)) << "len " << len << " pos " << pos << " byte " << int(uint8_t(c));
      }
  // Plain implies valid: random ASCII strings of every length up to 40.
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) {
    std::string s(rng() % 41, ' ');
    for (char& c : s) c = char(rng() % 128);
    const bool plain = jitprov::verify::plainAscii(s);
    EXPECT_EQ(plain, s.find('\0') == std::string::npos) << i;
    if (plain) {
      EXPECT_TRUE(jitprov::isValidUtf8(s));
    }
  }
}

}  // namespace
