// SPDX-License-Identifier: MIT
// Unit tests of slot reuse (registry.h P9): the slot table on its own, with a table
// small enough to fill, and the registry's ids and errors across reuse.
#include <jitprov/runtime.h>

#include "registry.h"
#include "slot_table.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace jitprov {
namespace {

using Tiny = SlotTable<uint64_t, 2, 2>;  // 2 chunks of 4 slots; slot 0 unused: 7 records

uint64_t put(Tiny& t, uint64_t value) {
  Tiny::Claim c;
  if (!t.claim(&c)) return 0;
  new (c.storage) uint64_t(value);
  t.commit(c);
  return c.id;
}

TEST(SlotTable, FillsToItsCapacityThenRefuses) {
  Tiny t;
  ASSERT_EQ(Tiny::kCapacity, 7u);
  for (uint64_t i = 1; i <= 7; ++i) EXPECT_EQ(put(t, i * 10), i) << "first occupants get ids 1, 2, ...";
  Tiny::Claim c;
  EXPECT_FALSE(t.claim(&c));
  EXPECT_EQ(t.highWater(), 7u);
  for (uint64_t i = 1; i <= 7; ++i) EXPECT_EQ(*t.load(i), i * 10);
}

TEST(SlotTable, ReusesTheLowestFreeSlotWithTheNextGeneration) {
  Tiny t;
  for (uint64_t i = 1; i <= 7; ++i) put(t, i);
  t.clear(5);
  t.clear(2);
  // Cleared: not found, "gone"; the record is intact until recycled.
  EXPECT_EQ(t.load(2), nullptr);
  EXPECT_EQ(t.state(2), Tiny::State::kGone);
  EXPECT_EQ(t.at(2), nullptr) << "walkers skip a cleared slot";
  Tiny::Claim c;
  EXPECT_FALSE(t.claim(&c)) << "a cleared slot is not reusable before its grace period";
  t.recycle(5);
  t.recycle(2);
  const uint64_t a = put(t, 200), b = put(t, 500);
  EXPECT_EQ(Tiny::indexOf(a), 2u) << "lowest index first";
  EXPECT_EQ(Tiny::indexOf(b), 5u);
  EXPECT_EQ(Tiny::generationOf(a), 1u);
  EXPECT_NE(a, 2u);
  EXPECT_EQ(t.load(2), nullptr) << "the stale id does not find the new occupant";
  EXPECT_EQ(t.state(2), Tiny::State::kGone);
  EXPECT_EQ(*t.load(a), 200u);
  EXPECT_EQ(*t.at(2), 200u);
  EXPECT_EQ(t.state(a + (uint64_t{1} << 32)), Tiny::State::kNeverIssued) << "a later generation";
  EXPECT_EQ(t.state(0), Tiny::State::kNeverIssued);
  EXPECT_EQ(t.highWater(), 7u);
}

TEST(SlotTable, IdsOutsideTheTableFindNothing) {
  Tiny t;
  put(t, 1);
  for (uint64_t id : {uint64_t{8}, uint64_t{0xffffffff}, ~uint64_t{0}, uint64_t{1} << 63, (uint64_t{1} << 32) | 9})
    EXPECT_EQ(t.load(id), nullptr) << id;
  EXPECT_EQ(t.state(0xffffffff), Tiny::State::kNeverIssued);
}

TEST(SlotReuse, GarbageIdsAreUnknown) {
  Runtime rt;
  for (uint64_t id : {uint64_t{0xffffffff}, ~uint64_t{0}, uint64_t{0x7fffffff12345678}}) {
    EXPECT_EQ(rt.unloadModule(id).error(), Errc::kUnknownModule) << id;
    EXPECT_EQ(rt.beginJit(id, Tier::kTier0, 0).error(), Errc::kUnknownMethod) << id;
    EXPECT_EQ(rt.activate(id).error(), Errc::kUnknownVersion) << id;
    EXPECT_EQ(rt.entryPoint(id), 0u) << id;
  }
}

TEST(SlotTable, IdsOfOneSlotAreNeverRepeated) {
  Tiny t;
  std::set<uint64_t> ids;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t id = put(t, uint64_t(i));
    ASSERT_NE(id, 0u);
    EXPECT_TRUE(ids.insert(id).second) << "id " << id << " handed out twice";
    t.clear(id);
    t.recycle(id);
  }
  EXPECT_EQ(t.highWater(), 1u) << "one slot served them all";
}

TEST(SlotTable, AnUnclaimedSlotIsHandedOutAgainWithTheSameId) {
  Tiny t;
  Tiny::Claim c;
  ASSERT_TRUE(t.claim(&c));
  t.unclaim(c);
  EXPECT_EQ(put(t, 1), c.id);
  EXPECT_EQ(t.highWater(), 1u);
}

// A collectible module with one method compiled at tier 0: its three ids.
struct Loaded {
  ModuleId mod = 0;
  MethodId method = 0;
  VersionId version = 0;
};
Loaded loadOne(Runtime& rt, const char* path, uint32_t token, const char* name) {
  Loaded l;
  auto mod = rt.registerModule(path, true);
  EXPECT_TRUE(mod.ok());
  auto m = rt.registerMethod(*mod, MethodDesc{token, 0, "Ns", name, "void ()"});
  EXPECT_TRUE(m.ok());
  auto v = rt.beginJit(*m, Tier::kTier0, 0);
  EXPECT_TRUE(v.ok());
  EXPECT_TRUE(rt.publishCode(*v, 64).ok());
  return Loaded{*mod, *m, *v};
}

// The registry: ids across reuse, and the errors of stale ids.
TEST(SlotReuse, RegistryIdsAreNewAndStaleIdsAreGone) {
  Runtime rt;
  const Loaded first = loadOne(rt, "/app/plugin.dll", 1, "Run");
  auto mod = &first.mod;
  auto m = &first.method;
  auto v = &first.version;
  ASSERT_TRUE(rt.unloadModule(*mod).ok());
  rt.drainReclamation();  // the grace period: the slots are reusable now

  const Loaded second = loadOne(rt, "/app/plugin2.dll", 2, "Run2");
  auto mod2 = &second.mod;
  auto m2 = &second.method;
  auto v2 = &second.version;
  // Same slots, new ids.
  EXPECT_EQ(*mod2 & 0xffffffff, *mod & 0xffffffff);
  EXPECT_EQ(*m2 & 0xffffffff, *m & 0xffffffff);
  EXPECT_EQ(*v2 & 0xffffffff, *v & 0xffffffff);
  EXPECT_NE(*mod2, *mod);
  EXPECT_NE(*m2, *m);
  EXPECT_NE(*v2, *v);
  // The stale ids find nothing, and say "gone", not "unknown".
  EXPECT_EQ(rt.unloadModule(*mod).error(), Errc::kModuleUnloaded);
  EXPECT_EQ(rt.registerMethod(*mod, MethodDesc{3, 0, "Ns", "X", "void ()"}).error(), Errc::kModuleUnloaded);
  EXPECT_EQ(rt.beginJit(*m, Tier::kTier1, 0).error(), Errc::kMethodUnloaded);
  EXPECT_EQ(rt.entryPoint(*m), 0u);
  EXPECT_EQ(rt.activate(*v).error(), Errc::kVersionGone);
  EXPECT_EQ(rt.retireVersion(*v).error(), Errc::kVersionGone);
  // An id of a later generation was never handed out.
  EXPECT_EQ(rt.beginJit(*m2 + (uint64_t{1} << 32), Tier::kTier1, 0).error(), Errc::kUnknownMethod);
  // The walk shows the new occupant under its own id only.
  int seen = 0;
  rt.walk(WalkLocking::kNone, [&](const VersionView& view) {
    ++seen;
    EXPECT_EQ(view.method_id, *m2);
    EXPECT_EQ(view.module_id, *mod2);
    EXPECT_EQ(view.version_id, *v2);
    EXPECT_EQ(view.name, "Run2");
  });
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(rt.registeredMethods(), 2u);
}

TEST(SlotReuse, TheLimitsAreNamedInTheirErrors) {
  EXPECT_NE(std::string(errcMessage(Errc::kTooManyModules)).find("1048575"), std::string::npos);
  EXPECT_NE(std::string(errcMessage(Errc::kTooManyMethods)).find("67108863"), std::string::npos);
  EXPECT_NE(std::string(errcMessage(Errc::kTooManyVersions)).find("268435455"), std::string::npos);
  EXPECT_EQ(Runtime::State::ModuleTable::kCapacity, 1048575u);
}

// Paging::kAhead. Slots of 24 bytes, chunks of 65 536 slots: 1.5 MB, so a region of
// whole huge pages is 4 chunks (6 MB, 3 huge pages); 12 chunks, 3 regions, 9 huge pages.
struct Pair {
  uint64_t a, b;
};
using Paged = SlotTable<Pair, 16, 12, Paging::kAhead>;
constexpr uint64_t kSlotsPerRegion = 4 * Paged::kChunkSize;
constexpr uint64_t kSecondPage = ((2u << 20) + 23) / 24;  // the first slot in the table's second 2 MB

// kB of anonymous huge pages in the mapping of /proc/self/smaps that contains `p`.
uint64_t hugeKbAround(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo, hi;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= addr && addr < hi;
      continue;
    }
    unsigned long kb;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %lu kB", &kb) == 1) return kb;
  }
  return 0;
}

// Whether the kernel makes transparent huge pages where advised (THP "always" or
// "madvise"): where it does not, populated pages are 4 KB ones and AnonHugePages says 0.
bool thpAdvisable() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(f, line);
  return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
}

// Fills the table without populating anything ahead: the number of claims that asked.
uint64_t fillWithoutPopulating(Paged& t) {
  uint64_t asked = 0;
  for (uint64_t i = 1; i <= Paged::kCapacity; ++i) {
    Paged::Claim c;
    if (!t.claim(&c)) break;
    new (c.storage) Pair{i, ~i};
    t.commit(c);
    asked += c.populate;
  }
  return asked;
}

TEST(SlotTable, PopulatesEachHugePageAheadOfTheWriterButTheFirst) {
  Paged t;
  std::vector<uint64_t> asked;
  for (uint64_t i = 1; i <= Paged::kCapacity; ++i) {
    Paged::Claim c;
    ASSERT_TRUE(t.claim(&c));
    new (c.storage) Pair{i, ~i};
    t.commit(c);
    if (!c.populate) continue;
    asked.push_back(Paged::indexOf(c.id));
    const Paged::PopulateStats st = t.populateAhead();
    if (asked.size() == 1 && st.failed == 0) {
      ASSERT_EQ(st.ahead, 2u) << "pages 1 and 2";
      // (Their slots' chunks are not claimed yet: the address from the region's start.)
      if (thpAdvisable()) {
        EXPECT_EQ(hugeKbAround(static_cast<const char*>(t.slotAddress(0)) + (2u << 20)), 2u * 2048)
            << "pages 1 and 2 present before the writer is there";
      }
    }
  }
  // The first claim past the middle of huge page 0 asked for pages 1 and 2; the first in
  // each of pages 1..7 for the one two ahead; nothing lies past page 8.
  std::vector<uint64_t> expected{((1u << 20) + 23) / 24};
  for (uint64_t page = 1; page <= 7; ++page) expected.push_back((page * (2u << 20) + 23) / 24);
  EXPECT_EQ(asked, expected);
  const Paged::PopulateStats st = t.populateAhead();
  EXPECT_EQ(st.ahead + st.late + st.failed, 8u);
  EXPECT_EQ(st.late, 0u) << "each was asked for a huge page or more before the writer came";
  for (uint64_t i = 1; i <= Paged::kCapacity; ++i) {
    const Pair* p = t.load(i);
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->a == i && p->b == ~i) << "slot " << i;
  }
  if (st.failed == 0 && thpAdvisable()) {
    // Region 0: its first 2 MB in 4 KB pages (a mapping of their own), the other two huge;
    // regions 1 and 2 huge.
    EXPECT_EQ(hugeKbAround(t.slotAddress(1)), 0u);
    EXPECT_EQ(hugeKbAround(t.slotAddress(kSecondPage)), 2u * 2048);
    EXPECT_EQ(hugeKbAround(t.slotAddress(kSlotsPerRegion)), 3u * 2048);
    EXPECT_EQ(hugeKbAround(t.slotAddress(2 * kSlotsPerRegion)), 3u * 2048);
  } else {
    std::printf("%llu populations refused, THP %s: AnonHugePages not checked\n", (unsigned long long)st.failed,
                thpAdvisable() ? "advisable" : "not advisable");
  }
}

// 4 KB pages resident in [p, p + n), p page-aligned (mincore).
size_t residentPages(const void* p, size_t n) {
  std::vector<unsigned char> v(n / 4096);
  if (mincore(const_cast<void*>(p), n, v.data()) != 0) return SIZE_MAX;
  size_t k = 0;
  for (unsigned char b : v) k += b & 1;
  return k;
}

// The table's first 2 MB stays in 4 KB pages: each block of kPopulateBlock is made
// present by the claim that enters it (one system call), not a fault at a time by the
// records' first writes; the block after it is not, until a claim enters it.
TEST(SlotTable, MakesEachBlockOfSmallPagesPresentAsTheWriterEntersIt) {
  if (!jitprov::populateSupported()) {  // Linux < 5.14: the pages fault in as before
    std::printf("MADV_POPULATE_WRITE refused: residency not checked\n");
    return;
  }
  Paged t;
  auto claimOne = [&t](uint64_t i) {
    Paged::Claim c;
    ASSERT_TRUE(t.claim(&c));
    new (c.storage) Pair{i, ~i};
    t.commit(c);
  };
  claimOne(1);
  const auto* base = static_cast<const unsigned char*>(t.slotAddress(0));  // the region's start
  constexpr size_t kBlock = jitprov::kPopulateBlock, kPages = kBlock / 4096;
  EXPECT_EQ(residentPages(base, kBlock), kPages) << "the first block, at the first claim";
  EXPECT_EQ(residentPages(base + kBlock, kBlock), 0u) << "the second block, before a claim entered it";
  const uint64_t first_in_second = kBlock / 24;  // 24-byte slots: the first whose last byte is there
  for (uint64_t i = 2; i < first_in_second; ++i) claimOne(i);
  EXPECT_EQ(residentPages(base + kBlock, kBlock), 0u) << "no claim in the second block yet";
  claimOne(first_in_second);
  EXPECT_EQ(residentPages(base + kBlock, kBlock), kPages) << "the second block, at the claim that entered it";
  EXPECT_EQ(residentPages(base + 2 * kBlock, kBlock), 0u);
}

TEST(SlotTable, AHugePageTheWriterReachedFirstIsCountedLate) {
  Paged t;
  EXPECT_EQ(fillWithoutPopulating(t), 8u);
  const Paged::PopulateStats st = t.populateAhead();  // every page asked for, at once
  EXPECT_EQ(st.ahead + st.late + st.failed, 8u);
  if (st.failed == 0) {
    EXPECT_EQ(st.late, 8u) << "pages 1..8, which the writer filled first";
  }
}

// Whether the registry's kAhead tables ask for population at all: huge pages wanted
// (JITPROV_HUGE_PAGES) and the kernel has MADV_POPULATE_WRITE (Linux 5.14); where not,
// they ask for nothing and count nothing.
uint64_t pagesAskedFor(uint64_t when_asked) {
  const bool asked = hugePagesWanted(Paging::kAhead) && jitprov::populateSupported();
  return asked ? when_asked : 0;
}

TEST(SlotTable, TheRegistrysMethodTableIsPopulatedOffTheRegisteringThread) {
  Runtime rt;
  auto mod = rt.registerModule("/app/Big.dll", false);
  ASSERT_TRUE(mod.ok());
  // 23 830 methods of 88-byte slots: past the middle of the table's first 2 MB (slot
  // 11 916), which asks for the second and third 2 MB, and not into the second (slot
  // 23 831 ends in it).
  for (uint32_t i = 1; i <= 23830; ++i)
    ASSERT_TRUE(rt.registerMethod(*mod, MethodDesc{i, 0, "Ns", "M" + std::to_string(i), "void ()"}).ok());
  rt.drainReclamation();  // the population runs on liburcu's call_rcu thread: waited for here
  const MemoryStats ms = rt.memoryStats();
  EXPECT_EQ(ms.huge_pages_ahead + ms.huge_pages_late + ms.huge_pages_failed, pagesAskedFor(2));
  EXPECT_EQ(ms.huge_pages_late, 0u);
}

TEST(SlotTable, TheRegistrysVersionTableIsPopulatedOffTheJitThread) {
  // Host mode: the code publications claim version slots. 16 400 versions of 64-byte
  // slots: past the middle of the version table's first 2 MB (slot 16 384), which asks
  // for its second and third 2 MB; 400 methods (and IL versions) stay in their tables'
  // first 2 MB, which ask for nothing.
  RuntimeConfig cfg;
  cfg.code_mode = CodeMode::kHost;
  Runtime rt(cfg);
  auto mod = rt.registerModule("/app/Big.dll", false);
  ASSERT_TRUE(mod.ok());
  std::vector<MethodId> methods;
  for (uint32_t i = 1; i <= 400; ++i) {
    auto m = rt.registerMethod(*mod, MethodDesc{i, 0, "Ns", "M" + std::to_string(i), "void ()"});
    ASSERT_TRUE(m.ok());
    methods.push_back(*m);
  }
  for (uint64_t v = 0; v < 16400; ++v) {
    HostCode code;
    code.code_start = 0x100000 + v * 0x40;
    code.code_size = 0x40;
    ASSERT_TRUE(rt.publishHostCode(methods[v % methods.size()], code).ok()) << v;
  }
  rt.drainReclamation();  // the population runs on liburcu's call_rcu thread: waited for here
  const MemoryStats ms = rt.memoryStats();
  EXPECT_EQ(ms.huge_pages_ahead + ms.huge_pages_late + ms.huge_pages_failed, pagesAskedFor(2));
  EXPECT_EQ(ms.huge_pages_late, 0u);
}

}  // namespace
}  // namespace jitprov
