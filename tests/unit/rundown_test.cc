// SPDX-License-Identifier: MIT
// Unit tests of the rundown engine: triggers, counts, modes.
#include <jitprov/rundown.h>

#include "rundown_emitter.h"
#include "wait_until.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace jitprov {
namespace {

void populate(Runtime& rt, int methods) {
  auto mod = rt.registerModule("/app/a.dll", true);
  ASSERT_TRUE(mod.ok());
  for (int i = 0; i < methods; ++i) {
    auto m = rt.registerMethod(*mod, MethodDesc{uint32_t(i), 0, "N", "M" + std::to_string(i), "void ()"});
    ASSERT_TRUE(m.ok());
    auto v = rt.beginJit(*m, Tier::kTier0);
    ASSERT_TRUE(v.ok());
    if (i % 10 != 0) {
      ASSERT_TRUE(rt.publishCode(*v, 100).ok());  // one in ten still compiling
    }
  }
}

bool waitFor(const RundownEngine& e, uint64_t n) {
  return jitprov::test::waitUntil([&] { return e.completed() >= n; }, std::chrono::seconds(30));
}

TEST(Triggers, Parse) {
  RundownTriggers t;
  std::string err;
  ASSERT_TRUE(parseTriggers("session,signal,exit,at:1.5,every:10", &t, &err)) << err;
  EXPECT_TRUE(t.session && t.signal && t.exit);
  EXPECT_DOUBLE_EQ(t.at_sec, 1.5);
  EXPECT_DOUBLE_EQ(t.every_sec, 10);
  ASSERT_TRUE(parseTriggers("none", &t, &err));
  EXPECT_FALSE(t.session || t.signal || t.exit);
  EXPECT_LT(t.at_sec, 0);
  EXPECT_FALSE(parseTriggers("sesion", &t, &err));
  EXPECT_NE(err.find("unknown trigger 'sesion'"), std::string::npos);
  EXPECT_FALSE(parseTriggers("at:", &t, &err));
  EXPECT_FALSE(parseTriggers("at:-1", &t, &err));
  EXPECT_FALSE(parseTriggers("every:0", &t, &err));
  // Seconds x 1e9 overflowed uint64 nanoseconds: at:1e11 fired at once, every:1e11 ran
  // rundowns back to back.
  EXPECT_FALSE(parseTriggers("at:1e11", &t, &err));
  EXPECT_NE(err.find("exceed 1e9"), std::string::npos) << err;
  EXPECT_FALSE(parseTriggers("every:1e11", &t, &err));
  EXPECT_FALSE(parseTriggers("every:nan", &t, &err));
  EXPECT_TRUE(parseTriggers("every:1e9", &t, &err)) << err;
}

// Pacing below 64 events per second sleeps more than a second per window of 64 events:
// nanosleep refuses tv_nsec >= 1e9 (EINVAL), so the rundown was not paced at all.
TEST(Triggers, SleepsLongerThanASecondAreValidTimespecs) {
  const timespec ts = toTimespec(2500000000ULL);
  EXPECT_EQ(ts.tv_sec, 2);
  EXPECT_EQ(ts.tv_nsec, 500000000L);
  EXPECT_EQ(toTimespec(999999999ULL).tv_sec, 0);
}

TEST(Rundown, CountsWhatItWalkedInEveryMode) {
  Runtime rt;
  populate(rt, 50);
  RundownEngine e(rt, RundownMode::kLockFree, RundownTriggers{});
  for (RundownMode mode : {RundownMode::kLockFree, RundownMode::kLocked, RundownMode::kPerMethod}) {
    const RundownResult r = e.runNow(mode, RundownTrigger::kApi);
    EXPECT_EQ(r.methods, 45u);  // the methods with records: one in ten has no code yet
    EXPECT_EQ(r.versions, 45u);
    EXPECT_EQ(r.skipped, 5u);
    EXPECT_EQ(r.modules, 1u);
    EXPECT_EQ(r.method_count, 50u);
    EXPECT_EQ(r.mode, mode);
  }
  const auto locks = rt.lockStats();
  // G1: the lock-free rundown took no lock; locked took it once; per-method 50 times.
  EXPECT_EQ(locks.sites[1][int(LockSite::kRundown)].wait.count, 51u);
  const auto res = e.results();
  ASSERT_EQ(res.size(), 3u);
  EXPECT_EQ(res[0].rundown_id + 1, res[1].rundown_id);
}

// Records each rundown_begin's id in the order the engines emit them.
class BeginOrder final : public RundownEmitter {
 public:
  BeginOrder(std::mutex& mu, std::vector<uint64_t>& ids) : mu_(mu), ids_(ids) {}
  void begin(const trace::Rundown& ev, RundownMode, RundownTrigger, uint64_t, uint64_t) override {
    const std::lock_guard<std::mutex> g(mu_);
    ids_.push_back(ev.id);
  }
  bool method(const trace::Rundown&, const VersionView&) override { return true; }
  void end(const trace::Rundown&, const trace::Rundown&, const trace::RundownEnd&) override {}

 private:
  std::mutex& mu_;
  std::vector<uint64_t>& ids_;
};

// Rundown ids are the runtime's (docs/spec.md: never handed out twice by a runtime
// instance), whichever engine takes them: an engine made again goes on from the last,
// and two engines rundown at once begin in their ids' order (what jitprov-verify reads
// a vpid's next process by). Engines with their own counters hand out 1 twice.
TEST(Rundown, IdsAreTheRuntimesAndBeginInTheirOrderAcrossEngines) {
  Runtime rt;
  populate(rt, 20);
  {
    RundownEngine first(rt, RundownMode::kLockFree, RundownTriggers{});
    EXPECT_EQ(first.runNow(RundownMode::kLockFree, RundownTrigger::kApi).rundown_id, 1u);
  }
  std::mutex mu;
  std::vector<uint64_t> ids;
  RundownEngine a(rt, RundownMode::kLockFree, RundownTriggers{});
  RundownEngine b(rt, RundownMode::kLockFree, RundownTriggers{});
  a.setEmitter(std::make_unique<BeginOrder>(mu, ids));
  b.setEmitter(std::make_unique<BeginOrder>(mu, ids));
  constexpr int kEach = 300;
  std::vector<std::thread> threads;
  for (RundownEngine* e : {&a, &b}) {
    threads.emplace_back([e] {
      for (int i = 0; i < kEach; ++i) e->runNow(RundownMode::kLockFree, RundownTrigger::kApi);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(ids.size(), 2u * kEach);
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], i + 2) << "the " << i << "th rundown_begin emitted";
}

TEST(Rundown, ApiSignalAtAndExitTriggers) {
  Runtime rt;
  populate(rt, 20);
  RundownTriggers t;
  t.signal = true;
  t.exit = true;
  t.at_sec = 0.05;
  RundownEngine e(rt, RundownMode::kLockFree, t);
  ASSERT_TRUE(e.start().ok());
  EXPECT_EQ(e.start().error(), Errc::kBusy);
  ASSERT_TRUE(waitFor(e, 1));  // at:0.05
  e.requestFromSignal();
  ASSERT_TRUE(waitFor(e, 2));
  e.request();
  ASSERT_TRUE(waitFor(e, 3));
  e.stop();  // exit
  const auto res = e.results();
  ASSERT_EQ(res.size(), 4u);
  EXPECT_EQ(res[0].trigger, RundownTrigger::kAt);
  EXPECT_EQ(res[1].trigger, RundownTrigger::kSignal);
  EXPECT_EQ(res[2].trigger, RundownTrigger::kApi);
  EXPECT_EQ(res[3].trigger, RundownTrigger::kExit);
  for (const auto& r : res) EXPECT_EQ(r.versions, 18u);
}

TEST(Rundown, SignalIgnoredUnlessItIsATrigger) {
  Runtime rt;
  populate(rt, 5);
  RundownTriggers t;
  t.every_sec = 0.02;
  RundownEngine e(rt, RundownMode::kLockFree, t);
  ASSERT_TRUE(e.start().ok());
  e.requestFromSignal();
  ASSERT_TRUE(waitFor(e, 3));
  e.stop();
  for (const auto& r : e.results()) EXPECT_EQ(r.trigger, RundownTrigger::kEvery);
}

// Rundowns on their thread while writers publish and unload: run under TSan by check.
TEST(Rundown, RunsConcurrentlyWithWriters) {
  Runtime rt;
  RundownTriggers t;
  t.every_sec = 0.001;
  RundownEngine e(rt, RundownMode::kLockFree, t);
  ASSERT_TRUE(e.start().ok());
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&rt, w] {
      for (int round = 0; round < 20; ++round) {
        auto mod = rt.registerModule("/w" + std::to_string(w), true);
        ASSERT_TRUE(mod.ok());
        for (int i = 0; i < 50; ++i) {
          auto m = rt.registerMethod(*mod, MethodDesc{0, 0, "N", "M", "()"});
          ASSERT_TRUE(m.ok());
          auto v = rt.beginJit(*m, Tier::kTier0);
          ASSERT_TRUE(v.ok());
          ASSERT_TRUE(rt.publishCode(*v, 64).ok());
        }
        ASSERT_TRUE(rt.unloadModule(*mod).ok());
      }
    });
  }
  for (auto& th : writers) th.join();
  ASSERT_TRUE(waitFor(e, 2));
  e.stop();
  EXPECT_EQ(rt.lockStats().sites[1][int(LockSite::kRundown)].wait.count, 0u);
}

}  // namespace
}  // namespace jitprov
