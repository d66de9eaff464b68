// SPDX-License-Identifier: MIT
// jitprov-verify --top's inventory (tools/verify/inventory.h) on synthetic records, as
// the reader hands them over: each body counted once (a method_load and the rundowns
// that list it again), bytes and bodies by module and tier, the lists' order and length,
// processes and runtime instances kept apart.
#include "inventory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

using jitprov::verify::Inventory;
using jitprov::verify::MethodRecordView;

MethodRecordView body(uint64_t method, uint64_t version, uint64_t module, uint32_t size, uint64_t tier, const char* ns,
                      const char* name) {
  MethodRecordView r;
  r.method_id = method;
  r.version_id = version;
  r.module_id = module;
  r.code_start = 0x1000 * version;
  r.code_size = size;
  r.tier = tier;
  r.name_space = ns;
  r.name = name;
  r.signature = "()V";
  return r;
}

TEST(VerifyInventory, CountsEachBodyOnceByModuleTierAndMethod) {
  Inventory inv;
  inv.addModule(7, 1, 1, "java");
  inv.addModule(7, 1, 2, "hotspot-stubs");
  // Method 10: three bodies (tier0, tier1, tier1 again), each seen in a method_load and
  // again in two rundowns.
  for (int seen = 0; seen < 3; ++seen) {
    inv.addRecord(7, 1, body(10, 100, 1, 200, 0, "a.B", "hot"));
    inv.addRecord(7, 1, body(10, 101, 1, 900, 1, "a.B", "hot"));
    inv.addRecord(7, 1, body(10, 102, 1, 800, 1, "a.B", "hot"));
  }
  inv.addRecord(7, 1, body(11, 110, 1, 5000, 4, "a.C", "big"));
  inv.addRecord(7, 1, body(12, 120, 2, 50, 0, "", "stub"));
  // Another process, and another runtime instance of the same one: apart.
  inv.addRecord(8, 1, body(10, 100, 1, 1, 0, "x.Y", "other"));
  inv.addRecord(7, 2, body(10, 100, 1, 1, 0, "x.Y", "other"));

  const nlohmann::json j = inv.toJson(7, 1, 2);
  EXPECT_EQ(j["methods"], 3u);
  EXPECT_EQ(j["bodies"], 5u);
  EXPECT_EQ(j["bytes"], 200u + 900 + 800 + 5000 + 50);
  EXPECT_EQ(j["by_tier"]["tier0"]["bodies"], 2u);
  EXPECT_EQ(j["by_tier"]["tier0"]["bytes"], 250u);
  EXPECT_EQ(j["by_tier"]["tier1"]["bodies"], 2u);
  EXPECT_EQ(j["by_tier"]["optimized"]["bytes"], 5000u);
  ASSERT_EQ(j["modules"].size(), 2u);
  EXPECT_EQ(j["modules"][0]["path"], "java");  // the most bytes first
  EXPECT_EQ(j["modules"][0]["bodies"], 4u);
  EXPECT_EQ(j["modules"][1]["path"], "hotspot-stubs");
  EXPECT_EQ(j["modules"][1]["by_tier"]["tier0"]["bytes"], 50u);
  ASSERT_EQ(j["largest"].size(), 2u);  // --top 2
  EXPECT_EQ(j["largest"][0]["name"], "big");
  EXPECT_EQ(j["largest"][0]["largest_bytes"], 5000u);
  EXPECT_EQ(j["largest"][1]["name"], "hot");
  EXPECT_EQ(j["largest"][1]["largest_bytes"], 900u);
  EXPECT_EQ(j["largest"][1]["bytes"], 1900u);
  ASSERT_EQ(j["most_bodies"].size(), 2u);
  EXPECT_EQ(j["most_bodies"][0]["name"], "hot");
  EXPECT_EQ(j["most_bodies"][0]["bodies"], 3u);
  EXPECT_EQ(j["most_bodies"][0]["tiers"]["tier1"], 2u);
  EXPECT_EQ(j["most_bodies"][0]["module"], "java");
  EXPECT_EQ(j["most_bodies"][1]["method_id"], 11u);  // ties (one body each): by method id
  EXPECT_EQ(j["namespaces"][0]["namespace"], "a.C");
  EXPECT_EQ(j["namespaces"][1]["namespace"], "a.B");
  EXPECT_EQ(j["namespaces"][1]["methods"], 1u);

  EXPECT_EQ(inv.toJson(8, 1, 5)["bodies"], 1u);
  EXPECT_EQ(inv.toJson(7, 2, 5)["largest"][0]["name"], "other");
  const nlohmann::json none = inv.toJson(9, 0, 5);
  EXPECT_EQ(none["bodies"], 0u);
  EXPECT_TRUE(none["largest"].empty());
}

TEST(VerifyInventory, TiersOutsideTheAbiAreOther) {
  Inventory inv;
  inv.addRecord(1, 0, body(1, 1, 1, 10, 40, "n", "a"));
  inv.addRecord(1, 0, body(2, 2, 1, 20, 41, "n", "b"));
  const nlohmann::json j = inv.toJson(1, 0, 10);
  EXPECT_EQ(j["by_tier"]["other"]["bodies"], 2u);
  EXPECT_EQ(j["by_tier"]["other"]["bytes"], 30u);
  EXPECT_EQ(j["modules"][0]["path"], "");  // no module event seen
}

}  // namespace

// --- the processes of a session (tools/verify/lives.h) ----------------------------------

namespace {

using jitprov::verify::Lives;
using jitprov::verify::ProcessId;

TEST(VerifyLives, AVpidIsItsOwnKeyUntilAnotherProcessSharesIt) {
  Lives l;
  const ProcessId a{1234, 0};
  EXPECT_EQ(l.keyOf(a), 1234);
  EXPECT_EQ(l.onModuleLoad(a, 1, 1), 1234);
  EXPECT_EQ(l.onModuleLoad(a, 1, 3), 1234);  // out of order: ids taken, then emitted
  EXPECT_EQ(l.onModuleLoad(a, 1, 2), 1234);
  EXPECT_EQ(l.onModuleLoad(a, 2, 1), 1234);  // a second runtime's own module 1
  EXPECT_EQ(l.label(1234), "process 1234");
  EXPECT_EQ(l.reused(), 0u);
}

TEST(VerifyLives, AModuleIdLoadedAgainBeginsTheVpidsNextProcess) {
  Lives l;
  const ProcessId a{77, 0};
  EXPECT_EQ(l.onModuleLoad(a, 1, 1), 77);
  EXPECT_EQ(l.onModuleLoad(a, 1, 2), 77);
  // The next process of pid 77: its first module is 1 again.
  const int64_t second = l.onModuleLoad(a, 1, 1);
  EXPECT_NE(second, 77);
  EXPECT_EQ(second & 0xffffffff, 77);
  EXPECT_EQ(l.keyOf(a), second);               // later events are its
  EXPECT_EQ(l.onModuleLoad(a, 1, 2), second);  // its own module 2 begins nothing new
  const int64_t third = l.onModuleLoad(a, 1, 2);
  EXPECT_NE(third, second);
  EXPECT_EQ(l.identity(third).life, 2u);
  EXPECT_EQ(l.label(second), "process 77 (its 2nd process)");
  EXPECT_EQ(l.label(third), "process 77 (its 3rd process)");
  EXPECT_EQ(l.reused(), 2u);
  // Read again: the same events get the same keys.
  l.rewind();
  EXPECT_EQ(l.onModuleLoad(a, 1, 1), 77);
  EXPECT_EQ(l.onModuleLoad(a, 1, 2), 77);
  EXPECT_EQ(l.onModuleLoad(a, 1, 1), second);
  EXPECT_EQ(l.onModuleLoad(a, 1, 2), second);
  EXPECT_EQ(l.onModuleLoad(a, 1, 2), third);
}

TEST(VerifyLives, OneVpidInTwoPidNamespacesIsTwoProcesses) {
  Lives l;
  const ProcessId x{1, 4026532001}, y{1, 4026532002};
  const int64_t kx = l.keyOf(x), ky = l.keyOf(y);
  EXPECT_EQ(kx, 1);
  EXPECT_NE(ky, kx);
  EXPECT_EQ(l.identity(ky).pidns, 4026532002u);
  EXPECT_EQ(l.onModuleLoad(x, 1, 1), kx);  // each its own module 1
  EXPECT_EQ(l.onModuleLoad(y, 1, 1), ky);
  EXPECT_EQ(l.label(kx), "process 1 (pid namespace 4026532001)");
  EXPECT_EQ(l.reused(), 0u);
}

TEST(VerifyLives, ARundownIdNotAboveTheLastBegunBeginsTheNextProcess) {
  Lives l;
  const ProcessId a{500, 0};
  EXPECT_EQ(l.onRundownBegin(a, 1, 1), 500);
  EXPECT_EQ(l.onRundownBegin(a, 1, 3), 500);  // ids a session skipped (another session's)
  EXPECT_EQ(l.onRundownBegin(a, 2, 1), 500);  // a second runtime's own
  // The next process of pid 500 (its first rundown before any module, as .NET's).
  const int64_t second = l.onRundownBegin(a, 1, 1);
  EXPECT_NE(second, 500);
  EXPECT_EQ(l.onModuleLoad(a, 1, 1), second);  // its first module: still its
  EXPECT_EQ(l.onRundownBegin(a, 1, 2), second);
  EXPECT_EQ(l.onRundownBegin(a, 2, 1), second);  // the old life's instance 2 is forgotten
  EXPECT_EQ(l.reused(), 1u);
}

}  // namespace
