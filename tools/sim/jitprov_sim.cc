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
//
// Here the run (rundown engine, signals, the main thread's loop, the end); the options
// in sim_options, the application and its JIT threads in sim_app, the counters and the
// --stats-json figures in sim_stats.
#include <jitprov/jitprov.h>

#include "sim_app.h"
#include "sim_options.h"
#include "sim_stats.h"
#ifdef JITPROV_SIM_FAULTS
#include "capi_internal.h"
#endif

#include "atomic_file.h"
#include "cli.h"
#include "json_text.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
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
  if (const std::string why = jitprov::tools::writeFileAtomically(path, jitprov::tools::jsonText(j, 1) + "\n");
      !why.empty()) {
    std::fprintf(stderr, "jitprov-sim: write --stats-json %s: %s\n", path.c_str(), why.c_str());
    return false;
  }
  return true;
}

// --rundown's comma list into `modes`, and --rundown-trigger checked. 0, or the exit
// status of a usage error (2, said on stderr).
int parseRundownOptions(const Options& opt, std::vector<int>* modes) {
  for (size_t pos = 0; pos <= opt.rundown.size();) {
    const size_t comma = std::min(opt.rundown.find(',', pos), opt.rundown.size());
    const std::string one = opt.rundown.substr(pos, comma - pos);
    int mode = 0;
    if (jitprov_rundown_mode_parse(one.c_str(), &mode) != JITPROV_OK) {
      std::fprintf(stderr, "jitprov-sim: --rundown: '%s' is not one of lockfree, locked, per-method\n", one.c_str());
      return 2;
    }
    modes->push_back(mode);
    pos = comma + 1;
  }
  char why[256];
  if (jitprov_rundown_triggers_check(opt.triggers.c_str(), why, sizeof why) != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-sim: --rundown-trigger: %s\n", why);
    return 2;
  }
  return 0;
}

using EngineOwner = std::unique_ptr<jitprov_rundown, void (*)(jitprov_rundown*)>;

// The rundown engine (--rundown, --rundown-trigger, --rundown-rate; the test build's
// --inject-fault), the signal handlers, and the rundown thread started (with --jit-after,
// once the gate opens: driveUntilStopped). Null on failure, said on stderr, with the
// exit status in *status.
EngineOwner startRundown(App& app, const Options& opt, const std::vector<int>& modes, int* status) {
  jitprov_rundown_config rc = JITPROV_RUNDOWN_CONFIG_INIT;
  rc.modes = modes.data();
  rc.n_modes = modes.size();
  rc.triggers = opt.triggers.c_str();
  rc.max_rate = opt.rundown_rate;
  jitprov_rundown* engine = nullptr;
  *status = 1;
  if (int e = jitprov_rundown_create(app.rt, &rc, &engine)) {
    std::fprintf(stderr, "jitprov-sim: create the rundown engine: %s\n", jitprov_strerror(e));
    return EngineOwner(nullptr, jitprov_rundown_destroy);
  }
  EngineOwner engine_owner(engine, jitprov_rundown_destroy);
#ifdef JITPROV_SIM_FAULTS
  if (opt.fault != "none" && jitprov_internal_inject_fault(engine, opt.fault.c_str()) != JITPROV_OK) {
    std::fprintf(stderr,
                 "jitprov-sim: --inject-fault: '%s' is not one of duplicate, torn, torn-name, skip, no-end, "
                 "begin-twice, end-twice\n",
                 opt.fault.c_str());
    *status = 2;
    return EngineOwner(nullptr, jitprov_rundown_destroy);
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
  if (int e = opt.jit_after.empty() ? jitprov_rundown_start(engine) : JITPROV_OK) {
    std::fprintf(stderr, "jitprov-sim: start the rundown thread: %s\n", jitprov_strerror(e));
    return EngineOwner(nullptr, jitprov_rundown_destroy);
  }
  *status = 0;
  return engine_owner;
}

// Ready: lock statistics restarted, the JIT threads started (unless --jit-delay or
// --jit-after), the ready line on stderr, --ready-file written. False when that write
// failed (said).
bool announceReady(App& app, JitThreads& jit, const Options& opt, double setup_s) {
  // Lock statistics cover the application's run, not the warm start above.
  jitprov_lock_stats_reset(app.rt);
  for (int t = 0; t < kTiers; ++t)
    app.counters.compiled_warm[t].store(app.counters.compiled[t].load(std::memory_order_relaxed),
                                        std::memory_order_relaxed);
  if (opt.jit_delay == 0 && opt.jit_after.empty()) jit.start();

  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(app.rt, &ms);
  std::fprintf(stderr,
               "jitprov-sim: pid %d, %llu methods in %zu modules, %llu native versions, ready in %.1f s; "
               "rundown %s on %s; %s\n",
               int(getpid()), (unsigned long long)opt.methods, app.modules.size(),
               (unsigned long long)ms.native_versions, setup_s, opt.rundown.c_str(), opt.triggers.c_str(),
               jitprov_trace_provider_status());
  if (!opt.ready_file.empty()) {
    if (const std::string why = jitprov::tools::writeFileAtomically(opt.ready_file, std::to_string(getpid()) + "\n");
        !why.empty()) {
      std::fprintf(stderr, "jitprov-sim: write --ready-file %s: %s\n", opt.ready_file.c_str(), why.c_str());
      return false;
    }
  }
  return true;
}

// The main thread's loop until SIGINT/SIGTERM or --duration: --stats-json on SIGUSR1,
// the JIT threads' start after --jit-delay, or once --jit-after's file exists with the
// rundown thread's (so that no periodic rundown takes the lock before a tracer that
// counts acquisitions attached; --duration then counts from there), module unloads at
// --unload-rate. False when the rundown thread could not start (said).
bool driveUntilStopped(App& app, JitThreads& jit, jitprov_rundown* engine, const Options& opt, std::mt19937_64& rng) {
  using Clock = std::chrono::steady_clock;
  const bool gated = !opt.jit_after.empty();
  auto start = Clock::now();
  // The JIT threads' start: known now, or once the gate opens (until then, max()).
  auto jit_start = gated ? Clock::time_point::max() : start + std::chrono::microseconds(int64_t(opt.jit_delay * 1e6));
  auto next_unload = jit_start;
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto now = Clock::now();
    if (jit_start == Clock::time_point::max() && access(opt.jit_after.c_str(), F_OK) == 0) {
      start = jit_start = next_unload = now;
      if (int e = jitprov_rundown_start(engine)) {
        std::fprintf(stderr, "jitprov-sim: start the rundown thread: %s\n", jitprov_strerror(e));
        return false;
      }
    }
    const bool open = jit_start != Clock::time_point::max();
    if (open && opt.duration > 0 && std::chrono::duration<double>(now - start).count() >= opt.duration) break;
    if (jit.threads.empty() && opt.jit_threads > 0 && now >= jit_start) jit.start();
    if (g_dump) {
      g_dump = 0;
      writeStats(opt.stats_json, app, engine, opt);
    }
    if (now < jit_start) continue;  // the application is idle until then
    if (opt.unload_rate > 0 && now >= next_unload) {
      if (next_unload != jit_start) app.unloadOne(rng);
      next_unload = now + std::chrono::microseconds(int64_t(1e6 / opt.unload_rate));
    }
  }
  return true;
}

// The end: JIT threads joined, the rundown engine stopped (exit rundown, if asked),
// --stats-json and the summary line written. The exit status.
int finish(App& app, JitThreads& jit, jitprov_rundown* engine, const Options& opt) {
  jit.stop.store(true);
  for (auto& t : jit.threads) t.join();
  jitprov_rundown_stop(engine);  // exit rundown, if asked
  g_engine = nullptr;
  const int rc_stats = writeStats(opt.stats_json, app, engine, opt) ? 0 : 1;
  const JitSummary js = app.counters.summary();
  std::fprintf(stderr, "jitprov-sim: %llu calls, %llu compiles, %llu retired, %llu rundowns, %llu API errors\n",
               (unsigned long long)js.calls, (unsigned long long)js.compiles,
               (unsigned long long)app.counters.retired.load(), (unsigned long long)jitprov_rundown_completed(engine),
               (unsigned long long)js.errors);
  return js.errors == 0 ? rc_stats : 1;
}

int run(const Options& opt) {
  std::vector<int> modes;
  if (int status = parseRundownOptions(opt, &modes)) return status;
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
  if (!app->populate(rng)) return 1;
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  int status = 0;
  const EngineOwner engine = startRundown(*app, opt, modes, &status);
  if (engine == nullptr) return status;
  JitThreads jit{*app};
  if (!announceReady(*app, jit, opt, setup_s)) {
    // The JIT threads started: stop and join them before the exit status (a joinable
    // std::thread's destructor would end the process with std::terminate).
    finish(*app, jit, engine.get(), opt);
    return 1;
  }
  const bool drove = driveUntilStopped(*app, jit, engine.get(), opt, rng);
  const int rc = finish(*app, jit, engine.get(), opt);
  return drove ? rc : 1;
}

}  // namespace
}  // namespace jitprov::sim

int main(int argc, char** argv) {
  jitprov::sim::Options o;
  CLI::App cli{"jitprov-sim: a simulated JIT runtime (registry, JIT threads, rundown thread) driving libjitprov"};
  jitprov::sim::addOptions(cli, o);
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-sim", argc, argv)) return *rc;
  return jitprov::sim::run(o);
}
