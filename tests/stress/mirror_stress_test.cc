// SPDX-License-Identifier: MIT
// The .NET client's mirror (tools/dotnet/mirror.h) driven as CoreCLR drives it: many
// threads at once raising MethodLoadVerbose (tier 0, then tier 1 of the same method from
// another thread, as the tiering worker does), MethodUnloadVerbose (dynamic methods) and
// ModuleUnload of collectible modules, while a rundown thread walks. Run under
// ThreadSanitizer and AddressSanitizer by tools/check. Checks the client's own counts
// (its stats file) and jitprov's live set against what the threads did.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "clr_abi.h"
#include "mirror.h"
#include "wait_until.h"

namespace jitprov::dotnet {
namespace {

constexpr int kThreads = 4;   // two pairs: each pair shares its methods
constexpr int kRounds = 400;  // per pair: a collectible module each round
constexpr int kMethods = 64;  // per module
constexpr uint64_t kStaticModule = 0x1000;

uint64_t moduleId(int pair, int round) { return 0x100000 + uint64_t(pair) * 0x10000 + uint64_t(round) * 0x10; }
// The numbers from which a round's dynamic methods (in the static module) take their
// MethodIDs and addresses: apart from every moduleId's.
uint64_t dynamicBase(int pair, int round) { return 0x200000 + uint64_t(pair) * 0x10000 + uint64_t(round) * 0x10; }
uint64_t methodId(uint64_t module, int i) { return module * 0x1000 + uint64_t(i) * 8; }
// Distinct code addresses for every body of the test: tier t of method i of a module.
uint64_t codeStart(uint64_t module, int i, int tier) {
  return 0x7f0000000000ULL + (module * 0x1000 + uint64_t(i) * 8) * 0x100 + uint64_t(tier) * 0x80;
}

// A MethodLoadVerbose as the client receives it: its names are UTF-16LE inside the
// event's payload (`text`, which the event points into).
struct LoadEvent {
  std::vector<uint8_t> text;
  MethodEvent ev;
};

LoadEvent load(uint64_t module, uint64_t method, uint64_t start, uint32_t clr_tier, uint64_t nv) {
  LoadEvent l;
  const std::string names[3] = {"Stress.C" + std::to_string(module), "M" + std::to_string(method), "void ()"};
  for (const std::string& s : names)
    for (char c : s) l.text.insert(l.text.end(), {uint8_t(c), 0});
  MethodEvent& ev = l.ev;
  ev.method_id = method;
  ev.module_id = module;
  ev.start = start;
  ev.size = 0x40;
  ev.flags = kMethodJitted | (clr_tier << kTierShift);
  size_t at = 0;
  for (auto [ref, s] : {std::pair{&ev.name_space, &names[0]}, {&ev.name, &names[1]}, {&ev.signature, &names[2]}}) {
    *ref = Utf16Ref{l.text.data() + at, s->size()};
    at += 2 * s->size();
  }
  ev.native_version = nv;
  ev.has_native_version = true;
  return l;
}

// A Mirror started as the client starts it, its rundowns on TRIGGER, no perf map, its
// stats in a file of the test's (NAME) that stats() reads once the mirror is shut down;
// modules /NAME/ID.dll, collectible unless ID is kStaticModule.
struct StartedMirror {
  Mirror m;
  std::string path;
  StartedMirror(const std::string& name, const char* trigger) {
    path = ::testing::TempDir() + "/mirror-" + name + "-" + std::to_string(::getpid()) + ".json";
    hostagent::Options opt;
    opt.trigger = trigger;
    opt.perfmap = "";
    opt.stats = path;
    error = m.start(opt, [name](uint64_t id) {
      return ModuleInfo{"/" + name + "/" + std::to_string(id) + ".dll", id != kStaticModule, true};
    });
  }
  std::string error;  // m.start's
  nlohmann::json stats() {
    std::ifstream in(path);
    if (!in.good()) return nlohmann::json::object();  // empty: the caller's assertion fails
    nlohmann::json j = nlohmann::json::parse(in);
    std::remove(path.c_str());
    return j;
  }
};

TEST(MirrorStress, ConcurrentLoadsTierUpsAndModuleUnloads) {
  StartedMirror sm("stress", "every:0.01");  // rundowns walk while the threads publish
  ASSERT_EQ(sm.error, "");
  Mirror& m = sm.m;

  std::atomic<uint64_t> dynamic_live{0};
  std::atomic<int> done[kThreads] = {};  // rounds each thread finished
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      const int pair = t / 2;
      const bool tier1_side = t % 2 == 1;
      for (int r = 0; r < kRounds; ++r) {
        const uint64_t mod = moduleId(pair, r);
        for (int i = 0; i < kMethods; ++i) {
          const uint64_t id = methodId(mod, i);
          if (!tier1_side) {
            const LoadEvent l = load(mod, id, codeStart(mod, i, 0), kClrTierQuick, 0);
            m.methodLoad(l.ev, hostagent::nowNs());
            if (i % 16 == 0) m.methodLoad(l.ev, hostagent::nowNs());  // a replay: the same body again
          } else {
            m.methodLoad(load(mod, id, codeStart(mod, i, 1), kClrTierTier1, 1).ev, hostagent::nowNs());
          }
        }
        // The static module's dynamic methods: loaded and destroyed by the tier-0 side,
        // one in four kept.
        if (!tier1_side) {
          for (int i = 0; i < 8; ++i) {
            const uint64_t id = methodId(dynamicBase(pair, r), i);
            LoadEvent l = load(kStaticModule, id, codeStart(dynamicBase(pair, r), i, 0), kClrTierOptimized, 0);
            // Dynamic (CoreCLR unloads no other method of a module that is not
            // collectible but in its shutdown walk, which the mirror applies nothing of).
            l.ev.flags |= kMethodDynamic;
            m.methodLoad(l.ev, hostagent::nowNs());
            if (i % 4 != 0)
              m.methodUnload(l.ev, hostagent::nowNs());
            else
              dynamic_live.fetch_add(1);
          }
        }
        done[t].store(r + 1);
        // The tier-0 side unloads the module the pair used two rounds ago, once its
        // partner is past it too (CoreCLR loads no code into a module it unloads); the
        // partner meanwhile loads into later modules.
        if (r >= 2 && t % 2 == 0) {
          while (done[t + 1].load() < r - 1) std::this_thread::yield();
          ModuleEvent ev;
          ev.module_id = moduleId(pair, r - 2);
          m.moduleUnload(ev);
        }
      }
    });
  }
  for (auto& th : ts) th.join();
  // At least one rundown walked beside the threads' work (their work can outlast a tick
  // of every:0.01 even on a loaded machine; this waits for a slow engine thread).
  (void)jitprov::test::waitUntil([&m] { return m.rundownsCompleted() != 0; }, std::chrono::seconds(30));
  // The last two rounds' modules of each pair.
  for (int pair = 0; pair < kThreads / 2; ++pair) {
    for (int r = kRounds - 2; r < kRounds; ++r) {
      ModuleEvent ev;
      ev.module_id = moduleId(pair, r);
      m.moduleUnload(ev);
    }
  }
  m.shutdown("stress", 0);

  const nlohmann::json j = sm.stats();
  ASSERT_FALSE(j.empty()) << sm.path;
  const uint64_t collectible_loads = uint64_t(kThreads) * kRounds * kMethods;  // both tiers
  const uint64_t dynamic_loads = uint64_t(kThreads / 2) * kRounds * 8;
  const uint64_t replays = uint64_t(kThreads / 2) * kRounds * (kMethods / 16);
  EXPECT_EQ(j["loads"].get<uint64_t>(), collectible_loads + dynamic_loads);
  EXPECT_EQ(j["replays"].get<uint64_t>(), replays);
  EXPECT_EQ(j["unloads"].get<uint64_t>(), dynamic_loads - dynamic_live.load());
  EXPECT_EQ(j["unknown_unloads"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["module_unloads"].get<uint64_t>(), uint64_t(kThreads / 2) * kRounds);
  EXPECT_EQ(j["methods"].get<uint64_t>(), uint64_t(kThreads / 2) * kRounds * (kMethods + 8));
  EXPECT_EQ(j["not_mirrored"]["errors"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["not_mirrored"]["refused"].get<uint64_t>(), 0u);
  // Every collectible module unloaded: what stays mirrored is the kept dynamic methods.
  EXPECT_EQ(j["live_versions"].get<uint64_t>(), dynamic_live.load());
  EXPECT_EQ(j["load_callback"]["count"].get<uint64_t>(), collectible_loads + dynamic_loads + replays);
  EXPECT_GT(j["rundowns"].get<uint64_t>(), 0u);
}

// CoreCLR hands a collectible module's ModuleID (an address) out again once it is
// unloaded: the loads after the unload belong to a new jitprov module, on the thread
// that had the old one cached too.
TEST(MirrorStress, AModuleIdReusedAfterItsUnloadIsANewModule) {
  StartedMirror sm("reuse", "exit");
  ASSERT_EQ(sm.error, "");
  Mirror& m = sm.m;
  constexpr uint64_t kModule = 0x4000;
  m.methodLoad(load(kModule, 0x10, 0x7e0000001000, kClrTierQuick, 0).ev, hostagent::nowNs());
  ModuleEvent unload;
  unload.module_id = kModule;
  m.moduleUnload(unload);
  // The same ModuleID and MethodID, new code: a new module and method in jitprov.
  m.methodLoad(load(kModule, 0x10, 0x7e0000002000, kClrTierQuick, 0).ev, hostagent::nowNs());
  m.shutdown("reuse", 0);
  const nlohmann::json j = sm.stats();
  ASSERT_FALSE(j.empty()) << sm.path;
  EXPECT_EQ(j["not_mirrored"]["errors"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["modules"].get<uint64_t>(), 2u);
  EXPECT_EQ(j["methods"].get<uint64_t>(), 2u);
  EXPECT_EQ(j["loads"].get<uint64_t>(), 2u);
  EXPECT_EQ(j["live_versions"].get<uint64_t>(), 1u);
}

// The catch-up's gate (mirror.h): a ModuleUnload waits in it while it is closed (from
// beginCatchUp, as an attach starts), its tombstone left as it passes; a callback
// waiting when the gate opens passes before it closes again, however fast the catch-up
// closes it; and a body the catch-up published with the gate closed is undone by the
// unload that waited for it.
TEST(MirrorStress, TheCatchUpGateHoldsModuleUnloads) {
  using namespace std::chrono_literals;
  StartedMirror sm("gate", "exit");
  ASSERT_EQ(sm.error, "");
  Mirror& m = sm.m;
  constexpr uint64_t kHeld = 0x5000, kFair = 0x6000, kUndone = 0x7000;
  const auto unloadOn = [&m](uint64_t module, std::atomic<bool>* done) {
    return std::thread([&m, module, done] {
      ModuleEvent ev;
      ev.module_id = module;
      m.moduleUnload(ev);
      done->store(true);
    });
  };
  // Until the callback waits in the gate (was: a fixed sleep, which a thread descheduled
  // longer on a loaded machine outlasted, so that it came after the gate opened). A
  // callback that passed the closed gate never waits in it: that fails below.
  const auto waitForWaiter = [&m](const std::atomic<bool>& done) {
    (void)jitprov::test::waitUntil([&] { return m.gateWaiters() != 0 || done.load(); }, std::chrono::seconds(60));
  };
  m.beginCatchUp();
  std::atomic<bool> held_done{false};
  std::thread held = unloadOn(kHeld, &held_done);
  waitForWaiter(held_done);
  EXPECT_EQ(m.gateWaiters(), 1u);
  EXPECT_FALSE(held_done.load()) << "a ModuleUnload passed the closed gate";
  EXPECT_FALSE(m.anyModuleUnloaded({kHeld}));
  m.openGate();
  held.join();
  EXPECT_TRUE(m.anyModuleUnloaded({kHeld}));

  // Closed again at once after every opening: the waiting callback still passes.
  m.closeGate();
  std::atomic<bool> fair_done{false};
  std::thread fair = unloadOn(kFair, &fair_done);
  waitForWaiter(fair_done);
  EXPECT_EQ(m.gateWaiters(), 1u);
  int cycles = 0;
  for (; cycles < 100000 && !m.anyModuleUnloaded({kFair}); ++cycles) {
    m.openGate();
    m.closeGate();
  }
  m.openGate();
  fair.join();
  EXPECT_LE(cycles, 1) << "the callback waited through " << cycles << " openings";

  // Published with the gate closed, the unload waiting: undone when it passes.
  m.closeGate();
  ASSERT_FALSE(m.anyModuleUnloaded({kUndone}));
  CaughtBody b;
  b.method_id = 0x70010;
  b.module_id = kUndone;
  b.start = 0x7e0000003000;
  b.size = 0x40;
  b.token = 0x06000001;
  b.name_space = "Gate.C";
  b.name = "M";
  b.signature = "void ()";
  b.activate = true;
  {
    const std::unique_lock<std::mutex> hold = m.holdUnloads();
    m.publishCaught(b);
  }
  std::atomic<bool> undone_done{false};
  std::thread undone = unloadOn(kUndone, &undone_done);
  waitForWaiter(undone_done);
  EXPECT_EQ(m.gateWaiters(), 1u);
  EXPECT_FALSE(undone_done.load());
  m.openGate();
  undone.join();
  m.endCatchUp();
  m.shutdown("gate", 0);
  const nlohmann::json j = sm.stats();
  ASSERT_FALSE(j.empty()) << sm.path;
  EXPECT_EQ(j["not_mirrored"]["errors"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["catch_up"]["bodies"].get<uint64_t>(), 1u);
  EXPECT_EQ(j["catch_up"]["gate_waits"].get<uint64_t>(), 3u);
  EXPECT_EQ(j["module_unloads"].get<uint64_t>(), 1u);
  EXPECT_EQ(j["live_versions"].get<uint64_t>(), 0u);
}

// An attach's catch-up publishes a method's bodies as enumerated before the session's
// events for it, newest last and active; a tier-1 body the session activated meanwhile
// (the tiering worker's, read after the enumeration) must stay the active one. One thread
// raises the tier-1 events while another publishes the tier-0 bodies the catch-up read,
// for the same methods at once; then a method with no event: the catch-up activates it.
TEST(MirrorStress, TheCatchUpActivatesNoBodyOverANewerEvent) {
  StartedMirror sm("activate", "exit");
  ASSERT_EQ(sm.error, "");
  Mirror& m = sm.m;
  constexpr int kRaced = 4000;
  const uint64_t module = kStaticModule;
  m.beginCatchUp();
  std::vector<LoadEvent> tier1;
  tier1.reserve(kRaced);
  for (int i = 0; i < kRaced; ++i)
    tier1.push_back(load(module, methodId(module, i), codeStart(module, i, 1), kClrTierTier1, 1));
  const auto caught = [module](int i) {
    CaughtBody b;
    b.method_id = methodId(module, i);
    b.module_id = module;
    b.start = codeStart(module, i, 0);
    b.size = 0x40;
    b.token = 0x06000001;
    b.name_space = "Stress.C" + std::to_string(module);
    b.name = "M" + std::to_string(b.method_id);
    b.signature = "void ()";
    b.activate = true;  // the catch-up's newest body of the method
    return b;
  };
  // The finding's order: the event's tier 1 first, then the catch-up's older body.
  m.methodLoad(tier1[0].ev, 0);
  {
    const std::unique_lock<std::mutex> hold = m.holdUnloads();
    m.publishCaught(caught(0));
  }
  EXPECT_EQ(m.entryPoint(methodId(module, 0)), codeStart(module, 0, 1));
  std::atomic<bool> go{false};
  std::thread events([&] {
    while (!go.load()) std::this_thread::yield();
    for (int i = 1; i < kRaced; ++i) m.methodLoad(tier1[i].ev, 0);
  });
  std::thread catch_up([&] {
    while (!go.load()) std::this_thread::yield();
    for (int i = 1; i < kRaced; ++i) {
      const CaughtBody b = caught(i);
      const std::unique_lock<std::mutex> hold = m.holdUnloads();
      m.publishCaught(b);
    }
  });
  go.store(true);
  events.join();
  catch_up.join();
  int older_active = 0;
  for (int i = 0; i < kRaced; ++i) {
    const uint64_t ep = m.entryPoint(methodId(module, i));
    EXPECT_NE(ep, 0u) << i;
    older_active += ep == codeStart(module, i, 0);
  }
  EXPECT_EQ(older_active, 0) << "methods whose catch-up body superseded the session's newer tier-1 body";
  const CaughtBody alone = caught(kRaced);
  {
    const std::unique_lock<std::mutex> hold = m.holdUnloads();
    m.publishCaught(alone);
  }
  EXPECT_EQ(m.entryPoint(alone.method_id), alone.start);
  m.openGate();
  m.endCatchUp();
  m.shutdown("activate", 0);
  const nlohmann::json j = sm.stats();
  ASSERT_FALSE(j.empty()) << sm.path;
  EXPECT_EQ(j["not_mirrored"]["errors"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["live_versions"].get<uint64_t>(), uint64_t(2 * kRaced + 1));
}

// CoreCLR's shutdown walk (ProcessShutdown, before the profiler's Shutdown and the exit
// rundown) reports every module still loaded as unloaded: the static module's unload
// says the walk began, and nothing of it is applied, a collectible module's unload after
// it included, so that the exit rundown holds what was live at exit.
TEST(MirrorStress, CoreClrsShutdownWalkIsNotApplied) {
  StartedMirror sm("walk", "none");
  ASSERT_EQ(sm.error, "");
  Mirror& m = sm.m;
  const uint64_t plugin = moduleId(0, 0);
  m.methodLoad(load(plugin, methodId(plugin, 0), codeStart(plugin, 0, 0), kClrTierQuick, 0).ev, hostagent::nowNs());
  m.methodLoad(load(kStaticModule, methodId(kStaticModule, 0), codeStart(kStaticModule, 0, 0), kClrTierQuick, 0).ev,
               hostagent::nowNs());
  // Before the walk, a collectible module's unload is applied: a second plugin goes.
  const uint64_t gone = moduleId(0, 1);
  m.methodLoad(load(gone, methodId(gone, 0), codeStart(gone, 0, 0), kClrTierQuick, 0).ev, hostagent::nowNs());
  ModuleEvent ev;
  ev.module_id = gone;
  m.moduleUnload(ev);
  for (const uint64_t mod : {kStaticModule, plugin}) {  // the walk: the static module first
    ev.module_id = mod;
    m.moduleUnload(ev);
  }
  m.methodUnload(load(plugin, methodId(plugin, 0), codeStart(plugin, 0, 0), kClrTierQuick, 0).ev, hostagent::nowNs());
  m.shutdown("walk", 0);
  const nlohmann::json j = sm.stats();
  ASSERT_FALSE(j.empty()) << sm.path;
  EXPECT_EQ(j["module_unloads"].get<uint64_t>(), 1u);  // the one before the walk
  EXPECT_EQ(j["shutdown_unloads"].get<uint64_t>(), 3u);
  EXPECT_EQ(j["unloads"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["live_versions"].get<uint64_t>(), 2u);  // the plugin's and the static module's
}

}  // namespace
}  // namespace jitprov::dotnet
