// SPDX-License-Identifier: MIT
// Unit tests of libjitprov's registry: every operation and its errors.
#include <jitprov/runtime.h>
#include <jitprov/utf8.h>

#include "version_record.h"

#include <algorithm>
#include <atomic>
#include <tuple>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace jitprov {
namespace {

MethodDesc desc(std::string_view name, uint32_t token = 0x06000001) {
  return MethodDesc{token, 0x0096, "Contoso.Orders", name, "int32 (string, int64)"};
}

struct Seen {
  std::vector<VersionView> views;
  std::vector<std::string> names;
};

Seen walkAll(const Runtime& rt, WalkLocking locking = WalkLocking::kNone, WalkStats* st = nullptr) {
  Seen s;
  WalkStats w = rt.walk(locking, [&](const VersionView& v) {
    s.views.push_back(v);
    s.names.push_back(std::string(v.name_space) + "." + std::string(v.name) + std::string(v.signature));
  });
  if (st != nullptr) *st = w;
  return s;
}

// Compiles `tier` code for `m` end to end: add version, publish, activate.
CodeRange jit(Runtime& rt, MethodId m, Tier tier, uint32_t size = 256, bool activate = true) {
  auto v = rt.beginJit(m, tier);
  EXPECT_TRUE(v.ok()) << v.message();
  auto r = rt.publishCode(*v, size);
  EXPECT_TRUE(r.ok()) << r.message();
  if (activate) {
    EXPECT_TRUE(rt.activate(*v).ok());
  }
  return *r;
}

class RuntimeTest : public ::testing::Test {
 protected:
  Runtime rt;
  ModuleId mod = 0;
  void SetUp() override {
    auto r = rt.registerModule("/app/Contoso.Orders.dll", true);
    ASSERT_TRUE(r.ok());
    mod = *r;
  }
};

// rundown_end's method counts (docs/spec.md): the methods with versions kept, each once,
// and of them those only the catch-up kept. Between the first pass's two batches: a
// walked method gets a new version (one method, in both passes), a walked method without
// code gets its first, a walked method's module unloads and a new method takes its slot
// (another method, though its slot was counted), and a method beyond the walk's slots.
TEST(WalkComplete, CountsTheMethodsOfItsVersionsEachOnce) {
  Runtime rt;
  auto gone = rt.registerModule("/app/gone.dll", true);
  auto keep = rt.registerModule("/app/keep.dll", false);
  ASSERT_TRUE(gone.ok() && keep.ok());
  auto g = rt.registerMethod(*gone, desc("Gone"));  // slot 1
  ASSERT_TRUE(g.ok());
  jit(rt, *g, Tier::kTier0);
  std::vector<MethodId> k;  // slots 2..1500: two batches of the walk (1024 methods each)
  for (int i = 0; i < 1499; ++i) {
    auto m = rt.registerMethod(*keep, desc("K" + std::to_string(i)));
    ASSERT_TRUE(m.ok());
    k.push_back(*m);
    if (i != 1) jit(rt, *m, Tier::kTier0);  // k[1] (slot 3): no code yet
  }
  MethodId reuser = 0, beyond = 0;
  bool done = false;
  const CompleteWalk cw = rt.walkComplete(
      WalkLocking::kNone, [](uint64_t) {}, [](const VersionView&) { return true; },
      [&] {
        if (done) return;
        done = true;
        jit(rt, k[0], Tier::kTier1);  // walked: in both passes
        jit(rt, k[1], Tier::kTier0);  // walked without code: the catch-up's
        ASSERT_TRUE(rt.unloadModule(*gone).ok());
        rt.drainReclamation();  // its slot free again: the next registration takes it
        auto n = rt.registerMethod(*keep, desc("Reuser"));
        ASSERT_TRUE(n.ok());
        reuser = *n;
        jit(rt, reuser, Tier::kTier0);
        auto x = rt.registerMethod(*keep, desc("Beyond"));
        ASSERT_TRUE(x.ok());
        beyond = *x;
        jit(rt, beyond, Tier::kTier0);
      });
  ASSERT_TRUE(done);
  EXPECT_EQ(reuser & 0xffffffffu, *g & 0xffffffffu) << "the new method did not take the unloaded one's slot";
  EXPECT_NE(reuser, *g);
  EXPECT_EQ(cw.walk.methods, 1499u);    // Gone and the 1498 K with code
  EXPECT_EQ(cw.caught_up, 4u);          // k[0]'s tier 1, k[1], Reuser, Beyond
  EXPECT_EQ(cw.caught_up_methods, 3u);  // k[1], Reuser, Beyond: k[0] was walked
  EXPECT_EQ(cw.methods(), 1502u);
  EXPECT_EQ(cw.walk.versions + cw.caught_up, 1499u + 4u);

  // The counts are of the versions the visitor kept: one method's refused, one fewer.
  const CompleteWalk some = rt.walkComplete(
      WalkLocking::kNone, [](uint64_t) {}, [&](const VersionView& v) { return v.method_id != k[0]; });
  EXPECT_EQ(some.walk.methods, cw.methods() - 2);  // Gone unloaded, k[0] refused
  EXPECT_EQ(some.walk.versions, 1499u + 4u - 1 - 2);
  EXPECT_EQ(some.caught_up_methods, 0u);
}

// The rundown's own walk (walkCompleteRecords: the event's record filled in place) hands
// over exactly what walkComplete's views say, field by field, with each name's length
// (also of names longer than an event carries), and the same counts: over a registry of
// two walk batches with tier-ups, a method without code, a retired version and an
// unloaded module; then with versions published between the first pass's batches, which
// its catch-up adds.
using RecordKey = std::tuple<uint64_t, uint64_t, uint64_t, uint32_t, uint8_t, uint16_t, uint32_t, uint64_t, uint32_t,
                             uint32_t, uint32_t, uint64_t, std::string, std::string, std::string>;
RecordKey keyOf(const VersionView& v) {
  return {v.method_id,
          v.module_id,
          v.version_id,
          v.rejit_id,
          uint8_t(v.tier),
          v.host_tier,
          v.host_version,
          v.code_start,
          v.code_size,
          v.method_token,
          v.method_flags,
          v.publish_seq,
          std::string(v.name_space),
          std::string(v.name),
          std::string(v.signature)};
}
RecordKey keyOf(const trace::VersionRecord& rec) {
  const jitprov_method_record& r = rec.r;
  return {r.method_id,
          r.module_id,
          r.version_id,
          r.rejit_id,
          r.tier,
          r.host_tier,
          r.host_version,
          r.code_start,
          r.code_size,
          r.method_token,
          r.method_flags,
          r.publish_seq,
          std::string(r.name_space, rec.ns_len),
          std::string(r.name, rec.name_len),
          std::string(r.signature, rec.sig_len)};
}

TEST(WalkCompleteRecords, FillsWhatTheViewsSay) {
  Runtime rt;
  auto gone = rt.registerModule("/app/gone.dll", true);
  auto keep = rt.registerModule("/app/keep.dll", false);
  ASSERT_TRUE(gone.ok() && keep.ok());
  jit(rt, *rt.registerMethod(*gone, desc("Gone")), Tier::kTier0);
  const std::string longNs(5000, 'n'), longName(4097, 'm'), longSig(6000, 's');
  auto overlong = rt.registerMethod(*keep, MethodDesc{0x06000002, 0x96, longNs, longName, longSig});
  ASSERT_TRUE(overlong.ok()) << overlong.message();
  jit(rt, *overlong, Tier::kTier0);
  size_t live = 1;  // versions live: the overlong method's so far
  std::vector<MethodId> k;
  for (int i = 0; i < 1500; ++i) {
    auto m = rt.registerMethod(*keep, desc("K" + std::to_string(i), 0x06000100 + uint32_t(i)));
    ASSERT_TRUE(m.ok());
    k.push_back(*m);
    if (i == 1) continue;  // no code yet
    if (i == 9) {          // a tier 0 published, then retired
      auto v0 = rt.beginJit(*m, Tier::kTier0);
      ASSERT_TRUE(v0.ok() && rt.publishCode(*v0, 64).ok());
      ASSERT_TRUE(rt.retireVersion(*v0).ok());
    } else {
      jit(rt, *m, Tier::kTier0, 64 + uint32_t(i));
      ++live;
    }
    if (i % 7 == 0) {
      jit(rt, *m, Tier::kTier1, 512);
      ++live;
    }
  }
  ASSERT_TRUE(rt.unloadModule(*gone).ok());

  const auto byViews = [&rt](const auto& between) {
    std::multiset<RecordKey> got;
    const CompleteWalk cw = rt.walkComplete(
        WalkLocking::kNone, [](uint64_t) {},
        [&](const VersionView& v) {
          got.insert(keyOf(v));
          return true;
        },
        between);
    return std::make_pair(got, cw);
  };
  const auto byRecords = [&rt](const auto& between) {
    std::multiset<RecordKey> got;
    trace::VersionRecord rec;
    rec.r.runtime_instance = rt.instance();
    const CompleteWalk cw = rt.walkCompleteRecords(
        WalkLocking::kNone, [](uint64_t) {}, &rec,
        [&] {
          EXPECT_EQ(rec.r.runtime_instance, rt.instance());
          got.insert(keyOf(rec));
          return true;
        },
        between);
    return std::make_pair(got, cw);
  };
  const auto [views, vw] = byViews([] {});
  const auto [records, rw] = byRecords([] {});
  EXPECT_EQ(views.size(), live);
  EXPECT_TRUE(records == views) << records.size() << " records against " << views.size() << " views";
  EXPECT_EQ(std::get<12>(*std::find_if(records.begin(), records.end(),
                                       [&](const RecordKey& r) { return std::get<0>(r) == *overlong; }))
                .size(),
            longNs.size());
  EXPECT_EQ(rw.walk.versions, vw.walk.versions);
  EXPECT_EQ(rw.walk.methods, vw.walk.methods);
  EXPECT_EQ(rw.caught_up, 0u);

  // The catch-up: k[0]'s tier 1 and k[1]'s first code, published between the batches.
  bool done = false;
  const auto [caught, cw] = byRecords([&] {
    if (done) return;
    done = true;
    jit(rt, k[0], Tier::kTier1);
    jit(rt, k[1], Tier::kTier0);
  });
  ASSERT_TRUE(done);
  EXPECT_EQ(cw.caught_up, 2u);
  EXPECT_EQ(cw.caught_up_methods, 1u);  // k[1]: k[0] was walked
  const auto [after, aw] = byViews([] {});
  EXPECT_TRUE(caught == after) << caught.size() << " records against " << after.size() << " views after";
  EXPECT_EQ(cw.walk.versions + cw.caught_up, aw.walk.versions);
}

// The engine's own path (walkCompleteRecords with a trace::RecordEmitter, emit() inlined
// into the walk): every live version emitted once, with the walk's counts agreeing, the
// stall window called every window_mask + 1 events; after a cancel, nothing emitted and
// every version counted as abandoned (a rundown cut short). No session: the events go
// nowhere, the counts are the emitter's.
TEST(WalkCompleteRecords, TheEnginesEmitterCountsWhatItEmits) {
  Runtime rt;
  auto mod = rt.registerModule("/app/e.dll", false);
  ASSERT_TRUE(mod.ok());
  uint64_t live = 0;
  for (int i = 0; i < 2500; ++i) {  // three walk batches
    auto m = rt.registerMethod(*mod, desc("E" + std::to_string(i), 0x06000100 + uint32_t(i)));
    ASSERT_TRUE(m.ok());
    if (i % 5 == 4) continue;  // no code
    jit(rt, *m, Tier::kTier0, 64 + uint32_t(i));
    ++live;
    if (i % 3 == 0) {
      jit(rt, *m, Tier::kTier1, 512);
      ++live;
    }
  }
  const trace::Rundown to{trace::Sessions{}, rt.instance(), 7};
  std::atomic<bool> cancel{false};
  uint64_t windows = 0;
  const auto count = [](void* p) { ++*static_cast<uint64_t*>(p); };
  trace::RecordEmitter out(to, cancel, 15, count, &windows);
  EXPECT_EQ(out.rec.r.runtime_instance, rt.instance());
  uint64_t begun = 0;
  const CompleteWalk cw = rt.walkCompleteRecords(
      WalkLocking::kNone, [&](uint64_t) { ++begun; }, out, [] {});
  EXPECT_EQ(begun, 1u);
  EXPECT_EQ(cw.walk.versions, live);
  EXPECT_EQ(out.emitted, live);
  EXPECT_EQ(out.abandoned, 0u);
  EXPECT_EQ(windows, live / 16);
  EXPECT_EQ(cw.walk.methods, 2000u);

  cancel = true;
  windows = 0;
  trace::RecordEmitter cut(to, cancel, 15, count, &windows);
  const CompleteWalk none = rt.walkCompleteRecords(
      WalkLocking::kNone, [](uint64_t) {}, cut, [] {});
  EXPECT_EQ(none.walk.versions, 0u);
  EXPECT_EQ(none.walk.methods, 0u);
  EXPECT_EQ(cut.emitted, 0u);
  EXPECT_EQ(cut.abandoned, live);
  EXPECT_EQ(windows, 0u);
}

TEST_F(RuntimeTest, RegistersModulesAndMethodsWithIncreasingIds) {
  auto a = rt.registerMethod(mod, desc("Submit"));
  auto b = rt.registerMethod(mod, desc("Cancel"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(*a, 0u);
  EXPECT_EQ(*b, *a + 1);
  EXPECT_EQ(rt.registeredMethods(), 2u);
  auto mod2 = rt.registerModule("/app/Lib.dll", false);
  ASSERT_TRUE(mod2.ok());
  EXPECT_EQ(*mod2, mod + 1);
  std::vector<ModuleView> mods;
  EXPECT_EQ(rt.walkModules([&](const ModuleView& m) { mods.push_back(m); }), 2u);
  ASSERT_EQ(mods.size(), 2u);
  EXPECT_EQ(mods[0].path, "/app/Contoso.Orders.dll");
  EXPECT_TRUE(mods[0].collectible);
  EXPECT_FALSE(mods[1].collectible);
}

TEST_F(RuntimeTest, RejectsBadNames) {
  EXPECT_EQ(rt.registerMethod(mod, desc("bad\xC3")).error(), Errc::kInvalidUtf8);          // truncated
  EXPECT_EQ(rt.registerMethod(mod, desc("bad\xC0\xAF")).error(), Errc::kInvalidUtf8);      // overlong
  EXPECT_EQ(rt.registerMethod(mod, desc("bad\xED\xA0\x80")).error(), Errc::kInvalidUtf8);  // surrogate
  EXPECT_EQ(rt.registerMethod(mod, desc(std::string_view("nul\0in", 6))).error(), Errc::kInvalidUtf8);
  std::string big(kMaxNameBytes + 1, 'x');
  EXPECT_EQ(rt.registerMethod(mod, desc(big)).error(), Errc::kNameTooLong);
  big.pop_back();
  EXPECT_TRUE(rt.registerMethod(mod, desc(big)).ok());
  EXPECT_TRUE(rt.registerMethod(mod, desc("Größe\xE2\x82\xAC")).ok());
  EXPECT_EQ(rt.registerModule("bad\xFF", true).error(), Errc::kInvalidUtf8);
  // Nothing failed half way: only the two good methods exist.
  EXPECT_EQ(rt.registeredMethods(), 2u);
}

TEST_F(RuntimeTest, RejectsUnknownIds) {
  EXPECT_EQ(rt.registerMethod(999, desc("X")).error(), Errc::kUnknownModule);
  EXPECT_EQ(rt.registerMethod(0, desc("X")).error(), Errc::kUnknownModule);
  EXPECT_EQ(rt.beginJit(12345, Tier::kTier0).error(), Errc::kUnknownMethod);
  EXPECT_EQ(rt.publishCode(777, 16).error(), Errc::kUnknownVersion);
  EXPECT_EQ(rt.activate(777).error(), Errc::kUnknownVersion);
  EXPECT_EQ(rt.requestRejit(12345).error(), Errc::kUnknownMethod);
  EXPECT_EQ(rt.unloadModule(999).error(), Errc::kUnknownModule);
  EXPECT_EQ(rt.entryPoint(12345), 0u);
  EXPECT_EQ(rt.entryPointLocked(12345).error(), Errc::kUnknownMethod);
  EXPECT_FALSE(rt.recordCall(12345));
  auto m = rt.registerMethod(mod, desc("X"));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(rt.beginJit(*m, static_cast<Tier>(9)).error(), Errc::kInvalidArgument);
}

TEST_F(RuntimeTest, PublishErrors) {
  auto m = rt.registerMethod(mod, desc("Submit"));
  ASSERT_TRUE(m.ok());
  auto v = rt.beginJit(*m, Tier::kTier0);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(rt.publishCode(*v, 0).error(), Errc::kZeroCodeSize);
  EXPECT_EQ(rt.activate(*v).error(), Errc::kNotPublished);
  ASSERT_TRUE(rt.publishCode(*v, 100).ok());
  EXPECT_EQ(rt.publishCode(*v, 100).error(), Errc::kAlreadyPublished);
}

TEST_F(RuntimeTest, UnpublishedVersionIsSkippedByTheWalk) {
  auto m = rt.registerMethod(mod, desc("Submit"));
  ASSERT_TRUE(m.ok());
  auto v = rt.beginJit(*m, Tier::kTier0);
  ASSERT_TRUE(v.ok());
  WalkStats st;
  EXPECT_TRUE(walkAll(rt, WalkLocking::kNone, &st).views.empty());
  EXPECT_EQ(st.skipped, 1u);
  EXPECT_EQ(st.methods, 0u);  // methods with versions visited: none yet
  auto r = rt.publishCode(*v, 300);
  ASSERT_TRUE(r.ok());
  Seen s = walkAll(rt, WalkLocking::kNone, &st);
  ASSERT_EQ(s.views.size(), 1u);
  EXPECT_EQ(st.skipped, 0u);
  EXPECT_EQ(st.methods, 1u);
  const VersionView& x = s.views[0];
  EXPECT_EQ(x.version_id, *v);
  EXPECT_EQ(x.method_id, *m);
  EXPECT_EQ(x.module_id, mod);
  EXPECT_EQ(x.rejit_id, 0u);
  EXPECT_EQ(x.tier, Tier::kTier0);
  EXPECT_EQ(x.code_start, r->start);
  EXPECT_EQ(x.code_size, 300u);
  EXPECT_EQ(x.method_token, 0x06000001u);
  EXPECT_EQ(x.method_flags, 0x0096u);
  EXPECT_EQ(s.names[0], "Contoso.Orders.Submitint32 (string, int64)");
}

TEST_F(RuntimeTest, ActivationBackpatchesTheEntryPoint) {
  auto m = rt.registerMethod(mod, desc("Submit"));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(rt.entryPoint(*m), 0u);
  CodeRange t0 = jit(rt, *m, Tier::kTier0);
  EXPECT_EQ(rt.entryPoint(*m), t0.start);
  EXPECT_EQ(*rt.entryPointLocked(*m), t0.start);
  CodeRange t1 = jit(rt, *m, Tier::kTier1);
  EXPECT_EQ(rt.entryPoint(*m), t1.start);
  // OSR code is never an entry point.
  auto osr = rt.beginJit(*m, Tier::kTier1Osr, 42);
  ASSERT_TRUE(osr.ok());
  ASSERT_TRUE(rt.publishCode(*osr, 64).ok());
  EXPECT_EQ(rt.activate(*osr).error(), Errc::kInvalidArgument);
  EXPECT_EQ(rt.entryPoint(*m), t1.start);
  Seen s = walkAll(rt);
  ASSERT_EQ(s.views.size(), 3u);  // newest first: osr, tier1, tier0 all live
  EXPECT_EQ(s.views[0].tier, Tier::kTier1Osr);
  EXPECT_EQ(s.views[0].osr_il_offset, 42u);
  EXPECT_EQ(s.views[1].tier, Tier::kTier1);
  EXPECT_EQ(s.views[2].tier, Tier::kTier0);
}

TEST_F(RuntimeTest, TierUpFiresExactlyOnceAtTheThreshold) {
  auto m = rt.registerMethod(mod, desc("Hot"));
  ASSERT_TRUE(m.ok());
  int fired_at = -1;
  int fired = 0;
  for (int i = 1; i <= 100; ++i) {
    if (rt.recordCall(*m)) {
      ++fired;
      fired_at = i;
    }
  }
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(fired_at, 30);
  // The count stops there: one that went on (32 bits) fired again after 2^32 calls.
  EXPECT_EQ(rt.callsCounted(*m), 30u);
  Runtime custom(RuntimeConfig{.tier_up_threshold = 3});
  auto mo = custom.registerModule("m", false);
  auto cm = custom.registerMethod(*mo, desc("C"));
  ASSERT_TRUE(cm.ok());
  EXPECT_FALSE(custom.recordCall(*cm));
  EXPECT_FALSE(custom.recordCall(*cm));
  EXPECT_TRUE(custom.recordCall(*cm));
  EXPECT_FALSE(custom.recordCall(*cm));
}

TEST_F(RuntimeTest, RejitAddsAnIlVersionAndResetsTheEntryPoint) {
  auto m = rt.registerMethod(mod, desc("Submit"));
  ASSERT_TRUE(m.ok());
  CodeRange t0 = jit(rt, *m, Tier::kTier0);
  auto r1 = rt.requestRejit(*m);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(*r1, 1u);
  EXPECT_EQ(rt.entryPoint(*m), 0u);  // back to the prestub
  CodeRange rj = jit(rt, *m, Tier::kInstrumented);
  EXPECT_EQ(rt.entryPoint(*m), rj.start);
  auto r2 = rt.requestRejit(*m);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(*r2, 2u);
  Seen s = walkAll(rt);
  ASSERT_EQ(s.views.size(), 2u);  // IL version 2 has no code yet
  EXPECT_EQ(s.views[0].rejit_id, 1u);
  EXPECT_EQ(s.views[0].tier, Tier::kInstrumented);
  EXPECT_EQ(s.views[1].rejit_id, 0u);
  EXPECT_EQ(s.views[1].code_start, t0.start);
}

// A method's first IL version exists once its code is first needed: a method never
// compiled costs no IL version node; beginJit, or a ReJIT request before any code,
// creates it (rejit 0), and an unload frees whatever exists.
TEST_F(RuntimeTest, TheFirstIlVersionComesWithTheFirstCode) {
  auto a = rt.registerMethod(mod, desc("Never"));
  auto b = rt.registerMethod(mod, desc("Compiled"));
  auto c = rt.registerMethod(mod, desc("RejitFirst"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const uint64_t before = rt.memoryStats().version_bytes;
  EXPECT_EQ(walkAll(rt).views.size(), 0u);
  CodeRange t0 = jit(rt, *b, Tier::kTier0);
  const uint64_t one = rt.memoryStats().version_bytes - before;  // an IL version and a native one
  EXPECT_GT(one, 0u);
  CodeRange t1 = jit(rt, *b, Tier::kTier1);
  const uint64_t native = rt.memoryStats().version_bytes - before - one;  // a native version only
  EXPECT_GT(one, native);
  auto r = rt.requestRejit(*c);  // IL versions 0 and 1 at once
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 1u);
  EXPECT_EQ(rt.memoryStats().il_versions, 1u);
  CodeRange rj = jit(rt, *c, Tier::kInstrumented);
  Seen s = walkAll(rt);
  ASSERT_EQ(s.views.size(), 3u);
  std::map<uint64_t, const VersionView*> by_start;
  for (const VersionView& v : s.views) by_start[v.code_start] = &v;
  ASSERT_TRUE(by_start.count(t0.start) && by_start.count(t1.start) && by_start.count(rj.start));
  EXPECT_EQ(by_start[t0.start]->rejit_id, 0u);
  EXPECT_EQ(by_start[t1.start]->rejit_id, 0u);
  EXPECT_EQ(by_start[rj.start]->rejit_id, 1u);
  EXPECT_EQ(by_start[rj.start]->method_id, *c);
  ASSERT_TRUE(rt.unloadModule(mod).ok());
  rt.drainReclamation();
  EXPECT_EQ(rt.memoryStats().version_bytes, 0u);
  EXPECT_EQ(rt.memoryStats().il_versions, 0u);
}

TEST_F(RuntimeTest, UnloadRemovesMethodsAndReusesCodeOnlyAfterAGracePeriod) {
  auto keep_mod = rt.registerModule("/app/System.dll", false);
  ASSERT_TRUE(keep_mod.ok());
  EXPECT_EQ(rt.unloadModule(*keep_mod).error(), Errc::kNotCollectible);
  auto keep = rt.registerMethod(*keep_mod, desc("Keep"));
  auto gone = rt.registerMethod(mod, desc("Gone"));
  ASSERT_TRUE(keep.ok() && gone.ok());
  jit(rt, *keep, Tier::kTier0, 512);
  auto pending = rt.beginJit(*gone, Tier::kTier1);
  ASSERT_TRUE(pending.ok());
  CodeRange g = jit(rt, *gone, Tier::kTier0, 512);
  EXPECT_EQ(rt.memoryStats().live_methods, 2u);

  ASSERT_TRUE(rt.unloadModule(mod).ok());
  EXPECT_EQ(rt.unloadModule(mod).error(), Errc::kModuleUnloaded);
  EXPECT_EQ(rt.registerMethod(mod, desc("Late")).error(), Errc::kModuleUnloaded);
  EXPECT_EQ(rt.beginJit(*gone, Tier::kTier1).error(), Errc::kMethodUnloaded);
  EXPECT_EQ(rt.publishCode(*pending, 64).error(), Errc::kVersionGone);
  EXPECT_EQ(rt.requestRejit(*gone).error(), Errc::kMethodUnloaded);
  EXPECT_EQ(rt.entryPoint(*gone), 0u);
  EXPECT_EQ(rt.memoryStats().live_methods, 1u);
  Seen s = walkAll(rt);
  ASSERT_EQ(s.views.size(), 1u);
  EXPECT_EQ(s.views[0].method_id, *keep);

  // After the grace period the unloaded range goes back to the heap.
  rt.drainReclamation();
  CodeRange again = jit(rt, *keep, Tier::kTier1, 512);
  EXPECT_EQ(again.start, g.start);
}

// Retirements go to RCU in batches (RetireBatch::kCapacity), so a few retired versions
// wait for later ones, which may never come: a publication the full heap refuses waits
// for them and tries again. The model heap is 64 GiB: 32 versions of 2 GiB fill it.
TEST_F(RuntimeTest, AFullHeapWaitsForRetiredCodeAndTriesAgain) {
  constexpr uint32_t k2G = uint32_t{1} << 31;
  auto m = rt.registerMethod(mod, desc("Huge"));
  ASSERT_TRUE(m.ok());
  std::vector<VersionId> full;
  for (int i = 0; i < 32; ++i) {
    auto v = rt.beginJit(*m, Tier::kTier1);
    ASSERT_TRUE(v.ok());
    ASSERT_TRUE(rt.publishCode(*v, k2G).ok()) << i;
    full.push_back(*v);
  }
  auto v = rt.beginJit(*m, Tier::kTier1);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(rt.publishCode(*v, k2G).error(), Errc::kCodeHeapExhausted);  // nothing retired to wait for
  for (VersionId r : full) ASSERT_TRUE(rt.retireVersion(r).ok());        // 32: a partial batch
  auto r = rt.publishCode(*v, k2G);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(rt.memoryStats().awaiting_reclamation, 0u);
  // The freed pieces merged (code_heap.h): 4 GiB fits beside it.
  auto w = rt.beginJit(*m, Tier::kTier1);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(rt.publishCode(*w, UINT32_MAX).ok());
}

TEST_F(RuntimeTest, LiveCodeRangesNeverOverlap) {
  std::map<uint64_t, uint64_t> ranges;
  for (int i = 0; i < 200; ++i) {
    auto m = rt.registerMethod(mod, desc("M" + std::to_string(i)));
    ASSERT_TRUE(m.ok());
    CodeRange r = jit(rt, *m, Tier::kTier0, 1 + (i * 37) % 4000);
    ranges[r.start] = r.start + r.size;
  }
  uint64_t prev_end = 0;
  for (auto [start, end] : ranges) {
    EXPECT_GE(start, prev_end);
    prev_end = end;
  }
  EXPECT_EQ(ranges.size(), 200u);
}

TEST_F(RuntimeTest, LockedWalksSeeTheSameVersionsAndNameTheirSite) {
  for (int i = 0; i < 10; ++i) {
    auto m = rt.registerMethod(mod, desc("M" + std::to_string(i)));
    ASSERT_TRUE(m.ok());
    jit(rt, *m, Tier::kTier0);
    if (i % 2 == 0) jit(rt, *m, Tier::kTier1);
  }
  auto ids = [](const Seen& s) {
    std::set<VersionId> r;
    for (const auto& v : s.views) r.insert(v.version_id);
    return r;
  };
  const auto lockfree = ids(walkAll(rt, WalkLocking::kNone));
  EXPECT_EQ(lockfree.size(), 15u);
  const auto before = rt.lockStats();
  EXPECT_EQ(before.sites[0][int(LockSite::kRundown)].wait.count, 0u);
  EXPECT_EQ(ids(walkAll(rt, WalkLocking::kWholeWalk)), lockfree);
  EXPECT_EQ(rt.lockStats().sites[0][int(LockSite::kRundown)].wait.count, 1u);
  EXPECT_EQ(ids(walkAll(rt, WalkLocking::kPerMethod)), lockfree);
  EXPECT_EQ(rt.lockStats().sites[0][int(LockSite::kRundown)].wait.count, 11u);
}

TEST_F(RuntimeTest, LockStatsCountEverySiteAndSplitByRundown) {
  auto m = rt.registerMethod(mod, desc("M"));
  ASSERT_TRUE(m.ok());
  jit(rt, *m, Tier::kTier0);  // site 1 twice (add, publish), site 5 once
  rt.rundownActive(true);
  jit(rt, *m, Tier::kTier1);  // site 2 twice, site 5 once, during a rundown
  rt.rundownActive(false);
  ASSERT_TRUE(rt.requestRejit(*m).ok());
  ASSERT_TRUE(rt.entryPointLocked(*m).ok());
  const auto s = rt.lockStats();
  EXPECT_EQ(s.sites[0][int(LockSite::kTier0Publish)].wait.count, 2u);
  EXPECT_EQ(s.sites[0][int(LockSite::kActivate)].wait.count, 1u);
  EXPECT_EQ(s.sites[1][int(LockSite::kTier1Publish)].wait.count, 2u);
  EXPECT_EQ(s.sites[1][int(LockSite::kActivate)].hold.count, 1u);
  EXPECT_EQ(s.sites[0][int(LockSite::kTier1Publish)].wait.count, 0u);
  EXPECT_EQ(s.sites[0][int(LockSite::kRejit)].wait.count, 1u);
  EXPECT_EQ(s.sites[0][int(LockSite::kLookup)].wait.count, 1u);
  uint64_t bucketed = 0;
  for (uint64_t b : s.sites[0][int(LockSite::kTier0Publish)].hold.buckets) bucketed += b;
  EXPECT_EQ(bucketed, 2u);
}

// Interleaved JIT paths: each publication finds its own version. Also the driver of
// tests/integration/usdt_probes.sh, which reads jit_end's jit_ns under bpftrace: a path
// is timed only from its own beginJit on the publishing thread, so here only B's is
// (A's beginJit was followed by B's on this thread; C is published by another thread).
TEST_F(RuntimeTest, InterleavedJitPathsPublishTheirOwnVersions) {
  auto a = rt.registerMethod(mod, desc("A"));
  auto b = rt.registerMethod(mod, desc("B"));
  auto c = rt.registerMethod(mod, desc("C"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto va = rt.beginJit(*a, Tier::kTier0);
  auto vb = rt.beginJit(*b, Tier::kTier0);
  ASSERT_TRUE(va.ok() && vb.ok());
  auto ra = rt.publishCode(*va, 128);
  auto rb = rt.publishCode(*vb, 256);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(ra->size, 128u);
  EXPECT_EQ(rb->size, 256u);
  EXPECT_EQ(rt.publishCode(*vb, 256).error(), Errc::kAlreadyPublished);
  auto vc = rt.beginJit(*c, Tier::kTier1);
  ASSERT_TRUE(vc.ok());
  Result<CodeRange> rc = Errc::kInvalidArgument;
  std::thread([&] { rc = rt.publishCode(*vc, 512); }).join();
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->size, 512u);
}

TEST(LockStats, Log2BucketsAndQuantiles) {
  EXPECT_EQ(log2Bucket(0), 0);
  EXPECT_EQ(log2Bucket(1), 1);
  EXPECT_EQ(log2Bucket(2), 2);
  EXPECT_EQ(log2Bucket(3), 2);
  EXPECT_EQ(log2Bucket(1024), 11);
  EXPECT_EQ(log2Bucket(~0ULL), kHistBuckets - 1);
  HistSnapshot h;
  h.count = 100;
  h.max_ns = 5000;
  h.buckets[log2Bucket(100)] = 99;
  h.buckets[log2Bucket(5000)] = 1;
  EXPECT_EQ(h.quantileUpperBound(0.5), 127u);
  EXPECT_EQ(h.quantileUpperBound(0.99), 127u);
  EXPECT_EQ(h.quantileUpperBound(1.0), 5000u);
}

TEST(Utf8, SanitizeReplacesAndTruncatesOnCharacterBoundaries) {
  std::string out;
  EXPECT_FALSE(sanitizeUtf8("plain", 100, &out));
  EXPECT_EQ(out, "plain");
  EXPECT_TRUE(
      sanitizeUtf8("a\xFF"
                   "b",
                   100, &out));
  EXPECT_EQ(out,
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_TRUE(sanitizeUtf8(std::string_view("a\0b", 3), 100, &out));
  EXPECT_EQ(out,
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_TRUE(sanitizeUtf8("\xE2\x82\xAC\xE2\x82\xAC", 5, &out));  // two euro signs, room for one
  EXPECT_EQ(out, "\xE2\x82\xAC");
  EXPECT_TRUE(isValidUtf8("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(isValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
}

TEST(Names, EnumsRoundTrip) {
  Tier t;
  EXPECT_TRUE(parseTier("tier1_osr", &t));
  EXPECT_EQ(t, Tier::kTier1Osr);
  EXPECT_FALSE(parseTier("tier2", &t));
  RundownMode m;
  EXPECT_TRUE(parseRundownMode("per-method", &m));
  EXPECT_EQ(m, RundownMode::kPerMethod);
  EXPECT_EQ(lockSiteName(LockSite::kUnload), "unload");
  EXPECT_EQ(errcMessage(Errc::kZeroCodeSize), std::string("code size is zero"));
}

}  // namespace
}  // namespace jitprov
