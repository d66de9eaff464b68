// SPDX-License-Identifier: MIT
// NameArena (runtime/name_arena.h): what a method's strings become in the registry, and
// what the registry accounts for them.
#include <jitprov/runtime.h>

#include "name_arena.h"
#include "registry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace jitprov {
namespace {

TEST(NameArena, CopiesAreWholeAndStay) {
  NameArena a;
  std::vector<std::pair<const char*, std::string>> kept;
  // Short and long strings, across many chunks, all still intact at the end.
  for (int i = 0; i < 20000; ++i) {
    const std::string s = "Method_" + std::to_string(i) + std::string(size_t(i % 97), 'x') +
                          (i % 1000 == 0 ? std::string(40000, 'L') : "");
    kept.emplace_back(a.copy(s), s);
  }
  kept.emplace_back(a.copy(""), "");
  for (const auto& [p, s] : kept) {
    ASSERT_EQ(std::strlen(p), s.size());
    ASSERT_EQ(std::string(p), s);
  }
  EXPECT_GT(a.bytes(), 20000u * 8);
}

TEST(NameArena, InternedStringsAreStoredOnce) {
  NameArena a;
  std::set<const char*> distinct;
  for (int i = 0; i < 10000; ++i) {
    const std::string ns = "Contoso.Type" + std::to_string(i % 37);
    const char* p = a.intern(ns);
    EXPECT_EQ(std::string(p), ns);
    EXPECT_EQ(NameArena::internedLength(p), ns.size());
    distinct.insert(p);
  }
  EXPECT_EQ(distinct.size(), 37u);
  // Equal prefixes, different lengths, and the empty string are different strings.
  EXPECT_NE(a.intern("Contoso.Type1"), a.intern("Contoso.Type10"));
  EXPECT_EQ(std::string(a.intern("")), "");
  EXPECT_EQ(NameArena::internedLength(a.intern("")), 0u);
  const std::string big(70000, 'n');  // longer than a chunk
  EXPECT_EQ(NameArena::internedLength(a.intern(big)), big.size());
  EXPECT_EQ(a.intern(big), a.intern(big));
  EXPECT_EQ(a.intern(""), a.intern(""));
  const uint64_t before = a.bytes();
  for (int i = 0; i < 1000; ++i) a.intern("Contoso.Type" + std::to_string(i % 37));
  EXPECT_EQ(a.bytes(), before) << "interning a known string allocates nothing";
}

TEST(NameArena, APrefixIsReadBackBeforeTheString) {
  NameArena a;
  for (uint64_t k : {uint64_t{1}, uint64_t{0xdeadbeefcafef00d}, ~uint64_t{0}}) {
    const char* p = a.copyAfter("name", &k, sizeof k);
    uint64_t back = 0;
    std::memcpy(&back, p - sizeof back, sizeof back);
    EXPECT_EQ(back, k);
    EXPECT_STREQ(p, "name");
  }
}

TEST(NameArena, TheRegistryCountsStringsOncePerModule) {
  Runtime rt;
  const ModuleId mod = *rt.registerModule("/app/a.dll", true);
  const uint64_t empty = rt.memoryStats().method_bytes;
  // 1000 methods sharing one namespace and one signature: those are stored once.
  for (int i = 0; i < 1000; ++i)
    ASSERT_TRUE(
        rt.registerMethod(mod, MethodDesc{1, 0, "Contoso.Orders", "Submit_" + std::to_string(i), "(int32)", 0}).ok());
  const MemoryStats m = rt.memoryStats();
  const uint64_t per_method = (m.method_bytes - empty) / 1000;
  EXPECT_LT(per_method, Runtime::State::MethodTable::slotBytes() + 32) << "slot + a short name, not three strings";
  // Host keys live beside the names: found again, and forgotten at unload.
  const ModuleId hmod = *rt.registerModule("/app/h.dll", true);
  const MethodId hm = *rt.registerMethod(hmod, MethodDesc{1, 0, "H", "f", "()V", 0x1234567890abcdefULL});
  EXPECT_EQ(*rt.findMethod(0x1234567890abcdefULL), hm);
  ASSERT_TRUE(rt.unloadModule(hmod).ok());
  EXPECT_FALSE(rt.findMethod(0x1234567890abcdefULL).ok());
  ASSERT_TRUE(rt.unloadModule(mod).ok());
  rt.drainReclamation();
  EXPECT_EQ(rt.memoryStats().method_bytes, 0u) << "every string freed with its module";
}

}  // namespace
}  // namespace jitprov
