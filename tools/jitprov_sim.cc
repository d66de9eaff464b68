// jitprov-sim: a simulated JIT runtime driving libjitprov like a large application.
//
// Methods spread over modules with plausible namespaces, names and signatures; calls
// drawn from a skewed (Zipf-like, s = 1) distribution drive first-call compiles at tier
// 0 and tier-up at a call-count threshold; OSR, ReJIT and module unload happen at
// configurable rates; compilation cost is simulated outside the lock. A rundown thread
// answers the triggers of --rundown-trigger.
//
// Signals: SIGINT/SIGTERM end it cleanly (exit rundown if asked, stats written);
// SIGUSR2 requests a rundown (trigger signal); SIGUSR1 writes --stats-json now.
#include <jitprov/rundown.h>
#include <jitprov/runtime.h>

#include "sim_stats.h"

#include "cli.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace jitprov::sim {
namespace {

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_dump = 0;
RundownEngine* g_engine = nullptr;

void onStop(int) { g_stop = 1; }
void onDump(int) { g_dump = 1; }
void onRundown(int) {
  if (g_engine != nullptr) g_engine->requestFromSignal();
}

struct Options {
  uint64_t methods = 100000;
  uint32_t modules = 100;
  uint32_t jit_threads = 2;
  double duration = 0;
  std::string rundown = "lockfree";
  std::string triggers = "session,signal";
  uint64_t seed = 1;
  std::string stats_json;
  std::string ready_file;
  uint32_t threshold = 30;
  double warm = 1.0;          // fraction of methods compiled at tier 0 before ready
  double hot = 0.1;           // fraction of those also at tier 1 before ready
  uint32_t tier0_us = 40;     // simulated compile cost
  uint32_t tier1_us = 300;
  double osr_rate = 0.0002;   // per call
  double rejit_rate = 0.00002;
  double unload_rate = 0.5;   // collectible module unloads per second
  double collectible = 0.2;   // fraction of modules that are collectible
  uint32_t calls_per_ms = 200;  // per JIT thread
  double jit_delay = 0;         // seconds between ready and the JIT threads' start
  std::string fault = "none";   // test build only: RundownFault
  // Rundown events per second: what lttng's default non-blocking channel drains here
  // (README "Tracing with lttng"); 0 = unpaced, for the dedicated blocking channel.
  uint64_t rundown_rate = 500000;
};

const char* const kNamespaces[] = {
    "System.Collections.Generic", "System.Linq", "System.Text.Json", "System.Net.Http",
    "Microsoft.Extensions.Logging", "Microsoft.AspNetCore.Routing", "Contoso.Orders.Services",
    "Contoso.Orders.Domain", "Contoso.Billing.Invoices", "Contoso.Shipping.Tracking",
    "Fabrikam.Inventory.Data", "Fabrikam.Catalog.Search", "Newtonsoft.Json.Linq", "Npgsql.Internal"};
const char* const kTypes[] = {"OrderService", "InvoiceRepository", "Dictionary`2", "List`1", "JsonSerializer",
                              "RouteMatcher", "HttpClientHandler", "ShipmentTracker", "PriceCalculator",
                              "StockLevelCache", "QueryBuilder", "ConnectionPool", "Logger`1", "JToken"};
const char* const kVerbs[] = {"Get", "Set", "Try", "Process", "Handle", "Validate", "Serialize", "Parse",
                              "Compute", "Dispatch", "Load", "Find", "Update", "Build", "Resolve"};
const char* const kNouns[] = {"Order", "Item", "Value", "Route", "Token", "Price", "Shipment", "Customer",
                              "Batch", "Connection", "Entry", "Key", "Request", "Response", "Snapshot"};
const char* const kSigs[] = {"void ()", "int32 (string)", "bool (int64, int32)", "string (object)",
                             "System.Threading.Tasks.Task`1<!0> (System.Threading.CancellationToken)",
                             "void (!0, class System.Collections.Generic.IEqualityComparer`1<!0>)",
                             "valuetype System.Span`1<uint8> (int32, int32)", "float64 (float64[], int32)"};

template <class T, size_t N>
const T& pick(const T (&a)[N], uint64_t r) {
  return a[r % N];
}

// The application: methods in module-contiguous slots, so an unloaded module's slots
// are refilled by its replacement's methods.
struct App {
  Runtime rt;
  Options opt;
  // slot -> current method id. Written by the main thread (registration, and the
  // replacement of an unloaded module) with release; JIT threads load it with acquire.
  // A JIT thread may still use the old id for a moment: the runtime then answers
  // kMethodUnloaded, counted as a lost race.
  std::vector<std::atomic<uint64_t>> slot_method;
  // slot -> a JIT thread is compiling it (one compile per method at a time, as a
  // runtime's per-method JIT lock would). CAS acquire / store release: a try-lock.
  std::vector<std::atomic<uint8_t>> compiling;
  std::vector<uint32_t> zipf_perm;                 // rank -> slot
  struct ModuleSlots {
    ModuleId id;
    uint64_t begin, end;
    bool collectible;
    uint32_t generation;
  };
  std::vector<ModuleSlots> modules;  // main thread only
  JitCounters counters;

  explicit App(const Options& o)
      : rt(RuntimeConfig{.tier_up_threshold = o.threshold, .lock_stats = true}),
        opt(o),
        slot_method(o.methods),
        compiling(o.methods) {}

  bool registerModuleSlots(size_t index, uint64_t begin, uint64_t end, bool collectible, uint32_t gen,
                           std::mt19937_64& rng) {
    const std::string path = std::string(collectible ? "/app/plugins/" : "/app/bin/") +
                             pick(kNamespaces, index) + (collectible ? ".Plugin" : "") + "." +
                             std::to_string(index) + (gen ? ".g" + std::to_string(gen) : "") + ".dll";
    auto mod = rt.registerModule(path, collectible);
    if (!mod.ok()) {
      std::fprintf(stderr, "jitprov-sim: register module %s: %s\n", path.c_str(), mod.message());
      return false;
    }
    for (uint64_t s = begin; s < end; ++s) {
      const uint64_t r = rng();
      const std::string ns = std::string(pick(kNamespaces, index * 7 + (r & 3))) + "." + pick(kTypes, r >> 8);
      const std::string name = std::string(pick(kVerbs, r >> 16)) + pick(kNouns, r >> 24) +
                               ((r >> 32) % 3 == 0 ? "Async" : "") + "_" + std::to_string(s);
      auto m = rt.registerMethod(*mod, MethodDesc{uint32_t(0x06000001 + (s - begin)), uint32_t(0x0006 | ((r >> 40) & 0x90)),
                                                  ns, name, pick(kSigs, r >> 48)});
      if (!m.ok()) {
        std::fprintf(stderr, "jitprov-sim: register method %s: %s\n", name.c_str(), m.message());
        return false;
      }
      slot_method[s].store(*m, std::memory_order_release);
    }
    modules.push_back({*mod, begin, end, collectible, gen});
    return true;
  }

  static void spin(uint32_t us) {
    if (us == 0) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  // One JIT path for the method in `slot`, unless another thread is compiling it. A race
  // lost to an unload is counted (lost_races), any other API error too (errors).
  void compile(uint64_t slot, Tier tier, uint32_t cost_us, std::mt19937_64& rng, bool activate = true) {
    uint8_t expected = 0;
    if (!compiling[slot].compare_exchange_strong(expected, 1, std::memory_order_acquire)) return;
    const MethodId m = slot_method[slot].load(std::memory_order_acquire);
    auto v = rt.beginJit(m, tier, tier == Tier::kTier1Osr ? uint32_t(rng() % 400 + 8) : 0);
    if (v.ok()) {
      spin(cost_us);
      auto r = rt.publishCode(*v, uint32_t(64 + rng() % (tier == Tier::kTier0 ? 4000 : 2000)));
      if (r.ok()) {
        counters.compiled[static_cast<int>(tier)].fetch_add(1, std::memory_order_relaxed);
        if (activate) {
          auto a = rt.activate(*v);
          if (!a.ok()) counters.note(a.error());
        }
      } else {
        counters.note(r.error());
      }
    } else {
      counters.note(v.error());
    }
    compiling[slot].store(0, std::memory_order_release);
  }

  void jitThread(uint32_t index, const std::atomic<bool>& stop) {
    std::mt19937_64 rng(opt.seed * 7919 + index);
    std::uniform_real_distribution<double> u01(0, 1);
    const double log_n = std::log(double(opt.methods));
    while (!stop.load(std::memory_order_relaxed)) {
      for (uint32_t c = 0; c < opt.calls_per_ms; ++c) {
        const uint64_t rank = std::min<uint64_t>(opt.methods - 1, uint64_t(std::exp(u01(rng) * log_n)) - 1);
        const uint64_t slot = zipf_perm[rank];
        const MethodId m = slot_method[slot].load(std::memory_order_acquire);
        counters.calls.fetch_add(1, std::memory_order_relaxed);
        if (rt.entryPoint(m) == 0) {
          // Not compiled (new, or its IL was ReJIT-ed): the prestub compiles it.
          compile(slot, Tier::kTier0, opt.tier0_us, rng);
          continue;
        }
        if (rt.recordCall(m)) compile(slot, Tier::kTier1, opt.tier1_us, rng);
        const double x = u01(rng);
        if (x < opt.osr_rate) {
          compile(slot, Tier::kTier1Osr, opt.tier1_us, rng, false);
        } else if (x < opt.osr_rate + opt.rejit_rate) {
          auto r = rt.requestRejit(m);
          if (r.ok()) {
            counters.rejits.fetch_add(1, std::memory_order_relaxed);
            compile(slot, rng() % 2 ? Tier::kInstrumented : Tier::kOptimized, opt.tier1_us, rng);
          } else {
            counters.note(r.error());
          }
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Main thread: unload a random collectible module and load a replacement.
  void unloadOne(std::mt19937_64& rng) {
    std::vector<size_t> candidates;
    for (size_t i = 0; i < modules.size(); ++i)
      if (modules[i].collectible) candidates.push_back(i);
    if (candidates.empty()) return;
    const size_t i = candidates[rng() % candidates.size()];
    const ModuleSlots ms = modules[i];
    auto r = rt.unloadModule(ms.id);
    if (!r.ok()) {
      counters.note(r.error());
      return;
    }
    counters.unloads.fetch_add(1, std::memory_order_relaxed);
    modules.erase(modules.begin() + long(i));
    registerModuleSlots(i, ms.begin, ms.end, true, ms.generation + 1, rng);
  }
};

bool writeStats(const std::string& path, const App& app, const RundownEngine& engine, const Options& opt) {
  if (path.empty()) return true;
  const MemoryStats ms = app.rt.memoryStats();
  nlohmann::json j = {
      {"pid", getpid()},
      {"config", {{"methods", opt.methods}, {"modules", opt.modules}, {"jit_threads", opt.jit_threads},
                  {"rundown", opt.rundown}, {"rundown_trigger", opt.triggers}, {"seed", opt.seed}}},
      {"provider", traceProviderStatus()},
      {"memory", {{"live_methods", ms.live_methods}, {"native_versions", ms.native_versions},
                  {"method_bytes", ms.method_bytes}, {"version_bytes", ms.version_bytes}}},
      {"jit", jitToJson(app.counters)},
      {"lock", lockStatsToJson(app.rt.lockStats())},
      {"rundowns", rundownsToJson(engine.results())},
  };
  if (!writeFileAtomically(path, j.dump(1) + "\n")) {
    std::fprintf(stderr, "jitprov-sim: write --stats-json %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

int run(const Options& opt) {
  std::vector<RundownMode> modes;
  for (size_t pos = 0; pos <= opt.rundown.size();) {
    const size_t comma = std::min(opt.rundown.find(',', pos), opt.rundown.size());
    const std::string one = opt.rundown.substr(pos, comma - pos);
    RundownMode mode;
    if (!parseRundownMode(one, &mode)) {
      std::fprintf(stderr, "jitprov-sim: --rundown: '%s' is not one of lockfree, locked, per-method\n", one.c_str());
      return 2;
    }
    modes.push_back(mode);
    pos = comma + 1;
  }
  RundownTriggers triggers;
  std::string err;
  if (!parseTriggers(opt.triggers, &triggers, &err)) {
    std::fprintf(stderr, "jitprov-sim: --rundown-trigger: %s\n", err.c_str());
    return 2;
  }
  // Rundown events go to a channel with --blocking-timeout (README): let lttng-ust
  // block there. Only the rundown thread emits into that channel, so only it can block.
  setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);
  // Load the tracing provider before anything is compiled, so that a session already
  // tracing sees every method_load (as a host runtime would, at start-up).
  (void)traceProviderStatus();

  auto app = std::make_unique<App>(opt);
  std::mt19937_64 rng(opt.seed);
  const auto t0 = std::chrono::steady_clock::now();
  // Modules: sizes vary, a fraction collectible.
  const uint64_t per = std::max<uint64_t>(1, opt.methods / opt.modules);
  for (uint32_t i = 0; i < opt.modules; ++i) {
    const uint64_t begin = i * per;
    const uint64_t end = i + 1 == opt.modules ? opt.methods : std::min(opt.methods, begin + per);
    if (begin >= end) break;
    const bool collectible = double(rng() % 1000) < opt.collectible * 1000;
    if (!app->registerModuleSlots(i, begin, end, collectible, 0, rng)) return 1;
  }
  app->zipf_perm.resize(opt.methods);
  for (uint64_t i = 0; i < opt.methods; ++i) app->zipf_perm[i] = uint32_t(i);
  std::shuffle(app->zipf_perm.begin(), app->zipf_perm.end(), rng);
  // Warm start: the application has been running for a while.
  const uint64_t warm = uint64_t(opt.warm * double(opt.methods));
  for (uint64_t rank = 0; rank < warm; ++rank) {
    const uint64_t slot = app->zipf_perm[rank];
    app->compile(slot, Tier::kTier0, 0, rng);
    if (double(rank) < opt.hot * double(warm)) app->compile(slot, Tier::kTier1, 0, rng);
  }
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  RundownEngine engine(app->rt, modes, triggers);
  engine.setMaxRate(opt.rundown_rate);
  RundownFault fault = RundownFault::kNone;
  if (!parseRundownFault(opt.fault, &fault)) {
    std::fprintf(stderr, "jitprov-sim: --inject-fault: '%s' is not one of duplicate, torn, skip, no-end\n",
                 opt.fault.c_str());
    return 2;
  }
  engine.injectFault(fault);
  g_engine = &engine;
  struct sigaction sa {};
  sa.sa_handler = onStop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = onDump;
  sigaction(SIGUSR1, &sa, nullptr);
  sa.sa_handler = onRundown;
  sigaction(SIGUSR2, &sa, nullptr);
  if (auto r = engine.start(); !r.ok()) {
    std::fprintf(stderr, "jitprov-sim: start the rundown thread: %s\n", r.message());
    return 1;
  }

  // Lock statistics cover the application's run, not the warm start above.
  app->rt.resetLockStats();
  std::atomic<bool> stop{false};
  std::vector<std::thread> jit;
  auto start_jit = [&] {
    for (uint32_t i = 0; i < opt.jit_threads; ++i) jit.emplace_back([&, i] { app->jitThread(i, stop); });
  };
  if (opt.jit_delay == 0) start_jit();

  std::fprintf(stderr, "jitprov-sim: pid %d, %llu methods in %zu modules, %llu native versions, ready in %.1f s; "
               "rundown %s on %s; %s\n",
               int(getpid()), (unsigned long long)opt.methods, app->modules.size(),
               (unsigned long long)app->rt.memoryStats().native_versions, setup_s, opt.rundown.c_str(),
               opt.triggers.c_str(), traceProviderStatus().c_str());
  if (!opt.ready_file.empty() && !writeFileAtomically(opt.ready_file, std::to_string(getpid()) + "\n")) {
    std::fprintf(stderr, "jitprov-sim: write --ready-file %s: %s\n", opt.ready_file.c_str(), std::strerror(errno));
  }

  const auto start = std::chrono::steady_clock::now();
  const auto jit_start = start + std::chrono::microseconds(int64_t(opt.jit_delay * 1e6));
  auto next_unload = jit_start;
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto now = std::chrono::steady_clock::now();
    if (opt.duration > 0 && std::chrono::duration<double>(now - start).count() >= opt.duration) break;
    if (jit.empty() && opt.jit_threads > 0 && now >= jit_start) start_jit();
    if (g_dump) {
      g_dump = 0;
      writeStats(opt.stats_json, *app, engine, opt);
    }
    if (now < jit_start) continue;  // the application is idle until then
    if (opt.unload_rate > 0 && now >= next_unload) {
      if (next_unload != jit_start) app->unloadOne(rng);
      next_unload = now + std::chrono::microseconds(int64_t(1e6 / opt.unload_rate));
    }
  }
  stop.store(true);
  for (auto& t : jit) t.join();
  engine.stop();  // exit rundown, if asked
  g_engine = nullptr;
  const int rc = writeStats(opt.stats_json, *app, engine, opt) ? 0 : 1;
  const JitSummary js = app->counters.summary();
  std::fprintf(stderr, "jitprov-sim: %llu calls, %llu compiles, %llu rundowns, %llu API errors\n",
               (unsigned long long)js.calls, (unsigned long long)js.compiles,
               (unsigned long long)engine.completed(), (unsigned long long)js.errors);
  return js.errors == 0 ? rc : 1;
}

}  // namespace
}  // namespace jitprov::sim

int main(int argc, char** argv) {
  jitprov::sim::Options o;
  CLI::App cli{"jitprov-sim: a simulated JIT runtime (registry, JIT threads, rundown thread) driving libjitprov"};
  cli.add_option("--methods", o.methods, "methods to register")->check(CLI::Range(uint64_t{1}, uint64_t{10000000}));
  cli.add_option("--modules", o.modules, "modules they spread over")->check(CLI::Range(1u, 100000u));
  cli.add_option("--jit-threads", o.jit_threads, "application threads that call and JIT")->check(CLI::Range(0u, 64u));
  cli.add_option("--duration", o.duration, "seconds to run; 0 = until SIGINT/SIGTERM")->check(CLI::NonNegativeNumber);
  cli.add_option("--rundown", o.rundown, "rundown mode: lockfree, locked, per-method; a comma list takes them in turn");
  cli.add_option("--rundown-trigger", o.triggers, "comma list of session, signal, exit, at:SEC, every:SEC, or none");
  cli.add_option("--seed", o.seed, "random seed");
  cli.add_option("--stats-json", o.stats_json, "write in-process figures here at exit (and on SIGUSR1)");
  cli.add_option("--ready-file", o.ready_file, "write the pid here once methods are registered and JIT threads run");
  cli.add_option("--tier-up-threshold", o.threshold, "calls before tier-up")->check(CLI::Range(1u, 1000000u));
  cli.add_option("--warm", o.warm, "fraction of methods compiled at tier 0 before ready")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--hot", o.hot, "fraction of warm methods also at tier 1 before ready")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--tier0-us", o.tier0_us, "simulated tier-0 compile time (outside the lock)");
  cli.add_option("--tier1-us", o.tier1_us, "simulated tier-1/OSR/ReJIT compile time (outside the lock)");
  cli.add_option("--osr-rate", o.osr_rate, "OSR compiles per call")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--rejit-rate", o.rejit_rate, "ReJIT requests per call")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--unload-rate", o.unload_rate, "collectible module unloads per second")->check(CLI::NonNegativeNumber);
  cli.add_option("--collectible", o.collectible, "fraction of collectible modules")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--rundown-rate", o.rundown_rate,
                 "cap on lock-free rundown events per second (0 = unpaced; README)");
  cli.add_option("--jit-delay", o.jit_delay,
                 "seconds after ready before JIT threads and unloads start (time to attach a tracer)")
      ->check(CLI::NonNegativeNumber);
#ifdef JITPROV_SIM_FAULTS
  cli.add_option("--inject-fault", o.fault, "break every rundown on purpose: duplicate, torn, skip, no-end");
#endif
  cli.add_option("--calls-per-ms", o.calls_per_ms, "calls per JIT thread per millisecond")->check(CLI::Range(1u, 100000u));
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-sim", argc, argv)) return *rc;
  return jitprov::sim::run(o);
}
