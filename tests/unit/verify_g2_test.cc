// SPDX-License-Identifier: MIT
// jitprov-verify's G2 core (tools/verify/verify_g2.h) on synthetic streams: a version's
// method_load and its rundown records, in either order, decoded as the verifier decodes
// them. Every field counts: a record equal but for one byte of one name, or one number,
// fails.
#include "verify_g2.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

using jitprov::verify::Digest;
using jitprov::verify::G2Matcher;
using jitprov::verify::MethodRecord;

MethodRecord sample() {
  MethodRecord r;
  r.method_id = 7;
  r.version_id = 42;
  r.module_id = 3;
  r.code_start = 0x7f0000001000;
  r.rejit_id = 0;
  r.code_size = 512;
  r.method_token = 0x06000001;
  r.method_flags = 0x10;
  r.tier = 1;
  r.host_tier = 1;
  r.host_version = 2;
  r.publish_seq = 99;
  r.name_space = "System.Collections.Generic";
  r.name = "TryGetValue";
  r.signature = "bool (!0, !1&)";
  return r;
}

// A process's G2 as jitprov-verify runs it: the load's digest kept per version, the
// matcher deciding each record; the verdicts by rundown.
struct Stream {
  G2Matcher matcher;
  std::unordered_map<uint64_t, Digest> loads;  // version_id -> (VersionEntry::load)
  struct Tally {
    int equal = 0, differ = 0;
  };
  std::map<uint64_t, Tally> by_rundown;
  std::function<void(uint64_t, uint64_t, bool)> verdict = [this](uint64_t rundown, uint64_t, bool equal) {
    ++(equal ? by_rundown[rundown].equal : by_rundown[rundown].differ);
  };

  bool load(const MethodRecord& r) {
    return matcher.onLoad(r.version_id, jitprov::verify::digestOf(r), &loads[r.version_id], verdict);
  }
  void record(uint64_t rundown, const MethodRecord& r) {
    matcher.onRecord(rundown, r.version_id, jitprov::verify::digestOf(r), loads[r.version_id], verdict);
  }
  size_t undecided() const {
    size_t n = 0;
    matcher.forEachUndecided([&](uint64_t, uint64_t) { ++n; });
    return n;
  }
};

// G2 of one record against its load, the load first (late: the record first).
bool g2Holds(const MethodRecord& load, const MethodRecord& rec, bool record_first = false) {
  Stream s;
  if (record_first) {
    s.record(1, rec);
    EXPECT_EQ(s.undecided(), 1u);
    s.load(load);
  } else {
    s.load(load);
    s.record(1, rec);
  }
  EXPECT_EQ(s.undecided(), 0u);
  EXPECT_EQ(s.by_rundown[1].equal + s.by_rundown[1].differ, 1);
  return s.by_rundown[1].differ == 0;
}

TEST(G2, EqualRecordsPass) {
  EXPECT_TRUE(g2Holds(sample(), sample()));
  EXPECT_TRUE(g2Holds(sample(), sample(), true));
  EXPECT_EQ(jitprov::verify::differingFields(sample(), sample()), "");
}

TEST(G2, OneByteOfOneNameFails) {
  for (std::string MethodRecord::*field : {&MethodRecord::name_space, &MethodRecord::name, &MethodRecord::signature}) {
    const MethodRecord load = sample();
    for (size_t i = 0; i < (load.*field).size(); ++i) {
      MethodRecord rec = load;
      (rec.*field)[i] ^= 1;  // ASCII stays ASCII
      EXPECT_FALSE(g2Holds(load, rec)) << (rec.*field);
    }
  }
  MethodRecord rec = sample();
  rec.signature.back() ^= 1;
  EXPECT_EQ(jitprov::verify::differingFields(rec, sample()), "signature");
  rec.name[0] ^= 1;
  EXPECT_EQ(jitprov::verify::differingFields(rec, sample()), "name,signature");
}

TEST(G2, EmptyAndNonEmptySignatureDiffer) {
  MethodRecord empty = sample();
  empty.signature.clear();
  EXPECT_FALSE(g2Holds(sample(), empty));
  EXPECT_FALSE(g2Holds(empty, sample()));
  EXPECT_TRUE(g2Holds(empty, empty));
  EXPECT_EQ(jitprov::verify::differingFields(empty, sample()), "signature");
}

TEST(G2, BytesMovedBetweenNamesDiffer) {
  // Each name is its length and its bytes: "ab" + "" is not "a" + "b".
  MethodRecord a = sample(), b = sample();
  a.name = "ab";
  a.signature = "";
  b.name = "a";
  b.signature = "b";
  EXPECT_FALSE(g2Holds(a, b));
  b.name = "";
  b.signature = "ab";
  EXPECT_FALSE(g2Holds(a, b));
}

// The name hash G2 compared before issue 22 (verify_checks.h nameDigest): 64 bits of
// multiply-xor per 8-byte word, each step a bijection, so a second word undoes a first.
uint64_t oldNameHash(std::string_view s) {
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
  return h;
}

TEST(G2, NamesThatCollidedInTheOldHashDiffer) {
  // What the sim's torn-name fault emits for this signature (runtime/rundown.cc
  // tornSignature): the old hash passed it.
  MethodRecord load = sample(), rec = sample();
  load.signature = "bool (int64, int32)";
  rec.signature = "nY3K9u@4V7#Dd|m`32)";
  ASSERT_EQ(oldNameHash(load.signature), oldNameHash(rec.signature));
  EXPECT_FALSE(g2Holds(load, rec));
  EXPECT_EQ(jitprov::verify::differingFields(rec, load), "signature");
}

TEST(G2, EachNumberCounts) {
  const std::vector<std::pair<const char*, std::function<void(MethodRecord&)>>> changes = {
      {"method_id", [](MethodRecord& r) { r.method_id += 1; }},
      {"module_id", [](MethodRecord& r) { r.module_id += 1; }},
      {"rejit_id", [](MethodRecord& r) { r.rejit_id += 1; }},
      {"tier", [](MethodRecord& r) { r.tier += 1; }},
      {"host_tier", [](MethodRecord& r) { r.host_tier = -1; }},
      {"host_version", [](MethodRecord& r) { r.host_version += 1; }},
      {"code_start", [](MethodRecord& r) { r.code_start += 1; }},
      {"code_size", [](MethodRecord& r) { r.code_size += 1; }},
      {"method_token", [](MethodRecord& r) { r.method_token ^= 1u << 31; }},
      {"method_flags", [](MethodRecord& r) { r.method_flags += 1; }},
      {"publish_seq", [](MethodRecord& r) { r.publish_seq += 1; }},
  };
  for (const auto& [name, change] : changes) {
    MethodRecord rec = sample();
    change(rec);
    EXPECT_FALSE(g2Holds(sample(), rec)) << name;
    EXPECT_FALSE(g2Holds(sample(), rec, true)) << name << " (record first)";
    EXPECT_EQ(jitprov::verify::differingFields(rec, sample()), name);
  }
}

TEST(G2, RecordBeforeItsLoadIsDecidedWhenItComes) {
  MethodRecord rec = sample();
  rec.signature[3] = 'X';
  EXPECT_FALSE(g2Holds(sample(), rec, true));
  // Several rundowns' records first, one of them torn: each is decided on its own.
  Stream s;
  s.record(1, sample());
  s.record(2, rec);
  s.record(3, sample());
  EXPECT_EQ(s.undecided(), 3u);
  EXPECT_TRUE(s.load(sample()));
  EXPECT_EQ(s.undecided(), 0u);
  EXPECT_EQ(s.by_rundown[1].equal, 1);
  EXPECT_EQ(s.by_rundown[2].differ, 1);
  EXPECT_EQ(s.by_rundown[3].equal, 1);
}

TEST(G2, TheFirstLoadIsThePublication) {
  // A second method_load of a version is ignored: records compare with the first.
  Stream s;
  MethodRecord other = sample();
  other.code_size = 1;
  EXPECT_TRUE(s.load(sample()));
  EXPECT_FALSE(s.load(other));
  s.record(1, sample());
  s.record(2, other);
  EXPECT_EQ(s.by_rundown[1].equal, 1);
  EXPECT_EQ(s.by_rundown[2].differ, 1);
}

TEST(G2, RecordsWithoutALoadStayUndecided) {
  Stream s;
  MethodRecord a = sample(), b = sample();
  b.version_id = 43;
  s.record(1, a);
  s.record(1, b);
  s.load(b);
  EXPECT_EQ(s.undecided(), 1u);
  EXPECT_EQ(s.by_rundown[1].equal, 1);
}

// An attach with every:N: versions published before the session never have a
// method_load in the trace, and come again, alike, in every rundown. They wait at a few
// bytes a record (was: a multimap node each, about 64 bytes: 1 000 000 records took 64 MB
// of heap); a load that comes at last decides them all, one torn among them.
TEST(G2, RecordsOfVersionsNeverLoadedWaitCompactly) {
  constexpr uint64_t kVersions = 10000, kRundowns = 100;
  Stream s;
  std::vector<jitprov::verify::Digest> digests(kVersions);
  MethodRecord r = sample();
  for (uint64_t v = 0; v < kVersions; ++v) {
    r.version_id = 1000 + v;
    r.code_start = 0x7f0000001000 + v * 0x1000;
    digests[v] = jitprov::verify::digestOf(r);
  }
  const size_t heap0 = mallinfo2().uordblks;
  for (uint64_t rundown = 1; rundown <= kRundowns; ++rundown)
    for (uint64_t v = 0; v < kVersions; ++v) s.matcher.onRecord(rundown, 1000 + v, digests[v], {}, s.verdict);
  const size_t grown = mallinfo2().uordblks - heap0;
  EXPECT_EQ(s.matcher.held(), kVersions * kRundowns);
  // 0 under AddressSanitizer (its own allocator): the plain build's figure decides.
  EXPECT_LT(grown, size_t(24) << 20) << grown << " bytes of heap for " << kVersions * kRundowns << " records";
  // Version 1000's load at last, its rundown 7 record torn: 99 equal, 1 differs.
  r.version_id = 1000;
  r.code_start = 0x7f0000001000;
  MethodRecord torn = r;
  torn.code_size += 1;
  s.matcher.onRecord(kRundowns + 1, 1000, jitprov::verify::digestOf(torn), {}, s.verdict);
  s.load(r);
  int equal = 0, differ = 0;
  for (const auto& [rundown, t] : s.by_rundown) equal += t.equal, differ += t.differ;
  EXPECT_EQ(equal, int(kRundowns));
  EXPECT_EQ(differ, 1);
  EXPECT_EQ(s.undecided(), (kVersions - 1) * kRundowns);
}

TEST(G2, DigestIsNeverEmptyAndIgnoresOnlyTheVersionId) {
  MethodRecord a = sample(), b = sample();
  b.version_id += 1;
  EXPECT_EQ(jitprov::verify::digestOf(a), jitprov::verify::digestOf(b));
  EXPECT_FALSE(jitprov::verify::digestOf(MethodRecord{}).empty());
  // Views digest as owned records do: the verifier reads views, tests own their names.
  const jitprov::verify::MethodRecordView v{a, a.name_space, a.name, a.signature};
  EXPECT_EQ(jitprov::verify::digestOf(v), jitprov::verify::digestOf(a));
}

}  // namespace
