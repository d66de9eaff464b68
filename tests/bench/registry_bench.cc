// Benchmarks of the registry with a large application (1M methods by default; env
// JITPROV_BENCH_METHODS). Not a pass/fail test: it prints Google Benchmark's table and
// then the ratios of figures measured side by side in this same run.
//
//   entry-point lookup: lock-free vs under the CVM lock (site lookup)
//   publish critical section: beginJit + publishCode of a tier-1 version
//   walk: lock-free walk of every published version, no event emission
//   memory: bytes per method and per native version
#include <jitprov/runtime.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace jitprov {
namespace {

uint64_t benchMethods() {
  const char* v = std::getenv("JITPROV_BENCH_METHODS");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 1000000;
}

// One shared application: N methods over 200 modules, every method at tier 0, one in
// four also at tier 1 (CoreCLR-like steady state).
struct App {
  Runtime rt;
  std::vector<MethodId> methods;
  uint64_t rss_before = 0;
  App() {
    const uint64_t n = benchMethods();
    std::vector<ModuleId> mods;
    for (int i = 0; i < 200; ++i) mods.push_back(*rt.registerModule("/app/lib" + std::to_string(i) + ".dll", false));
    methods.reserve(n);
    std::mt19937_64 rng(42);
    for (uint64_t i = 0; i < n; ++i) {
      const std::string name = "Method" + std::to_string(i);
      auto m = rt.registerMethod(mods[i % mods.size()],
                                 MethodDesc{uint32_t(0x06000000 + i), 0x96, "Contoso.Service.Handlers", name,
                                            "System.Threading.Tasks.Task (int32, string)"});
      methods.push_back(*m);
      auto v = rt.beginJit(*m, Tier::kTier0);
      (void)rt.publishCode(*v, uint32_t(64 + rng() % 2048));
      (void)rt.activate(*v);
      if (i % 4 == 0) {
        auto v1 = rt.beginJit(*m, Tier::kTier1);
        (void)rt.publishCode(*v1, uint32_t(64 + rng() % 1024));
        (void)rt.activate(*v1);
      }
    }
  }
};

App& app() {
  static App* a = new App();  // lives until exit: the benchmarks share it
  return *a;
}

void BM_EntryPointLockFree(benchmark::State& state) {
  App& a = app();
  std::mt19937_64 rng(1);
  uint64_t sum = 0;
  for (auto _ : state) {
    sum += a.rt.entryPoint(a.methods[rng() % a.methods.size()]);
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_EntryPointLockFree);

void BM_EntryPointLocked(benchmark::State& state) {
  App& a = app();
  std::mt19937_64 rng(1);
  uint64_t sum = 0;
  for (auto _ : state) {
    sum += *a.rt.entryPointLocked(a.methods[rng() % a.methods.size()]);
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_EntryPointLocked);

// Contended: the same lookups from 2 threads at once.
BENCHMARK(BM_EntryPointLockFree)->Threads(2);
BENCHMARK(BM_EntryPointLocked)->Threads(2);

void BM_PublishTier1(benchmark::State& state) {
  App& a = app();
  std::mt19937_64 rng(2);
  for (auto _ : state) {
    const MethodId m = a.methods[rng() % a.methods.size()];
    auto v = a.rt.beginJit(m, Tier::kTier1);
    auto r = a.rt.publishCode(*v, 256);
    benchmark::DoNotOptimize(r);
  }
  const auto hold = a.rt.lockStats().sites[0][int(LockSite::kTier1Publish)].hold;
  state.counters["hold_ns_mean"] = hold.count ? double(hold.total_ns) / double(hold.count) : 0;
}
BENCHMARK(BM_PublishTier1)->Iterations(200000);

void BM_Walk(benchmark::State& state, WalkLocking locking) {
  App& a = app();
  uint64_t versions = 0;
  for (auto _ : state) {
    uint64_t sum = 0;
    WalkStats st = a.rt.walk(locking, [&](const VersionView& v) { sum += v.code_start; });
    benchmark::DoNotOptimize(sum);
    versions += st.versions;
  }
  state.counters["versions_per_s"] = benchmark::Counter(double(versions), benchmark::Counter::kIsRate);
  state.counters["versions"] = double(versions) / double(state.iterations());
}
BENCHMARK_CAPTURE(BM_Walk, lockfree, WalkLocking::kNone)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(BM_Walk, locked, WalkLocking::kWholeWalk)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_Memory(benchmark::State& state) {
  App& a = app();
  for (auto _ : state) benchmark::DoNotOptimize(a.rt.memoryStats());
  const MemoryStats m = a.rt.memoryStats();
  state.counters["bytes_per_method"] = double(m.method_bytes) / double(m.live_methods);
  state.counters["bytes_per_version"] = double(m.version_bytes) / double(m.native_versions);
  state.counters["table_bytes_per_method"] = double(m.table_bytes) / double(m.live_methods);
  state.counters["methods"] = double(m.live_methods);
  state.counters["versions"] = double(m.native_versions);
}
BENCHMARK(BM_Memory)->Iterations(1);

// Keeps each run's real time per iteration so main() can print ratios.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      ns_[r.benchmark_name()] = r.GetAdjustedRealTime() * (r.time_unit == benchmark::kMillisecond ? 1e6 : 1.0);
      counters_[r.benchmark_name()] = r.counters;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double ns(const std::string& name) const {
    auto it = ns_.find(name);
    return it == ns_.end() ? 0 : it->second;
  }
  double counter(const std::string& name, const std::string& c) const {
    auto it = counters_.find(name);
    if (it == counters_.end()) return 0;
    auto jt = it->second.find(c);
    return jt == it->second.end() ? 0 : double(jt->second);
  }

 private:
  std::map<std::string, double> ns_;
  std::map<std::string, benchmark::UserCounters> counters_;
};

}  // namespace
}  // namespace jitprov

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::fprintf(stderr, "building a %llu-method application...\n", (unsigned long long)jitprov::benchMethods());
  jitprov::app();
  jitprov::RatioReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  auto ratio = [&](const char* what, const std::string& a, const std::string& b) {
    const double x = rep.ns(a), y = rep.ns(b);
    if (x > 0 && y > 0) std::printf("  %-44s %10.1f ns vs %10.1f ns  ratio %.2f\n", what, x, y, x / y);
  };
  std::printf("\nside-by-side, this run (%llu methods):\n", (unsigned long long)jitprov::benchMethods());
  ratio("entry point: locked / lock-free", "BM_EntryPointLocked", "BM_EntryPointLockFree");
  ratio("entry point, 2 threads: locked / lock-free", "BM_EntryPointLocked/threads:2",
        "BM_EntryPointLockFree/threads:2");
  ratio("walk: locked / lock-free", "BM_Walk/locked/iterations:5", "BM_Walk/lockfree/iterations:5");
  const double walk_ns = rep.ns("BM_Walk/lockfree/iterations:5");
  const double versions = rep.counter("BM_Walk/lockfree/iterations:5", "versions");
  if (walk_ns > 0 && versions > 0)
    std::printf("  %-44s %10.1f ns per version, %.1f M versions/s\n", "lock-free walk", walk_ns / versions,
                versions / walk_ns * 1e3);
  std::printf("  %-44s %10.1f ns (CVM lock hold, mean %.1f ns)\n", "publish (beginJit+publishCode)",
              rep.ns("BM_PublishTier1/iterations:200000"),
              rep.counter("BM_PublishTier1/iterations:200000", "hold_ns_mean"));
  std::printf("  %-44s %10.0f B per method (+%.0f B table), %.0f B per native version\n", "memory",
              rep.counter("BM_Memory/iterations:1", "bytes_per_method"),
              rep.counter("BM_Memory/iterations:1", "table_bytes_per_method"),
              rep.counter("BM_Memory/iterations:1", "bytes_per_version"));
  benchmark::Shutdown();
  return 0;
}
