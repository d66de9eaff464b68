// SPDX-License-Identifier: MIT
// Rundown emission benchmark: three sides into the same channel of the same session, in
// one run, over the same code versions (METHODS methods, a tenth tiered up):
//   floor    plain lttng-ust events with jitprov_rundown:method's payload, from a
//            minimal provider of this benchmark's own (floor_tp.h: no session argument,
//            none of jitprov's code), from a flat array of ready records: a fixed floor,
//            which nothing this project changes can move;
//   record   the project's probe alone: trace::rundownRecord (the rundown's own path
//            to the event, into every session recording) from a flat array of ready
//            records, as the floor's;
//   emit     the project's own emission path from a view (trace::rundownMethod, as a
//            rundown with a sink does) from a flat array of the versions;
//   rundown  a lock-free rundown (RundownEngine::runNow, on this thread).
// Each pass is timed per event in wall time (CLOCK_MONOTONIC) and in this thread's CPU
// time (CLOCK_THREAD_CPUTIME_ID: what a rundown costs the application, and steadier on
// a machine whose speed swings), after the consumer daemon has written the previous
// pass's events (JITPROV_BENCH_TRACE_DIR: the trace, watched until it stops growing).
// The passes run in the order given: tools/bench/rundown-emit gives tools/bench/abba.py's
// (a warm-up, then ABBA rounds) and prints the medians and ratios.
//   jitprov-bench-emit METHODS ROUND:SIDE...
// prints "pass ROUND SIDE WALL_NS CPU_NS EVENTS RETRIED" per pass. For a profiler:
// JITPROV_BENCH_ONLY=SIDE runs that side's passes only.
// Needs a session enabling jitprov_rundown:* and jitprov_bench_floor:* (the script sets
// one up); waits up to 10 s for it.
#include <jitprov/rundown.h>
#include <jitprov/runtime.h>

#include "floor_emit.h"
#include "trace.h"
#include "version_record.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace jitprov;

namespace {

uint64_t clockNs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

uint64_t treeBytes(const char* dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  return bytes;
}

// Until the consumer daemon has written what was emitted (the trace stops growing for
// 0.5 s; at 10 M methods a pass is 3 GB, and a consumer still writing one takes a core
// from the next), or 0.5 s when the trace's directory is not known.
void waitForConsumer(const char* trace_dir) {
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (trace_dir == nullptr) return;
  uint64_t last = treeBytes(trace_dir);
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const uint64_t now = treeBytes(trace_dir);
    if (now == last) return;
    last = now;
  }
}

// METHODS methods in 100 modules, each compiled at tier 0, a tenth at tier 1 too.
void registerMethods(Runtime& rt, uint64_t n) {
  std::mt19937_64 rng(7);
  std::vector<ModuleId> mods;
  for (int i = 0; i < 100; ++i)
    mods.push_back(*rt.registerModule("/app/bin/Contoso.Lib" + std::to_string(i) + ".dll", false));
  for (uint64_t i = 0; i < n; ++i) {
    auto m = rt.registerMethod(mods[i % mods.size()],
                               MethodDesc{uint32_t(0x06000001 + i), 0x96, "Contoso.Orders.Services.OrderService",
                                          "ProcessOrderAsync_" + std::to_string(i),
                                          "System.Threading.Tasks.Task`1<!0> (System.Threading.CancellationToken)"});
    auto v = rt.beginJit(*m, Tier::kTier0);
    (void)rt.publishCode(*v, uint32_t(64 + rng() % 2048));
    if (i % 10 == 0) {
      auto v1 = rt.beginJit(*m, Tier::kTier1);
      (void)rt.publishCode(*v1, 512);
    }
  }
}

struct Bench {
  Runtime& rt;
  RundownEngine& engine;
  std::vector<VersionView> flat;              // emit's input
  std::vector<jitprov_method_record> floor;   // floor's input
  std::vector<trace::VersionRecord> records;  // record's input

  // One pass of SIDE; returns false for an unknown side. Sets events and retried.
  // Never inlined: tools/bench/rundown-emit --misses has callgrind count inside it only.
  __attribute__((noinline)) bool pass(const std::string& side, uint64_t id, uint64_t* events, uint64_t* retried) {
    *retried = 0;
    if (side == "floor") {
      jitprov_bench_floor_emit(id, floor.data(), floor.size());
      *events = floor.size();
    } else if (side == "emit" || side == "record") {
      // The same sessions the rundown records into (each event is for one session).
      const std::vector<trace::Session> sessions = trace::recordingSessions();
      const trace::Rundown ev{trace::Sessions(sessions), rt.instance(), id};
      trace::rundownBegin(ev, RundownMode::kLockFree, RundownTrigger::kApi, flat.size(), 0);
      if (side == "emit") {
        for (const VersionView& v : flat) trace::rundownMethod(ev, v);
      } else {
        for (trace::VersionRecord& rec : records) trace::rundownRecord(ev, rec);
      }
      trace::rundownEnd(ev, trace::RundownEnd{0, 0, flat.size(), 0, 0, 0, 0, 0, 0, false});
      *events = flat.size();
    } else if (side == "rundown") {
      const RundownResult res = engine.runNow(RundownMode::kLockFree, RundownTrigger::kApi);
      *events = res.versions;
      *retried = res.retried;
    } else {
      return false;
    }
    return true;
  }
};

bool waitForSessions() {
  for (int i = 0; i < 1000 && !(trace::rundownEventsEnabled() && jitprov_bench_floor_enabled()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return trace::rundownEventsEnabled() && jitprov_bench_floor_enabled();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: jitprov-bench-emit METHODS ROUND:SIDE... (SIDE: floor, record, emit, rundown)\n");
    return 2;
  }
  const uint64_t n = std::strtoull(argv[1], nullptr, 10);
  setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);
  if (!trace::loadProvider()) {
    std::fprintf(stderr, "emit-bench: %s\n", trace::providerStatus().c_str());
    return 1;
  }
  Runtime rt;
  registerMethods(rt, n);
  rt.drainReclamation();  // the registry quiet, as for a tracer that comes later
  {
    const MemoryStats ms = rt.memoryStats();
    std::printf("method, version and IL tables: %llu huge pages populated ahead, %llu late, %llu failed\n",
                (unsigned long long)ms.huge_pages_ahead, (unsigned long long)ms.huge_pages_late,
                (unsigned long long)ms.huge_pages_failed);
  }
  RundownEngine engine(rt, RundownMode::kLockFree, RundownTriggers{});
  Bench b{rt, engine, {}, {}};
  b.flat.reserve(n + n / 10);
  (void)rt.walk(WalkLocking::kNone, [&](const VersionView& v) { b.flat.push_back(v); });
  b.floor.reserve(b.flat.size());
  b.records.reserve(b.flat.size());
  // The records trace::rundownMethod makes of the views (names of registered methods are
  // short, NUL-terminated in the registry: pointed to, not copied, as there).
  for (const VersionView& v : b.flat) {
    b.records.push_back(trace::recordOf(rt.instance(), v));
    b.floor.push_back(b.records.back().r);
  }
  if (!waitForSessions()) {
    std::fprintf(stderr, "emit-bench: no session records both jitprov_rundown:* and jitprov_bench_floor:*\n");
    return 1;
  }
  std::printf("%llu methods, %zu versions, %d passes\n", (unsigned long long)n, b.flat.size(), argc - 2);
  const char* trace_dir = std::getenv("JITPROV_BENCH_TRACE_DIR");
  const char* only = std::getenv("JITPROV_BENCH_ONLY");
  for (int i = 2; i < argc; ++i) {
    const char* colon = std::strchr(argv[i], ':');
    if (colon == nullptr) {
      std::fprintf(stderr, "emit-bench: '%s' is not ROUND:SIDE\n", argv[i]);
      return 2;
    }
    const std::string round(argv[i], size_t(colon - argv[i])), side(colon + 1);
    if (only != nullptr && side != only) continue;
    uint64_t events = 0, retried = 0;
    const uint64_t w0 = clockNs(CLOCK_MONOTONIC), c0 = clockNs(CLOCK_THREAD_CPUTIME_ID);
    if (!b.pass(side, 1000 + uint64_t(i), &events, &retried)) {
      std::fprintf(stderr, "emit-bench: unknown side '%s' (floor, record, emit, rundown)\n", side.c_str());
      return 2;
    }
    const uint64_t c1 = clockNs(CLOCK_THREAD_CPUTIME_ID), w1 = clockNs(CLOCK_MONOTONIC);
    const double per = events ? double(events) : 1.0;
    std::printf("pass %s %s %.1f %.1f %llu %llu\n", round.c_str(), side.c_str(), double(w1 - w0) / per,
                double(c1 - c0) / per, (unsigned long long)events, (unsigned long long)retried);
    std::fflush(stdout);
    waitForConsumer(trace_dir);
  }
  return 0;
}
