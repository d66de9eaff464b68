// Rundown emission benchmark: the lock-free rundown's time per version against the
// time per event of a bare loop emitting the same payload (jitprov_rundown:method)
// into the same channel: the limit a rundown can reach. Rounds alternate so both
// sides see the same machine; prints each round and the ratio.
// Needs a tracing session enabling jitprov_rundown:* (tools/bench-rundown-emit sets
// one up); waits up to 10 s for it.
#include <jitprov/rundown.h>
#include <jitprov/runtime.h>

#include "trace.h"
#include "cvm_lock.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace jitprov;

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
  for (int i = 0; i < 100; ++i) mods.push_back(*rt.registerModule("/app/bin/Contoso.Lib" + std::to_string(i) + ".dll", false));
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
  std::vector<double> bare_ns, rd_ns;
  uint64_t retried = 0;
  for (int r = 0; r < rounds; ++r) {
    // The same sessions the rundown records into (each event is for one session).
    const std::vector<trace::Session> sessions = trace::recordingSessions();
    const trace::Sessions to(sessions);
    const uint64_t t0 = monotonicNs();
    trace::rundownBegin(to, 1000 + r, RundownMode::kLockFree, RundownTrigger::kApi, n, 0);
    for (const VersionView& v : flat) trace::rundownMethod(to, 1000 + r, v);
    trace::rundownEnd(to, 1000 + r, trace::RundownEnd{0, 0, flat.size(), 0, 0, 0, 0, 0, 0, false});
    const double bare = double(monotonicNs() - t0) / double(flat.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let the consumer drain
    const RundownResult res = engine.runNow(RundownMode::kLockFree, RundownTrigger::kApi);
    const double rd = double(res.duration_ns) / double(res.versions);
    retried += res.retried;
    std::printf("round %d: bare loop %.1f ns/event, lock-free rundown %.1f ns/version (%llu versions, retried %llu; "
                "its catch-up pass %.1f ms)\n",
                r + 1, bare, rd, (unsigned long long)res.versions, (unsigned long long)res.retried,
                double(res.catch_up_ns) / 1e6);
    bare_ns.push_back(bare);
    rd_ns.push_back(rd);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::sort(bare_ns.begin(), bare_ns.end());
  std::sort(rd_ns.begin(), rd_ns.end());
  const double b = bare_ns[bare_ns.size() / 2], d = rd_ns[rd_ns.size() / 2];
  std::printf("median: bare %.1f ns/event, rundown %.1f ns/version, ratio rundown/bare %.3f, stalls (retried) %llu\n",
              b, d, d / b, (unsigned long long)retried);
  return 0;
}
