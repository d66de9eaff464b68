// SPDX-License-Identifier: MIT
// Rundown emission benchmark: the lock-free rundown's time per version against the
// time per event of a bare loop emitting the same payload (jitprov_rundown:method)
// into the same channel: the limit a rundown can reach. Each round runs both, in turn
// (which goes first alternates), each after the consumer daemon has written the other's
// events (JITPROV_BENCH_TRACE_DIR: the trace, watched until it stops growing); prints
// each round's ratio and the median of them.
// Needs a tracing session enabling jitprov_rundown:* (tools/bench-rundown-emit sets
// one up); waits up to 10 s for it.
#include <jitprov/rundown.h>
#include <jitprov/runtime.h>

#include "cvm_lock.h"
#include "trace.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace jitprov;

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);
  if (!trace::loadProvider()) {
    std::fprintf(stderr, "emit-bench: %s\n", trace::providerStatus().c_str());
    return 1;
  }
  Runtime rt;
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
  // The bare loop's payload: the same records, copied once into a flat array (their
  // strings point into the registry, as the rundown's do).
  std::vector<VersionView> flat;
  flat.reserve(n + n / 10);
  (void)rt.walk(WalkLocking::kNone, [&](const VersionView& v) { flat.push_back(v); });
  for (int i = 0; i < 1000 && !trace::rundownEventsEnabled(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!trace::rundownEventsEnabled()) {
    std::fprintf(stderr, "emit-bench: jitprov_rundown events are not enabled by any session\n");
    return 1;
  }
  RundownEngine engine(rt, RundownMode::kLockFree, RundownTriggers{});
  std::printf("%llu methods, %zu versions, %d rounds\n", (unsigned long long)n, flat.size(), rounds);
  std::vector<double> bare_ns, rd_ns, ratios;
  uint64_t retried = 0;
  const char* trace_dir = std::getenv("JITPROV_BENCH_TRACE_DIR");
  // For a profiler: JITPROV_BENCH_ONLY=bare or =rundown runs that side only.
  const std::string only = std::getenv("JITPROV_BENCH_ONLY") ? std::getenv("JITPROV_BENCH_ONLY") : "";
  for (int r = 0; r < rounds; ++r) {
    double bare = 0, rd = 0;
    RundownResult res;
    // Odd rounds run the rundown first: neither side always follows the other's flush.
    for (int side = 0; side < 2; ++side) {
      const bool bare_side = (side == 0) == (r % 2 == 0);
      if ((bare_side && only == "rundown") || (!bare_side && only == "bare")) continue;
      if (bare_side) {
        // The same sessions the rundown records into (each event is for one session).
        const std::vector<trace::Session> sessions = trace::recordingSessions();
        const trace::Rundown ev{trace::Sessions(sessions), rt.instance(), uint64_t(1000 + r)};
        const uint64_t t0 = monotonicNs();
        trace::rundownBegin(ev, RundownMode::kLockFree, RundownTrigger::kApi, n, 0);
        for (const VersionView& v : flat) trace::rundownMethod(ev, v);
        trace::rundownEnd(ev, trace::RundownEnd{0, 0, flat.size(), 0, 0, 0, 0, 0, 0, false});
        bare = double(monotonicNs() - t0) / double(flat.size());
      } else {
        res = engine.runNow(RundownMode::kLockFree, RundownTrigger::kApi);
        rd = double(res.duration_ns) / double(res.versions);
        retried += res.retried;
      }
      waitForConsumer(trace_dir);
    }
    std::printf(
        "round %d (%s first): bare loop %.1f ns/event, lock-free rundown %.1f ns/version, ratio %.3f "
        "(%llu versions, retried %llu; its catch-up pass %.1f ms)\n",
        r + 1, r % 2 == 0 ? "bare" : "rundown", bare, rd, rd / bare, (unsigned long long)res.versions,
        (unsigned long long)res.retried, double(res.catch_up_ns) / 1e6);
    bare_ns.push_back(bare);
    rd_ns.push_back(rd);
    ratios.push_back(rd / bare);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf(
      "median: bare %.1f ns/event, rundown %.1f ns/version, ratio rundown/bare %.3f (median of the rounds' "
      "ratios), stalls (retried) %llu\n",
      median(bare_ns), median(rd_ns), median(ratios), (unsigned long long)retried);
  return 0;
}
