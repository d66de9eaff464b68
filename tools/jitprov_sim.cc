// SPDX-License-Identifier: MIT
// jitprov-sim: a simulated JIT runtime driving libjitprov like a large application.
//
// Methods spread over modules with plausible namespaces, names and signatures; calls
// drawn from a skewed (Zipf-like, s = 1) distribution drive first-call compiles at tier
// 0 and tier-up at a call-count threshold; OSR, ReJIT and module unload happen at
// configurable rates; compilation cost is simulated outside the lock. A rundown thread
// answers the triggers of --rundown-trigger.
//
// It is a host of the public C API (jitprov/jitprov.h, libjitprov.so.1) and nothing
// else, so every test built on it exercises that API.
//
// Signals: SIGINT/SIGTERM end it cleanly (exit rundown if asked, stats written);
// SIGUSR2 requests a rundown (trigger signal); SIGUSR1 writes --stats-json now.
#include <jitprov/jitprov.h>

#include "sim_stats.h"
#ifdef JITPROV_SIM_FAULTS
#include "capi_internal.h"
#endif

#include "atomic_file.h"
#include "cli.h"

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace jitprov::sim {
namespace {

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_dump = 0;
jitprov_rundown* g_engine = nullptr;

void onStop(int) { g_stop = 1; }
void onDump(int) { g_dump = 1; }
void onRundown(int) {
  if (g_engine != nullptr) jitprov_rundown_request_from_signal(g_engine);
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
  double warm = 1.0;       // fraction of methods compiled at tier 0 before ready
  double hot = 0.1;        // fraction of those also at tier 1 before ready
  uint32_t tier0_us = 40;  // simulated compile cost
  uint32_t tier1_us = 300;
  double osr_rate = 0.0002;  // per call
  double rejit_rate = 0.00002;
  double unload_rate = 0.5;     // collectible module unloads per second
  double collectible = 0.2;     // fraction of modules that are collectible
  uint32_t calls_per_ms = 200;  // per JIT thread
  double jit_delay = 0;         // seconds between ready and the JIT threads' start
  std::string fault = "none";   // test build only: RundownFault
  // Rundown events per second: what lttng's default non-blocking channel drains here
  // (docs/tracing.md); 0 = unpaced, for the dedicated blocking channel.
  uint64_t rundown_rate = 250000;  // what lttng's default channel drains with the other core busy (docs/tracing.md)
  // After a tier-up replaced a method's code, retire the replaced version with this
  // probability (HotSpot flushes replaced code one version at a time).
  double retire_replaced = 0.5;
  // In-process lock statistics (--stats-json's "lock"); off, the runtime times an
  // acquisition only while a tracer is attached to jitprov:lock_released.
  bool lock_stats = true;
};

const char* const kNamespaces[] = {"System.Collections.Generic",
                                   "System.Linq",
                                   "System.Text.Json",
                                   "System.Net.Http",
                                   "Microsoft.Extensions.Logging",
                                   "Microsoft.AspNetCore.Routing",
                                   "Contoso.Orders.Services",
                                   "Contoso.Orders.Domain",
                                   "Contoso.Billing.Invoices",
                                   "Contoso.Shipping.Tracking",
                                   "Fabrikam.Inventory.Data",
                                   "Fabrikam.Catalog.Search",
                                   "Newtonsoft.Json.Linq",
                                   "Npgsql.Internal"};
const char* const kTypes[] = {
    "OrderService", "InvoiceRepository", "Dictionary`2",    "List`1",          "JsonSerializer",
    "RouteMatcher", "HttpClientHandler", "ShipmentTracker", "PriceCalculator", "StockLevelCache",
    "QueryBuilder", "ConnectionPool",    "Logger`1",        "JToken"};
const char* const kVerbs[] = {"Get",     "Set",      "Try",  "Process", "Handle", "Validate", "Serialize", "Parse",
                              "Compute", "Dispatch", "Load", "Find",    "Update", "Build",    "Resolve"};
const char* const kNouns[] = {"Order", "Item",       "Value", "Route", "Token",   "Price",    "Shipment", "Customer",
                              "Batch", "Connection", "Entry", "Key",   "Request", "Response", "Snapshot"};
// "" too: a host may register code without a signature (stubs, dynamic methods), and a
// reader must tell an empty string from the one before it (babeltrace2 2.0.4 cannot:
// tests/integration/bt2read.py).
const char* const kSigs[] = {"",
                             "void ()",
                             "int32 (string)",
                             "bool (int64, int32)",
                             "string (object)",
                             "System.Threading.Tasks.Task`1<!0> (System.Threading.CancellationToken)",
                             "void (!0, class System.Collections.Generic.IEqualityComparer`1<!0>)",
                             "valuetype System.Span`1<uint8> (int32, int32)",
                             "float64 (float64[], int32)"};

template <class T, size_t N>
const T& pick(const T (&a)[N], uint64_t r) {
  return a[r % N];
}

// n zero-valued atomics whose memory becomes resident only where written: calloc maps a
// large block as fresh zero pages without writing them (std::vector would write every
// element), so the compile state of a method never compiled costs the process no RSS.
template <class T>
class ZeroedArray {
  static_assert(T::is_always_lock_free && sizeof(T) == sizeof(typename T::value_type),
                "all-zero bytes must be a valid T: a lock-free atomic integer");

 public:
  explicit ZeroedArray(size_t n) : p_(static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)))) {
    if (p_ == nullptr) throw std::bad_alloc();
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  ~ZeroedArray() { std::free(p_); }
  T& operator[](size_t i) noexcept { return p_[i]; }

 private:
  T* p_;
};

// The application: methods in module-contiguous slots, so an unloaded module's slots
// are refilled by its replacement's methods.
struct App {
  jitprov_runtime* rt = nullptr;
  Options opt;
  // slot -> current method id. Written by the main thread (registration, and the
  // replacement of an unloaded module) with release; JIT threads load it with acquire.
  // A JIT thread may still use the old id for a moment: the runtime then answers
  // kMethodUnloaded, counted as a lost race.
  std::vector<std::atomic<uint64_t>> slot_method;
  // slot -> a JIT thread is compiling it (one compile per method at a time, as a
  // runtime's per-method JIT lock would). CAS acquire / store release: a try-lock.
  ZeroedArray<std::atomic<uint8_t>> compiling;
  // slot -> the version last activated for it (0 = none). Only the thread that holds
  // the slot's `compiling` try-lock reads or writes it (relaxed).
  ZeroedArray<std::atomic<uint64_t>> active_version;
  std::vector<uint32_t> zipf_perm;  // rank -> slot
  struct ModuleSlots {
    uint64_t id;
    uint64_t begin, end;
    bool collectible;
    uint32_t generation;
  };
  std::vector<ModuleSlots> modules;  // main thread only
  JitCounters counters;

  explicit App(const Options& o) : opt(o), slot_method(o.methods), compiling(o.methods), active_version(o.methods) {}
  ~App() { jitprov_runtime_destroy(rt); }

  int create() {
    jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
    cfg.tier_up_threshold = opt.threshold;
    cfg.lock_stats = opt.lock_stats ? 1 : 0;
    return jitprov_runtime_create(&cfg, &rt);
  }

  bool registerModuleSlots(size_t index, uint64_t begin, uint64_t end, bool collectible, uint32_t gen,
                           std::mt19937_64& rng) {
    const std::string path = std::string(collectible ? "/app/plugins/" : "/app/bin/") + pick(kNamespaces, index) +
                             (collectible ? ".Plugin" : "") + "." + std::to_string(index) +
                             (gen ? ".g" + std::to_string(gen) : "") + ".dll";
    uint64_t mod = 0;
    if (int e = jitprov_module_register(rt, path.c_str(), collectible, &mod)) {
      std::fprintf(stderr, "jitprov-sim: register module %s: %s\n", path.c_str(), jitprov_strerror(e));
      return false;
    }
    for (uint64_t s = begin; s < end; ++s) {
      const uint64_t r = rng();
      const std::string ns = std::string(pick(kNamespaces, index * 7 + (r & 3))) + "." + pick(kTypes, r >> 8);
      const std::string name = std::string(pick(kVerbs, r >> 16)) + pick(kNouns, r >> 24) +
                               ((r >> 32) % 3 == 0 ? "Async" : "") + "_" + std::to_string(s);
      jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
      d.token = uint32_t(0x06000001 + (s - begin));
      d.flags = uint32_t(0x0006 | ((r >> 40) & 0x90));
      d.name_space = ns.c_str();
      d.name = name.c_str();
      d.signature = pick(kSigs, r >> 48);
      uint64_t m = 0;
      if (int e = jitprov_method_register(rt, mod, &d, &m)) {
        std::fprintf(stderr, "jitprov-sim: register method %s: %s\n", name.c_str(), jitprov_strerror(e));
        return false;
      }
      slot_method[s].store(m, std::memory_order_release);
      // (a read of a page never written maps the zero page: no RSS)
      if (active_version[s].load(std::memory_order_relaxed) != 0) active_version[s].store(0, std::memory_order_relaxed);
    }
    modules.push_back({mod, begin, end, collectible, gen});
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
  void compile(uint64_t slot, int tier, uint32_t cost_us, std::mt19937_64& rng, bool activate = true) {
    uint8_t expected = 0;
    if (!compiling[slot].compare_exchange_strong(expected, 1, std::memory_order_acquire)) return;
    const uint64_t m = slot_method[slot].load(std::memory_order_acquire);
    uint64_t v = 0;
    int e = jitprov_jit_begin(rt, m, tier, tier == JITPROV_TIER1_OSR ? uint32_t(rng() % 400 + 8) : 0, &v);
    if (e == JITPROV_OK) {
      spin(cost_us);
      e = jitprov_jit_publish(rt, v, uint32_t(64 + rng() % (tier == JITPROV_TIER0 ? 4000 : 2000)), nullptr);
      if (e == JITPROV_OK) {
        counters.compiled[tier].fetch_add(1, std::memory_order_relaxed);
        if (activate) {
          e = jitprov_code_activate(rt, v);
          if (e == JITPROV_OK) {
            // The replaced code is not entered any more: retire it now and then.
            const uint64_t old = active_version[slot].exchange(v, std::memory_order_relaxed);
            if (old != 0 && double(rng() % 1000) < opt.retire_replaced * 1000) {
              if (int re = jitprov_code_retire(rt, old); re == JITPROV_OK)
                counters.retired.fetch_add(1, std::memory_order_relaxed);
              else
                counters.note(re);
            }
          } else {
            counters.note(e);
          }
        }
      } else {
        counters.note(e);
      }
    } else {
      counters.note(e);
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
        const uint64_t m = slot_method[slot].load(std::memory_order_acquire);
        counters.calls.fetch_add(1, std::memory_order_relaxed);
        if (jitprov_entry_point(rt, m) == 0) {
          // Not compiled (new, or its IL was ReJIT-ed): the prestub compiles it.
          compile(slot, JITPROV_TIER0, opt.tier0_us, rng);
          continue;
        }
        if (jitprov_call_record(rt, m)) compile(slot, JITPROV_TIER1, opt.tier1_us, rng);
        const double x = u01(rng);
        if (x < opt.osr_rate) {
          compile(slot, JITPROV_TIER1_OSR, opt.tier1_us, rng, false);
        } else if (x < opt.osr_rate + opt.rejit_rate) {
          if (int e = jitprov_rejit_request(rt, m, nullptr); e == JITPROV_OK) {
            counters.rejits.fetch_add(1, std::memory_order_relaxed);
            compile(slot, rng() % 2 ? JITPROV_TIER_INSTRUMENTED : JITPROV_TIER_OPTIMIZED, opt.tier1_us, rng);
          } else {
            counters.note(e);
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
    if (int e = jitprov_module_unload(rt, ms.id)) {
      counters.note(e);
      return;
    }
    counters.unloads.fetch_add(1, std::memory_order_relaxed);
    modules.erase(modules.begin() + long(i));
    registerModuleSlots(i, ms.begin, ms.end, true, ms.generation + 1, rng);
  }
};

std::vector<jitprov_rundown_result> results(const jitprov_rundown* engine) {
  std::vector<jitprov_rundown_result> r(jitprov_rundown_results(engine, nullptr, 0, 0));
  r.resize(std::min(r.size(), jitprov_rundown_results(engine, r.data(), r.size(), sizeof(jitprov_rundown_result))));
  return r;
}

bool writeStats(const std::string& path, const App& app, const jitprov_rundown* engine, const Options& opt) {
  if (path.empty()) return true;
  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  auto ls = std::make_unique<jitprov_lock_stats>();
  ls->sz = sizeof *ls;
  if (jitprov_memory_stats_get(app.rt, &ms) != JITPROV_OK || jitprov_lock_stats_get(app.rt, ls.get()) != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-sim: read the runtime's statistics: failed\n");
    return false;
  }
  nlohmann::json j = {
      {"pid", getpid()},
      {"config",
       {{"methods", opt.methods},
        {"modules", opt.modules},
        {"jit_threads", opt.jit_threads},
        {"rundown", opt.rundown},
        {"rundown_trigger", opt.triggers},
        {"seed", opt.seed}}},
      {"provider", jitprov_trace_provider_status()},
      {"memory",
       {{"live_methods", ms.live_methods},
        {"native_versions", ms.native_versions},
        {"method_bytes", ms.method_bytes},
        {"version_bytes", ms.version_bytes},
        {"table_bytes", ms.table_bytes},
        {"retired", ms.retired}}},
      {"jit", jitToJson(app.counters)},
      {"lock", lockStatsToJson(*ls)},
      {"rundowns", rundownsToJson(results(engine))},
  };
  if (const std::string why = jitprov::tools::writeFileAtomically(path, j.dump(1) + "\n"); !why.empty()) {
    std::fprintf(stderr, "jitprov-sim: write --stats-json %s: %s\n", path.c_str(), why.c_str());
    return false;
  }
  return true;
}

int run(const Options& opt) {
  std::vector<int> modes;
  for (size_t pos = 0; pos <= opt.rundown.size();) {
    const size_t comma = std::min(opt.rundown.find(',', pos), opt.rundown.size());
    const std::string one = opt.rundown.substr(pos, comma - pos);
    int mode = 0;
    if (jitprov_rundown_mode_parse(one.c_str(), &mode) != JITPROV_OK) {
      std::fprintf(stderr, "jitprov-sim: --rundown: '%s' is not one of lockfree, locked, per-method\n", one.c_str());
      return 2;
    }
    modes.push_back(mode);
    pos = comma + 1;
  }
  char why[256];
  if (jitprov_rundown_triggers_check(opt.triggers.c_str(), why, sizeof why) != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-sim: --rundown-trigger: %s\n", why);
    return 2;
  }
  // Rundown events go to a channel with --blocking-timeout (docs/tracing.md): let lttng-ust
  // block there. Only the rundown thread emits into that channel, so only it can block.
  // Set before the runtime loads the provider (and with it lttng-ust).
  setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);

  auto app = std::make_unique<App>(opt);
  // Creating the runtime loads the tracing provider, so a session already tracing sees
  // every method_load (as a host runtime would, at start-up).
  if (int e = app->create()) {
    std::fprintf(stderr, "jitprov-sim: create the runtime: %s\n", jitprov_strerror(e));
    return 1;
  }
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
    app->compile(slot, JITPROV_TIER0, 0, rng);
    if (double(rank) < opt.hot * double(warm)) app->compile(slot, JITPROV_TIER1, 0, rng);
  }
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  jitprov_rundown_config rc = JITPROV_RUNDOWN_CONFIG_INIT;
  rc.modes = modes.data();
  rc.n_modes = modes.size();
  rc.triggers = opt.triggers.c_str();
  rc.max_rate = opt.rundown_rate;
  jitprov_rundown* engine = nullptr;
  if (int e = jitprov_rundown_create(app->rt, &rc, &engine)) {
    std::fprintf(stderr, "jitprov-sim: create the rundown engine: %s\n", jitprov_strerror(e));
    return 1;
  }
  std::unique_ptr<jitprov_rundown, void (*)(jitprov_rundown*)> engine_owner(engine, jitprov_rundown_destroy);
#ifdef JITPROV_SIM_FAULTS
  if (opt.fault != "none" && jitprov_internal_inject_fault(engine, opt.fault.c_str()) != JITPROV_OK) {
    std::fprintf(stderr,
                 "jitprov-sim: --inject-fault: '%s' is not one of duplicate, torn, torn-name, skip, no-end, "
                 "begin-twice\n",
                 opt.fault.c_str());
    return 2;
  }
#endif
  g_engine = engine;
  struct sigaction sa {};
  sa.sa_handler = onStop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = onDump;
  sigaction(SIGUSR1, &sa, nullptr);
  sa.sa_handler = onRundown;
  sigaction(SIGUSR2, &sa, nullptr);
  if (int e = jitprov_rundown_start(engine)) {
    std::fprintf(stderr, "jitprov-sim: start the rundown thread: %s\n", jitprov_strerror(e));
    return 1;
  }

  // Lock statistics cover the application's run, not the warm start above.
  jitprov_lock_stats_reset(app->rt);
  for (int t = 0; t < kTiers; ++t)
    app->counters.compiled_warm[t].store(app->counters.compiled[t].load(std::memory_order_relaxed),
                                         std::memory_order_relaxed);
  std::atomic<bool> stop{false};
  std::vector<std::thread> jit;
  auto start_jit = [&] {
    for (uint32_t i = 0; i < opt.jit_threads; ++i) jit.emplace_back([&, i] { app->jitThread(i, stop); });
  };
  if (opt.jit_delay == 0) start_jit();

  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(app->rt, &ms);
  std::fprintf(stderr,
               "jitprov-sim: pid %d, %llu methods in %zu modules, %llu native versions, ready in %.1f s; "
               "rundown %s on %s; %s\n",
               int(getpid()), (unsigned long long)opt.methods, app->modules.size(),
               (unsigned long long)ms.native_versions, setup_s, opt.rundown.c_str(), opt.triggers.c_str(),
               jitprov_trace_provider_status());
  if (!opt.ready_file.empty()) {
    if (const std::string why = jitprov::tools::writeFileAtomically(opt.ready_file, std::to_string(getpid()) + "\n");
        !why.empty()) {
      std::fprintf(stderr, "jitprov-sim: write --ready-file %s: %s\n", opt.ready_file.c_str(), why.c_str());
      return 1;
    }
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
  jitprov_rundown_stop(engine);  // exit rundown, if asked
  g_engine = nullptr;
  const int rc_stats = writeStats(opt.stats_json, *app, engine, opt) ? 0 : 1;
  const JitSummary js = app->counters.summary();
  std::fprintf(stderr, "jitprov-sim: %llu calls, %llu compiles, %llu retired, %llu rundowns, %llu API errors\n",
               (unsigned long long)js.calls, (unsigned long long)js.compiles,
               (unsigned long long)app->counters.retired.load(), (unsigned long long)jitprov_rundown_completed(engine),
               (unsigned long long)js.errors);
  return js.errors == 0 ? rc_stats : 1;
}

}  // namespace
}  // namespace jitprov::sim

int main(int argc, char** argv) {
  jitprov::sim::Options o;
  CLI::App cli{"jitprov-sim: a simulated JIT runtime (registry, JIT threads, rundown thread) driving libjitprov"};
  cli.add_option("--methods", o.methods, "methods to register")->check(CLI::Range(uint64_t{1}, uint64_t{10000000}));
  cli.add_option("--modules", o.modules, "modules they spread over")->check(CLI::Range(1u, 100000u));
  cli.add_option("--jit-threads", o.jit_threads, "application threads that call and JIT")->check(CLI::Range(0u, 64u));
  cli.add_option("--duration", o.duration, "seconds to run; 0 = until SIGINT/SIGTERM")
      ->check(jitprov::tools::finiteIn(1e9));
  cli.add_option("--rundown", o.rundown, "rundown mode: lockfree, locked, per-method; a comma list takes them in turn");
  cli.add_option("--rundown-trigger", o.triggers, "comma list of session, signal, exit, at:SEC, every:SEC, or none");
  cli.add_option("--seed", o.seed, "random seed")->check(jitprov::tools::uint64Whole());
  // Refused at start-up unless a regular file or nothing is there (never a device or a
  // symlink), in an existing, writable directory (atomic_file.h).
  const CLI::Validator output([](std::string& p) { return jitprov::tools::checkOutputPath(p); }, "FILE");
  cli.add_option("--stats-json", o.stats_json, "write in-process figures here at exit (and on SIGUSR1)")->check(output);
  cli.add_option("--ready-file", o.ready_file, "write the pid here once methods are registered and JIT threads run")
      ->check(output);
  cli.add_option("--tier-up-threshold", o.threshold, "calls before tier-up")->check(CLI::Range(1u, 1000000u));
  cli.add_option("--warm", o.warm, "fraction of methods compiled at tier 0 before ready")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--hot", o.hot, "fraction of warm methods also at tier 1 before ready")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--tier0-us", o.tier0_us, "simulated tier-0 compile time (outside the lock)")
      ->check(CLI::Range(0u, 1000000u));
  cli.add_option("--tier1-us", o.tier1_us, "simulated tier-1/OSR/ReJIT compile time (outside the lock)")
      ->check(CLI::Range(0u, 1000000u));
  cli.add_option("--osr-rate", o.osr_rate, "OSR compiles per call")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--rejit-rate", o.rejit_rate, "ReJIT requests per call")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--unload-rate", o.unload_rate, "collectible module unloads per second")
      ->check(jitprov::tools::finiteIn(1e6));
  cli.add_option("--collectible", o.collectible, "fraction of collectible modules")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--retire-replaced", o.retire_replaced,
                 "probability that code replaced by a tier-up or ReJIT is retired (per-version retirement)")
      ->check(CLI::Range(0.0, 1.0));
  cli.add_flag_function(
      "--no-lock-stats", [&o](int64_t) { o.lock_stats = false; },
      "no in-process lock statistics (the runtime then times lock acquisitions only while a tracer is "
      "attached to jitprov:lock_released)");
  cli.add_option("--rundown-rate", o.rundown_rate,
                 "cap on lock-free rundown events per second (0 = unpaced; docs/tracing.md)")
      ->check(jitprov::tools::uint64Whole());
  cli.add_option("--jit-delay", o.jit_delay,
                 "seconds after ready before JIT threads and unloads start (time to attach a tracer)")
      ->check(jitprov::tools::finiteIn(1e9));
#ifdef JITPROV_SIM_FAULTS
  cli.add_option("--inject-fault", o.fault,
                 "break every rundown on purpose: duplicate, torn, torn-name, skip, no-end, begin-twice");
#endif
  cli.add_option("--calls-per-ms", o.calls_per_ms, "calls per JIT thread per millisecond")
      ->check(CLI::Range(1u, 100000u));
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-sim", argc, argv)) return *rc;
  return jitprov::sim::run(o);
}
