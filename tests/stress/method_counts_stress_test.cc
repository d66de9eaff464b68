// SPDX-License-Identifier: MIT
// rundown_end's method counts under concurrency (docs/spec.md: `methods`, the distinct
// methods of a rundown's records; `caught_up_methods`, those of them only its catch-up
// added), in the one case the walk's bookkeeping must decide by the registration
// ordinal (runtime/registry.cc, WalkMarks): a method the first pass counted is unloaded
// while the walk runs, and a new method takes its slot and publishes before the
// catch-up. The catch-up must count the new method as added, and a method the first
// pass counted and the catch-up visits again (a new version) as not.
//
// A writer loops: a one-method collectible module's method (slot 1) lives a while, the
// module is unloaded (every other time its method first, alone: unloadMethod, under the
// walks) and its reclamation waited for, and the next one-method module's
// method takes the same slot (the lowest free one) and is compiled; now and then a walked method of a fixed module
// gets a new version. A reader runs complete walks that pause between their read
// sections (1500 fixed methods make two batches; every other walk pauses long after
// the first), and checks each walk's counts against the versions it was shown. Runs
// until enough walks met both cases (or a bound of walks), also under
// ThreadSanitizer and AddressSanitizer (the stress setups).
#include <jitprov/runtime.h>

#include <gtest/gtest.h>
#include "wait_until.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace jitprov {
namespace {

uint64_t indexOf(uint64_t id) { return id & 0xffffffffu; }

MethodDesc desc(const std::string& name) { return MethodDesc{0x06000001, 0, "Stress.Counts", name, "void ()"}; }

bool compile(Runtime& rt, MethodId m, Tier tier) {
  auto v = rt.beginJit(m, tier);
  return v.ok() && rt.publishCode(*v, 128).ok();
}

TEST(MethodCountsStress, AReusedSlotsMethodIsAnotherMethod) {
  Runtime rt;
  auto fixed = rt.registerModule("/stress/fixed.dll", false);
  ASSERT_TRUE(fixed.ok());
  std::vector<MethodId> walked;  // two batches of the walk, after the writer's slot
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> cycles{0};
  std::string writer_error;
  // The writer's method lives in slot 1, in the walk's first batch: registered before
  // the fixed ones, and again there each time it was reclaimed (nothing else frees a
  // slot, and a claim takes the lowest free one).
  ModuleId gone = 0;
  MethodId gone_method = 0;
  auto born = [&](int i) -> bool {
    auto mod = rt.registerModule("/stress/gone" + std::to_string(i) + ".dll", true);
    if (!mod.ok()) return writer_error = mod.message(), false;
    auto m = rt.registerMethod(*mod, desc("Gone" + std::to_string(i)));
    if (!m.ok()) return writer_error = m.message(), false;
    if (!compile(rt, *m, Tier::kTier0)) return writer_error = "compile", false;
    gone = *mod, gone_method = *m;
    return true;
  };
  ASSERT_TRUE(born(0)) << writer_error;
  for (int i = 0; i < 1500; ++i) {
    auto m = rt.registerMethod(*fixed, desc("Fixed" + std::to_string(i)));
    ASSERT_TRUE(m.ok());
    ASSERT_TRUE(compile(rt, *m, Tier::kTier0));
    walked.push_back(*m);
  }
  std::atomic<bool> writer_out{false};  // the writer returned (stopped, or on an error)
  const auto writerBody = [&] {
    for (int i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(2000 + 100 * (i % 30)));  // live a while
      // Every other time the method is unloaded alone (unloadMethod: a dynamic method
      // destroyed), its module after it, empty; else with its module.
      if (i % 2 != 0) {
        if (auto u = rt.unloadMethod(gone_method); !u.ok()) return void(writer_error = u.message());
      }
      if (auto u = rt.unloadModule(gone); !u.ok()) return void(writer_error = u.message());
      rt.drainReclamation();  // its slot free again: the next method takes it
      if (!born(i)) return;
      // Now and then a fixed method gets a version more: walked, and caught up again.
      if (i % 4 == 0 && !compile(rt, walked[size_t(i) % walked.size()], Tier::kTier1)) {
        writer_error = "tier-1 compile";
        return;
      }
      cycles.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread writer([&] {
    writerBody();
    writer_out.store(true);
  });

  uint64_t walks = 0, reused_cases = 0, again_cases = 0, errors = 0;
  // Until both cases were met often enough, at most 1000 walks (about 15 s here).
  const uint64_t max_walks = 1000;
  for (; walks < max_walks && (reused_cases < 20 || again_cases < 20) && writer_error.empty(); ++walks) {
    std::vector<VersionView> seen;
    int pauses = 0;
    const CompleteWalk cw = rt.walkComplete(
        WalkLocking::kNone, [](uint64_t) {},
        [&](const VersionView& v) {
          seen.push_back(v);  // the views' strings are not kept: only ids and numbers are read
          return true;
        },
        // After the first batch, every other walk pauses for two whole writer cycles
        // (about 15 ms each here, most of it the wait for the reclamation): the method
        // it walked in slot 1 is gone and replaced before the catch-up. (It paused 25 ms,
        // which a writer slowed on a loaded machine could outlast in every walk.)
        [&] {
          if (++pauses == 1 && walks % 2 == 0) {
            const uint64_t c0 = cycles.load(std::memory_order_relaxed);
            (void)jitprov::test::waitUntil(
                [&] { return cycles.load(std::memory_order_relaxed) >= c0 + 2 || writer_out.load(); },
                std::chrono::seconds(30));
          } else {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
        });
    std::unordered_set<MethodId> first, later;
    std::unordered_set<uint64_t> first_slots;
    for (const VersionView& v : seen) {
      if (v.publish_seq <= cw.begin_seq) {
        first.insert(v.method_id);
        first_slots.insert(indexOf(v.method_id));
      } else {
        later.insert(v.method_id);
      }
    }
    uint64_t added = 0;
    for (MethodId m : later) {
      if (first.count(m) != 0) {
        ++again_cases;
      } else {
        ++added;
        reused_cases += first_slots.count(indexOf(m));
      }
    }
    if (cw.walk.methods != first.size() || cw.caught_up_methods != added) {
      if (errors++ < 5)
        ADD_FAILURE() << "walk " << walks << ": the walk counted " << cw.walk.methods << " walked + "
                      << cw.caught_up_methods << " caught up, its versions show " << first.size() << " + " << added;
    }
  }
  stop.store(true);
  writer.join();
  std::printf(
      "method counts: %llu walks, %llu writer cycles; catch-up methods in a slot a walked method had left: %llu, "
      "walked methods caught up again: %llu, wrong counts: %llu\n",
      (unsigned long long)walks, (unsigned long long)cycles.load(), (unsigned long long)reused_cases,
      (unsigned long long)again_cases, (unsigned long long)errors);
  EXPECT_EQ(writer_error, "");
  EXPECT_EQ(errors, 0u);
  // The test must have met both cases it is about.
  EXPECT_GT(reused_cases, 0u) << "no walk met a reused slot between its passes";
  EXPECT_GT(again_cases, 0u) << "no walk met a walked method again in its catch-up";
}

}  // namespace
}  // namespace jitprov
