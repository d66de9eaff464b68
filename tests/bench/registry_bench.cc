// SPDX-License-Identifier: MIT
// Benchmarks of the registry with a large application (1M methods by default; env
// JITPROV_BENCH_METHODS). Not a pass/fail test: it prints Google Benchmark's table and
// then the ratios of figures measured side by side in this same run.
//
//   entry-point lookup: lock-free vs under the CVM lock (site lookup)
//   publish critical section: beginJit + publishCode of a tier-1 version
//   walk: lock-free walk of every published version, no event emission
//   walk with retirement support (acquire loads of `next`) vs the walk before it
//   host mode: publish + retire one version through the C API vs the C++ core, and
//     with a lock-free walker running meanwhile
//   physical floors beside the figures: a dependent (pointer-chasing) load per
//     version; two uncontended mutex lock/unlock pairs and a 56-byte new/delete
//   jitdump: a code load with the sink off and on, beside one pwritev of its record
//   memory: bytes per method and per native version
#include <jitprov/jitprov.h>
#include <jitprov/runtime.h>

#include "capi_internal.h"

#include <benchmark/benchmark.h>

#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace jitprov {
namespace {

uint64_t benchMethods() {
  const char* v = std::getenv("JITPROV_BENCH_METHODS");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 1000000;
}

// One shared application: N methods over 200 modules, every method at tier 0, one in
// four also at tier 1 (CoreCLR-like steady state).
// JITPROV_BENCH_LOCK_STATS=0: a runtime without in-process lock statistics (it then
// times an acquisition only while a tracer is attached to lock_released).
RuntimeConfig benchConfig() {
  const char* v = std::getenv("JITPROV_BENCH_LOCK_STATS");
  return RuntimeConfig{.lock_stats = v == nullptr || std::strcmp(v, "0") != 0};
}

struct App {
  Runtime rt{benchConfig()};
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

// The walk before retirement existed read `next` as an immutable field: the same walk
// with relaxed loads of it (walkBaselineForBench), side by side.
void BM_WalkBaseline(benchmark::State& state) {
  App& a = app();
  uint64_t versions = 0;
  for (auto _ : state) {
    uint64_t sum = 0;
    WalkStats st = a.rt.walkBaselineForBench([&](const VersionView& v) { sum += v.code_start; });
    benchmark::DoNotOptimize(sum);
    versions += st.versions;
  }
  state.counters["versions"] = double(versions) / double(state.iterations());
}
BENCHMARK(BM_WalkBaseline)->Unit(benchmark::kMillisecond)->Iterations(5);
// Interleaved a second time each, against drift on a shared machine.
BENCHMARK_CAPTURE(BM_Walk, lockfree_again, WalkLocking::kNone)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_WalkBaseline)->Name("BM_WalkBaseline_again")->Unit(benchmark::kMillisecond)->Iterations(5);

// Floor of the walk: one dependent load per version through a randomly permuted cycle
// as large as the registry's version count (what each cache-missing hop costs here).
void BM_FloorPointerChase(benchmark::State& state) {
  const size_t n = size_t(app().rt.memoryStats().native_versions);
  std::vector<uint32_t> order(n), next(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(3));
  for (size_t i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
  uint32_t at = order[0];
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) at = next[at];
  }
  benchmark::DoNotOptimize(at);
  state.counters["hops"] = double(n);
}
BENCHMARK(BM_FloorPointerChase)->Unit(benchmark::kMillisecond)->Iterations(3);

// Host mode: a runtime with 10 000 methods, each with one live version, through the C++
// core and through the C API; each iteration publishes one more version at an address
// the host picks and retires it again (HotSpot's flush-and-reuse).
// The C API is called the way a host calls it: in libjitprov.so.1 (built next to this
// benchmark; dlopen()ed, so its functions are reached through pointers, as through the
// PLT), not in the static core this benchmark links.
struct SharedLib {
  decltype(&jitprov_runtime_create) runtime_create;
  decltype(&jitprov_module_register) module_register;
  decltype(&jitprov_method_register) method_register;
  decltype(&jitprov_code_publish) code_publish;
  decltype(&jitprov_code_retire) code_retire;
  SharedLib() {
    void* h = dlopen(JITPROV_SHARED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::fprintf(stderr, "dlopen %s: %s\n", JITPROV_SHARED_LIBRARY, dlerror());
      std::abort();
    }
    auto sym = [&](const char* name) {
      void* p = dlsym(h, name);
      if (p == nullptr) std::abort();
      return p;
    };
    runtime_create = reinterpret_cast<decltype(runtime_create)>(sym("jitprov_runtime_create"));
    module_register = reinterpret_cast<decltype(module_register)>(sym("jitprov_module_register"));
    method_register = reinterpret_cast<decltype(method_register)>(sym("jitprov_method_register"));
    code_publish = reinterpret_cast<decltype(code_publish)>(sym("jitprov_code_publish"));
    code_retire = reinterpret_cast<decltype(code_retire)>(sym("jitprov_code_retire"));
  }
};

struct HostApp {
  static constexpr int kMethods = 10000;
  Runtime rt{RuntimeConfig{.code_mode = CodeMode::kHost}};
  SharedLib so;
  jitprov_runtime* crt = nullptr;
  std::vector<MethodId> methods, cmethods;
  HostApp() {
    jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
    cfg.code_mode = JITPROV_CODE_HOST;
    if (so.runtime_create(&cfg, &crt) != JITPROV_OK) std::abort();
    const ModuleId mod = *rt.registerModule("/app/host.jar", false);
    uint64_t cmod = 0;
    (void)so.module_register(crt, "/app/host.jar", 0, &cmod);
    for (int i = 0; i < kMethods; ++i) {
      const std::string name = "m" + std::to_string(i);
      const MethodId m = *rt.registerMethod(mod, MethodDesc{0, 0, "com.example.Host", name, "()V", uint64_t(i + 1)});
      methods.push_back(m);
      (void)rt.publishHostCode(m, HostCode{0x100000000ULL + uint64_t(i) * 4096, 1024, Tier::kTier1, 4, 0});
      jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
      d.host_key = uint64_t(i + 1);
      d.name_space = "com.example.Host";
      d.name = name.c_str();
      d.signature = "()V";
      uint64_t cm = 0;
      (void)so.method_register(crt, cmod, &d, &cm);
      cmethods.push_back(cm);
      jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
      c.code_start = 0x100000000ULL + uint64_t(i) * 4096;
      c.code_size = 1024;
      c.tier = JITPROV_TIER1;
      uint64_t v = 0;
      (void)so.code_publish(crt, cm, &c, &v);
    }
  }
};

HostApp& hostApp() {
  static HostApp* h = new HostApp();
  return *h;
}

// The address a cycle publishes at: inside the method's own 4 KiB slot, after its live
// version, so it never overlaps.
uint64_t cycleAddress(size_t i) { return 0x100000000ULL + uint64_t(i) * 4096 + 2048; }

void BM_HostPublishRetireCpp(benchmark::State& state) {
  HostApp& h = hostApp();
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % h.methods.size();
    auto v = h.rt.publishHostCode(h.methods[k], HostCode{cycleAddress(k), 512, Tier::kTier1, 4, 0});
    if (!v.ok() || !h.rt.retireVersion(*v).ok()) state.SkipWithError("publish/retire failed");
  }
}
BENCHMARK(BM_HostPublishRetireCpp)->Iterations(200000);

void BM_HostPublishRetireC(benchmark::State& state) {
  HostApp& h = hostApp();
  size_t i = 0;
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  c.code_size = 512;
  c.tier = JITPROV_TIER1;
  c.host_tier = 4;
  for (auto _ : state) {
    const size_t k = i++ % h.cmethods.size();
    c.code_start = cycleAddress(k);
    uint64_t v = 0;
    if (h.so.code_publish(h.crt, h.cmethods[k], &c, &v) != JITPROV_OK || h.so.code_retire(h.crt, v) != JITPROV_OK)
      state.SkipWithError("publish/retire failed");
  }
}
BENCHMARK(BM_HostPublishRetireC)->Iterations(200000);

// C API vs C++ core on one and the same runtime (the static core's C API, so only the
// wrapper differs), interleaved: each iteration times 1000 cycles of each, alternately,
// so that drift on a shared machine hits both alike. Counters: ns per cycle of each.
void BM_HostPublishRetireInterleaved(benchmark::State& state) {
  static const struct One {
    jitprov_runtime* crt = nullptr;
    Runtime* rt = nullptr;
    std::vector<MethodId> methods;
    One() {
      jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
      cfg.code_mode = JITPROV_CODE_HOST;
      uint64_t mod = 0;
      if (jitprov_runtime_create(&cfg, &crt) != JITPROV_OK || jitprov_module_register(crt, "/app/one.jar", 0, &mod))
        std::abort();
      rt = jitprovInternalRuntime(crt);
      for (int i = 0; i < HostApp::kMethods; ++i) {
        const std::string name = "m" + std::to_string(i);
        jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
        d.name_space = "com.example.Host";
        d.name = name.c_str();
        d.signature = "()V";
        uint64_t m = 0;
        if (jitprov_method_register(crt, mod, &d, &m) != JITPROV_OK) std::abort();
        methods.push_back(m);
      }
    }
  } one;
  struct Same {
    jitprov_runtime* crt;
    Runtime* rt;
    const std::vector<MethodId>& cmethods;
    const std::vector<MethodId>& methods;
  } h{one.crt, one.rt, one.methods, one.methods};
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  c.code_size = 512;
  c.tier = JITPROV_TIER1;
  c.host_tier = 4;
  double cpp_ns = 0, c_ns = 0;
  size_t i = 0, j = 0;
  constexpr int kBatch = 1000;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < kBatch; ++n) {
      const size_t k = i++ % h.methods.size();
      auto v = h.rt->publishHostCode(h.methods[k], HostCode{cycleAddress(k), 512, Tier::kTier1, 4, 0});
      if (!v.ok() || !h.rt->retireVersion(*v).ok()) state.SkipWithError("publish/retire failed");
    }
    auto t1 = std::chrono::steady_clock::now();
    for (int n = 0; n < kBatch; ++n) {
      const size_t k = j++ % h.cmethods.size();
      c.code_start = cycleAddress(k);
      uint64_t v = 0;
      if (jitprov_code_publish(h.crt, h.cmethods[k], &c, &v) != JITPROV_OK ||
          jitprov_code_retire(h.crt, v) != JITPROV_OK)
        state.SkipWithError("publish/retire failed");
    }
    auto t2 = std::chrono::steady_clock::now();
    cpp_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
    c_ns += std::chrono::duration<double, std::nano>(t2 - t1).count();
  }
  const double cycles = double(state.iterations()) * kBatch;
  state.counters["cpp_ns"] = cpp_ns / cycles;
  state.counters["c_ns"] = c_ns / cycles;
}
BENCHMARK(BM_HostPublishRetireInterleaved)->Iterations(400);

// The same cycles while another thread walks the registry lock-free, back to back.
void BM_HostPublishRetireWithWalker(benchmark::State& state) {
  HostApp& h = hostApp();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> walks{0};
  std::thread walker([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      uint64_t sum = 0;
      h.rt.walk(WalkLocking::kNone, [&](const VersionView& v) { sum += v.code_start; });
      benchmark::DoNotOptimize(sum);
      walks.fetch_add(1, std::memory_order_relaxed);
    }
  });
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % h.methods.size();
    auto v = h.rt.publishHostCode(h.methods[k], HostCode{cycleAddress(k), 512, Tier::kTier1, 4, 0});
    if (!v.ok() || !h.rt.retireVersion(*v).ok()) state.SkipWithError("publish/retire failed");
  }
  stop.store(true);
  walker.join();
  state.counters["walks"] = double(walks.load());
  state.counters["cycles_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HostPublishRetireWithWalker)->Iterations(200000)->UseRealTime();

// Floor of a publish + retire cycle: what its two lock acquisitions and its node's
// allocation cost with nothing else (uncontended std::mutex, 56-byte new/delete).
void BM_FloorTwoLocksAndNode(benchmark::State& state) {
  std::mutex mu;
  for (auto _ : state) {
    mu.lock();
    auto* p = new std::array<char, 56>();
    benchmark::DoNotOptimize(p);
    mu.unlock();
    mu.lock();
    delete p;
    mu.unlock();
  }
}
BENCHMARK(BM_FloorTwoLocksAndNode)->Iterations(200000);

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

// The jitdump sink's cost per code load (runtime/jitdump.h): publish + retire of a
// 512-byte version whose code is real memory, with the sink off and on (the code copied,
// the file unlinked at once so that nothing stays on disk), beside its floor: one
// pwritev of such a record (56-byte header, name, code) at the end of a file.
struct JitdumpApp {
  static constexpr int kMethods = 10000;
  Runtime off{RuntimeConfig{.code_mode = CodeMode::kHost}}, on{RuntimeConfig{.code_mode = CodeMode::kHost}};
  std::vector<unsigned char> code = std::vector<unsigned char>(size_t(kMethods) * 4096, 0x90);
  std::vector<MethodId> m_off, m_on;
  std::string dir;
  JitdumpApp() {
    char tmpl[] = "/tmp/jitprov-bench-jitdump.XXXXXX";
    dir = mkdtemp(tmpl);
    for (Runtime* rt : {&off, &on}) {
      const ModuleId mod = *rt->registerModule("/app/host.jar", false);
      for (int i = 0; i < kMethods; ++i)
        (rt == &off ? m_off : m_on)
            .push_back(*rt->registerMethod(
                mod, MethodDesc{0, 0, "com.example.Host", "m" + std::to_string(i), "()V", uint64_t(i + 1)}));
    }
    if (!on.jitdumpOpen(JitdumpOptions{dir, true}).ok()) std::abort();
    const std::string file = dir + "/jit-" + std::to_string(getpid()) + ".dump";
    unlink(file.c_str());
    rmdir(dir.c_str());
  }
  uint64_t address(size_t k) const { return reinterpret_cast<uintptr_t>(code.data()) + k * 4096; }
};

JitdumpApp& jitdumpApp() {
  static JitdumpApp* a = new JitdumpApp();
  return *a;
}

void BM_JitdumpLoad(benchmark::State& state, bool sink) {
  JitdumpApp& a = jitdumpApp();
  Runtime& rt = sink ? a.on : a.off;
  const std::vector<MethodId>& ms = sink ? a.m_on : a.m_off;
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % ms.size();
    auto v = rt.publishHostCode(ms[k], HostCode{a.address(k), 512, Tier::kTier1, 4, 0});
    if (!v.ok() || !rt.retireVersion(*v).ok()) state.SkipWithError("publish/retire failed");
  }
  if (sink) {
    const JitdumpStats st = a.on.jitdumpStats();
    state.counters["write_errors"] = double(st.write_errors);
    state.counters["file_mb"] = double(st.bytes) / 1e6;
  }
}
BENCHMARK_CAPTURE(BM_JitdumpLoad, off, false)->Iterations(100000);
BENCHMARK_CAPTURE(BM_JitdumpLoad, on, true)->Iterations(100000);

void BM_FloorJitdumpWrite(benchmark::State& state) {
  char tmpl[] = "/tmp/jitprov-bench-floor.XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) std::abort();
  unlink(tmpl);
  unsigned char head[56] = {};
  static const char kName[] = "com.example.Host::m1234";
  JitdumpApp& a = jitdumpApp();  // the code the loads copy, from the same addresses in turn
  uint64_t off = 0;
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % JitdumpApp::kMethods;
    iovec iov[3] = {{head, sizeof head}, {const_cast<char*>(kName), sizeof kName}, {&a.code[k * 4096], 512}};
    const ssize_t w = pwritev(fd, iov, 3, off_t(off));
    if (w <= 0) state.SkipWithError("pwritev failed");
    off += uint64_t(w);
  }
  close(fd);
}
BENCHMARK(BM_FloorJitdumpWrite)->Iterations(100000);

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
  ratio("walk: with retirement / before (1st pair)", "BM_Walk/lockfree/iterations:5", "BM_WalkBaseline/iterations:5");
  ratio("walk: with retirement / before (2nd pair)", "BM_Walk/lockfree_again/iterations:5",
        "BM_WalkBaseline_again/iterations:5");
  ratio("publish+retire: libjitprov.so.1 / C++ core", "BM_HostPublishRetireC/iterations:200000",
        "BM_HostPublishRetireCpp/iterations:200000");
  {
    const double cpp = rep.counter("BM_HostPublishRetireInterleaved/iterations:400", "cpp_ns");
    const double c = rep.counter("BM_HostPublishRetireInterleaved/iterations:400", "c_ns");
    if (cpp > 0 && c > 0)
      std::printf("  %-44s %10.1f ns vs %10.1f ns  ratio %.2f\n",
                  "publish+retire: C API / C++, one runtime, interleaved", c, cpp, c / cpp);
  }
  ratio("publish+retire: with walker / without", "BM_HostPublishRetireWithWalker/iterations:200000/real_time",
        "BM_HostPublishRetireCpp/iterations:200000");
  const double cycles = rep.counter("BM_HostPublishRetireWithWalker/iterations:200000/real_time", "cycles_per_s");
  if (cycles > 0)
    std::printf("  %-44s %10.0f cycles/s, %.0f walks of %d methods meanwhile\n", "publish+retire with a walker", cycles,
                rep.counter("BM_HostPublishRetireWithWalker/iterations:200000/real_time", "walks"),
                jitprov::HostApp::kMethods);
  {
    const double on = rep.ns("BM_JitdumpLoad/on/iterations:100000"),
                 off = rep.ns("BM_JitdumpLoad/off/iterations:100000");
    const double floor = rep.ns("BM_FloorJitdumpWrite/iterations:100000");
    if (on > 0 && off > 0 && floor > 0)
      std::printf("  %-44s %10.1f ns vs %10.1f ns: +%.1f ns per load; floor (one pwritev): %.1f ns\n",
                  "load+retire, 512 B: jitdump on / off", on, off, on - off, floor);
  }
  ratio("publish+retire / floor (2 lock pairs + node)", "BM_HostPublishRetireCpp/iterations:200000",
        "BM_FloorTwoLocksAndNode/iterations:200000");
  const double walk_ns = rep.ns("BM_Walk/lockfree/iterations:5");
  const double versions = rep.counter("BM_Walk/lockfree/iterations:5", "versions");
  if (walk_ns > 0 && versions > 0)
    std::printf("  %-44s %10.1f ns per version, %.1f M versions/s\n", "lock-free walk", walk_ns / versions,
                versions / walk_ns * 1e3);
  const double chase_ns = rep.ns("BM_FloorPointerChase/iterations:3");
  const double hops = rep.counter("BM_FloorPointerChase/iterations:3", "hops");
  if (chase_ns > 0 && hops > 0 && walk_ns > 0 && versions > 0)
    std::printf("  %-44s %10.1f ns per hop (walk / floor: %.2f)\n", "floor: dependent load, random order",
                chase_ns / hops, (walk_ns / versions) / (chase_ns / hops));
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
