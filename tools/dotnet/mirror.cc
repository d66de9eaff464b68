// SPDX-License-Identifier: MIT
#include "mirror.h"

#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "atomic_file.h"
#include "clr_abi.h"

namespace jitprov::dotnet {
namespace {

uint32_t tierOf(uint32_t clr_tier) {
  switch (clr_tier) {
    case kClrTierTier1:
      return JITPROV_TIER1;
    case kClrTierTier1Osr:
      return JITPROV_TIER1_OSR;
    case kClrTierInstrumented:
    case kClrTierInstrumentedOptimized:
      return JITPROV_TIER_INSTRUMENTED;
    case kClrTierOptimized:
      return JITPROV_TIER_OPTIMIZED;
    default:  // quick JIT (tier 0), minopts, unknown
      return JITPROV_TIER0;
  }
}

uint64_t v(const std::atomic<uint64_t>& x) { return x.load(std::memory_order_relaxed); }

}  // namespace

std::string Mirror::start(const hostagent::Options& opt, std::function<ModuleInfo(uint64_t)> module_info,
                          std::function<std::vector<uint64_t>(uint64_t)> method_modules) {
  opt_ = opt;
  module_info_ = std::move(module_info);
  method_modules_ = std::move(method_modules);
  own_.on = !opt_.stats.empty();
  const hostagent::OwnCpu::Span cpu(own_, true);
  hostagent::setLttngEnvironment();  // before the runtime loads lttng-ust
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.code_mode = JITPROV_CODE_HOST;
  // No in-process lock histograms: nothing here reads them (jitprov-lockwait times the
  // lock through its probes), and they cost clock reads and shared writes per acquisition.
  cfg.lock_stats = 0;
  int e = jitprov_runtime_create(&cfg, &rt_);
  if (e != JITPROV_OK) return std::string("create the jitprov runtime: ") + jitprov_strerror(e);
  if (std::string why = hostagent::openJitdump(rt_, opt_); !why.empty()) return "jitdump: " + why;
  // jitprov's rundown thread takes this thread's name when it is created: its own in
  // `top -H`, perf's --comm and the stats' own_cpu.
  {
    const hostagent::RundownThreadName named;
    e = hostagent::startRundowns(rt_, opt_, &perfmap_, &rd_, &Mirror::prepareRundown, this);
  }
  if (e != JITPROV_OK) return std::string("start the rundown engine: ") + jitprov_strerror(e);
  return "";
}

void CallbackHist::add(uint64_t ns) noexcept {
  count.fetch_add(1, std::memory_order_relaxed);
  total_ns.fetch_add(ns, std::memory_order_relaxed);
  buckets[log2Bucket(ns)].fetch_add(1, std::memory_order_relaxed);
  uint64_t m = max_ns.load(std::memory_order_relaxed);
  while (ns > m && !max_ns.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
  }
}

hostagent::Hist CallbackHist::snapshot() const noexcept {
  hostagent::Hist h;
  h.count = count.load(std::memory_order_relaxed);
  h.total_ns = total_ns.load(std::memory_order_relaxed);
  h.max_ns = max_ns.load(std::memory_order_relaxed);
  for (int i = 0; i < kHistBuckets; ++i) h.buckets[i] = buckets[i].load(std::memory_order_relaxed);
  return h;
}

void Mirror::error(const std::string& what, int e) {
  c_.errors.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard g(error_mu_);
  if (first_error_.empty()) first_error_ = what + ": " + jitprov_strerror(e);
}

Mirror::ModuleRef Mirror::moduleOf(uint64_t clr_module) {
  std::lock_guard g(modules_mu_);
  if (auto it = modules_.find(clr_module); it != modules_.end()) return it->second;
  ModuleInfo info = module_info_ ? module_info_(clr_module) : ModuleInfo{};
  if (!info.known || info.path.empty()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "module 0x%" PRIx64, clr_module);
    info.path = buf;
  }
  uint64_t id = 0;
  const int e = jitprov_module_register(rt_, info.path.c_str(), info.collectible ? 1 : 0, &id);
  if (e != JITPROV_OK) {
    error("register module " + info.path, e);
    return {};
  }
  c_.modules.fetch_add(1, std::memory_order_relaxed);
  modules_.emplace(clr_module, ModuleRef{id, info.collectible});
  return {id, info.collectible};
}

// The module a method's first body is filed under. The event names the module of the
// method's own type: for an exact instantiation over a collectible type
// (List<PluginStruct>.Add, a Release-built plugin's async state machine box), that is
// System.Private.CoreLib, but CoreCLR allocates the method, and its code, in the plugin's
// context and frees them with it, saying nothing more (no unload event without the
// EndEnumeration keyword). Filed under the plugin's module, the method goes with it.
// Only for an exact generic instantiation seen for the first time in a module that is
// not collectible: a lookup, and CoreCLR's answer then. *known: the method when the
// lookup found it (filed already), else 0.
Mirror::ModuleRef Mirror::ownerOf(const MethodEvent& ev, ModuleRef module, uint64_t* known) {
  *known = 0;
  if ((ev.flags & (kMethodGeneric | kMethodSharedGeneric)) != kMethodGeneric || !method_modules_) return module;
  if (jitprov_method_find(rt_, ev.method_id, known) == JITPROV_OK) return module;
  *known = 0;
  for (const uint64_t m : method_modules_(ev.method_id)) {
    if (m == ev.module_id || m == 0) continue;
    const ModuleRef o = moduleOf(m);
    if (o.id != 0 && o.collectible) {
      c_.collectible_generics.fetch_add(1, std::memory_order_relaxed);
      return o;
    }
  }
  return module;
}

uint64_t Mirror::methodOf(const MethodEvent& ev, uint64_t module) {
  // jitprov's index of host keys is the client's: at most one lookup per load, and a
  // collectible module's unload in jitprov forgets its MethodIDs (CoreCLR may hand them
  // out again) without a list of its own.
  // A method's first body (CoreCLR's native code version 0; also every load of an
  // event without the field) is, but for a replay, the first sight of the method: it
  // goes straight to its registration, which finds the method when it is known after
  // all. Only a later body looks the method up first: four loads in five of the generated
  // churn are a method's first body, for which the lookup would only miss.
  uint64_t id = 0;
  if (ev.native_version != 0 && jitprov_method_find(rt_, ev.method_id, &id) == JITPROV_OK) return id;
  // The names are converted now, once, into one buffer (on the stack unless they are
  // long).
  const size_t need = 3 * (ev.name_space.units + ev.name.units + ev.signature.units) + 3;
  char local[1536];
  std::string heap;
  char* buf = local;
  if (need > sizeof local) {
    heap.resize(need);
    buf = heap.data();
  }
  jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
  d.host_key = ev.method_id;
  d.token = ev.token;
  d.flags = ev.flags;
  char* p = buf;
  d.name_space = p;
  p = ev.name_space.utf8(p);
  d.name = p;
  p = ev.name.utf8(p);
  d.signature = p;
  (void)ev.signature.utf8(p);
  d.options = JITPROV_METHOD_SANITIZE_NAMES;
  const int e = jitprov_method_register(rt_, module, &d, &id);
  if (e == JITPROV_OK) {
    c_.methods.fetch_add(1, std::memory_order_relaxed);
    return id;
  }
  if (e == JITPROV_E_EXISTS) return id;  // a replay, or another thread registered it meanwhile
  error(std::string("register method ") + d.name_space + "::" + d.name, e);
  return 0;
}

void Mirror::methodLoad(const MethodEvent& ev, uint64_t t0) {
  const Timed timed{load_cb_, t0};
  if ((ev.flags & kMethodColdPart) != 0) {
    c_.cold_parts.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if ((ev.flags & kMethodJitted) == 0) {
    c_.not_jitted.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint32_t clr_tier = (ev.flags >> kTierShift) & kTierMask;
  c_.by_clr_tier[clr_tier].fetch_add(1, std::memory_order_relaxed);
  ModuleRef module = moduleOf(ev.module_id);
  uint64_t method = 0;  // found by ownerOf's lookup: not looked up again
  if (module.id != 0 && !module.collectible) module = ownerOf(ev, module, &method);
  if (method == 0 && module.id != 0) method = methodOf(ev, module.id);
  if (method == 0) return;
  jitprov_code_desc cd = JITPROV_CODE_DESC_INIT;
  cd.code_start = ev.start;
  cd.code_size = ev.size;
  cd.tier = tierOf(clr_tier);
  cd.host_tier = clr_tier;
  // CoreCLR's own id of this body's native code version (its "ReJITID" event field
  // carries the NativeCodeVersionId: 0 for a method's first body).
  cd.host_version = static_cast<uint32_t>(ev.native_version);
  // CoreCLR makes each new non-OSR body the method's entry point once published: both
  // in one acquisition of jitprov's lock.
  if (cd.tier != JITPROV_TIER1_OSR) {
    cd.flags = JITPROV_CODE_ACTIVATE;
    // An attach's catch-up publishes bodies older than this one, read before it: told
    // before this publication, it activates none of them (publishCaught).
    if (catchup_.load(std::memory_order_acquire)) {
      const std::lock_guard g(catchup_mu_);
      activated_.insert(ev.method_id);
    }
  }
  uint64_t version = 0;
  const int e = jitprov_code_publish(rt_, method, &cd, &version);  // no mirror lock held
  if (e == JITPROV_E_RANGE_OVERLAP || e == JITPROV_E_ZERO_CODE_SIZE) {
    c_.refused.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (e != JITPROV_OK) return error("publish " + ev.name_space.utf8() + "::" + ev.name.utf8(), e);
  // Counted with replays (the same body again: jitprov returns its version, emits
  // nothing); jitprov counts those, and the stats subtract them.
  c_.loads.fetch_add(1, std::memory_order_relaxed);
}

// CoreCLR's shutdown walk (EEShutDownHelper: ETW::EnumerationLog::ProcessShutdown, before
// the profiler's Shutdown and so before the exit rundown) reports every module still
// loaded as unloaded (the Loader keyword: the client's), and with another session's
// EndEnumeration keyword every JIT'd body, module by module: none of it dies before the
// process does. A module that is not collectible is unloaded there only, and so is a
// method of one that is not an instantiation filed elsewhere (ownerOf): from the first
// such unload on, unloads are counted (shutdown_unloads), not applied, and the exit
// rundown holds what was live at exit. `method`: a method unload's (0: a module's).
bool Mirror::shutdownWalk(uint64_t clr_module, uint32_t method_flags, bool method) {
  if (!shutting_down_.load(std::memory_order_acquire)) {
    if (method && (method_flags & (kMethodDynamic | kMethodGeneric)) != 0) return false;
    bool lasting = false;
    {
      std::lock_guard g(modules_mu_);
      if (auto it = modules_.find(clr_module); it != modules_.end()) {
        lasting = !it->second.collectible;
      } else if (!method && module_info_) {  // no code of it mirrored: CoreCLR says
        const ModuleInfo info = module_info_(clr_module);
        lasting = info.known && !info.collectible;
      }
    }
    if (!lasting) return false;
    shutting_down_.store(true, std::memory_order_release);
  }
  c_.shutdown_unloads.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Mirror::methodUnload(const MethodEvent& ev, uint64_t t0) {
  const Timed timed{unload_cb_, t0};
  if (shutdownWalk(ev.module_id, ev.flags, true)) return;
  std::unique_lock<std::mutex> catchup;
  if (catchup_.load(std::memory_order_acquire)) {  // an attach's catch-up may run
    catchup = holdUnloads();
    if ((ev.flags & kMethodDynamic) == 0) {  // CoreCLR's enumeration never lists a dynamic method
      dead_code_.insert(ev.start);
      dead_functions_.insert(ev.method_id);
      unloads_seen_.fetch_add(1, std::memory_order_release);
    }
  }
  // A dynamic method (LCG) is destroyed whole, and CoreCLR hands its MethodID out again
  // to the next dynamic method it makes: the jitprov method goes with its code, so that
  // the MethodID's next owner is registered under its own name (named by the old one, a
  // new body was published as the destroyed method's: the dotnet-jitdump flake, issue 40).
  if ((ev.flags & kMethodDynamic) != 0) {
    uint64_t id = 0;
    if (jitprov_method_find(rt_, ev.method_id, &id) == JITPROV_OK) {
      const int e = jitprov_method_unload(rt_, id);
      if (e != JITPROV_OK) return error("unload dynamic method", e);
      c_.unloads.fetch_add(1, std::memory_order_relaxed);
      c_.method_unloads.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  // jitprov knows its live code by address (host mode): no map of the client's own.
  const int e = jitprov_code_retire_at(rt_, ev.start, nullptr);
  if (e == JITPROV_E_UNKNOWN_VERSION) {
    c_.unknown_unloads.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (e != JITPROV_OK) return error("retire", e);
  c_.unloads.fetch_add(1, std::memory_order_relaxed);
}

void Mirror::moduleUnload(const ModuleEvent& ev) {
  if (shutdownWalk(ev.module_id, 0, false)) return;
  if (catchup_.load(std::memory_order_acquire)) {  // an attach's catch-up may run
    // Through the gate (mirror.h): while it is closed the catch-up reads methods this
    // module's context may own, and CoreCLR frees the context only once this returns.
    std::unique_lock<std::mutex> g(gate_mu_);
    if (gate_closed_) {
      const uint64_t w0 = hostagent::nowNs();
      ++gate_waiters_;
      gate_cv_.wait(g, [this] { return !gate_closed_; });
      --gate_waiters_;
      const uint64_t ns = hostagent::nowNs() - w0;
      c_.gate_waits.fetch_add(1, std::memory_order_relaxed);
      uint64_t m = c_.gate_wait_max_ns.load(std::memory_order_relaxed);
      while (ns > m && !c_.gate_wait_max_ns.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
      }
    }
    dead_modules_.insert(ev.module_id);
    unloads_seen_.fetch_add(1, std::memory_order_release);
    g.unlock();
    gate_cv_.notify_all();  // a closeGate() waiting for this one to pass
  }
  uint64_t id = 0;
  {
    std::lock_guard g(modules_mu_);
    auto it = modules_.find(ev.module_id);
    if (it == modules_.end()) return;  // no code was mirrored for it
    if (!it->second.collectible) return;
    id = it->second.id;
    modules_.erase(it);
  }
  // Its methods, their MethodIDs and their code go with it in jitprov.
  const int e = jitprov_module_unload(rt_, id);
  if (e != JITPROV_OK) error("unload module", e);
  c_.module_unloads.fetch_add(1, std::memory_order_relaxed);
}

void Mirror::publishCaught(const CaughtBody& b) {
  if (dead_code_.count(b.start) != 0 || dead_functions_.count(b.method_id) != 0) {
    c_.caught_unloaded.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const ModuleRef module = moduleOf(b.module_id);
  if (module.id == 0) return;
  uint64_t method = 0;
  if (jitprov_method_find(rt_, b.method_id, &method) != JITPROV_OK) {
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    d.host_key = b.method_id;
    d.token = b.token;
    d.flags = kMethodJitted;
    d.name_space = b.name_space.c_str();
    d.name = b.name.c_str();
    d.signature = b.signature.c_str();
    d.options = JITPROV_METHOD_SANITIZE_NAMES;
    const int e = jitprov_method_register(rt_, module.id, &d, &method);
    if (e == JITPROV_OK) {
      c_.methods.fetch_add(1, std::memory_order_relaxed);
    } else if (e != JITPROV_E_EXISTS) {  // EXISTS: the session's event registered it meanwhile
      return error("register method " + b.name_space + "::" + b.name, e);
    }
  }
  jitprov_code_desc cd = JITPROV_CODE_DESC_INIT;
  cd.code_start = b.start;
  cd.code_size = b.size;
  cd.tier = b.tier;
  cd.host_tier = kClrTierUnknown;  // no profiling API tells a body's tier
  cd.host_version = b.host_version;
  // The session's event activated a newer body since the catch-up began: it stays the
  // active one (an event takes catchup_mu_ to say so before it publishes).
  if (b.activate && activated_.count(b.method_id) == 0) cd.flags = JITPROV_CODE_ACTIVATE;
  uint64_t version = 0;
  const int e = jitprov_code_publish(rt_, method, &cd, &version);
  if (e == JITPROV_E_RANGE_OVERLAP || e == JITPROV_E_ZERO_CODE_SIZE) {
    c_.refused.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (e != JITPROV_OK) return error("publish " + b.name_space + "::" + b.name, e);
  c_.loads.fetch_add(1, std::memory_order_relaxed);
  c_.caught.fetch_add(1, std::memory_order_relaxed);
}

void Mirror::beginCatchUp() {
  {
    const std::lock_guard g(gate_mu_);
    gate_closed_ = true;
  }
  catchup_.store(true, std::memory_order_release);
}

void Mirror::prepareRundown(void* self) {
  auto* m = static_cast<Mirror*>(self);
  std::unique_lock<std::mutex> g(m->gate_mu_);
  if (m->prepare_gave_up_) return;
  if (!m->gate_cv_.wait_for(g, std::chrono::seconds(5), [m] { return !m->catchup_.load(std::memory_order_acquire); }))
    m->prepare_gave_up_ = true;  // not waited for again
}

void Mirror::closeGate() {
  std::unique_lock<std::mutex> g(gate_mu_);
  // The callbacks waiting since the last close pass first: closed again at once, the
  // gate would hold them for the whole catch-up.
  gate_cv_.wait(g, [this] { return gate_waiters_ == 0; });
  gate_closed_ = true;
}

void Mirror::openGate() {
  {
    const std::lock_guard g(gate_mu_);
    gate_closed_ = false;
  }
  gate_cv_.notify_all();
}

uint64_t Mirror::entryPoint(uint64_t clr_method) const {
  uint64_t id = 0;
  if (rt_ == nullptr || jitprov_method_find(rt_, clr_method, &id) != JITPROV_OK) return 0;
  return jitprov_entry_point(rt_, id);
}

bool Mirror::anyModuleUnloaded(const std::vector<uint64_t>& clr_modules) {
  const std::lock_guard g(gate_mu_);
  for (const uint64_t m : clr_modules)
    if (dead_modules_.count(m) != 0) return true;
  return false;
}

void Mirror::endCatchUp() {
  {
    const std::lock_guard g(catchup_mu_);
    dead_code_.clear();
    dead_functions_.clear();
    activated_.clear();
  }
  {
    const std::lock_guard g(gate_mu_);
    catchup_.store(false, std::memory_order_release);
    gate_closed_ = false;
    dead_modules_.clear();
  }
  gate_cv_.notify_all();
}

void Mirror::badPayload(uint32_t event_id) {
  c_.bad_payloads.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard g(error_mu_);
  if (first_error_.empty()) first_error_ = "event " + std::to_string(event_id) + ": payload did not decode";
}

}  // namespace jitprov::dotnet

namespace jitprov::dotnet {

void Mirror::writeStats(const char* runtime_version, const jitprov_memory_stats& ms, uint64_t loads,
                        uint64_t session_stops) {
  if (opt_.stats.empty()) return;
  tools::AtomicFile file;
  if (!file.open(opt_.stats)) {
    std::fprintf(stderr, "jitprov-dotnet: write stats %s: %s\n", opt_.stats.c_str(), file.error().c_str());
    return;
  }
  FILE* f = file.file();
  std::fprintf(f, "{\n  \"pid\": %d, \"runtime\": \"%s\", \"session_stops\": %" PRIu64 ",\n", int(getpid()),
               runtime_version, session_stops);
  std::fprintf(f,
               "  \"loads\": %" PRIu64 ", \"replays\": %" PRIu64 ", \"unloads\": %" PRIu64
               ", \"unknown_unloads\": %" PRIu64 ", \"methods\": %" PRIu64 ", \"modules\": %" PRIu64
               ", \"module_unloads\": %" PRIu64 ", \"method_unloads\": %" PRIu64 ", \"live_versions\": %" PRIu64
               ", \"retired\": %" PRIu64 ",\n",
               loads, ms.replayed, v(c_.unloads), v(c_.unknown_unloads), v(c_.methods), v(c_.modules),
               v(c_.module_unloads), v(c_.method_unloads), ms.live_host_code, ms.retired);
  std::fprintf(f, "  \"collectible_generics\": %" PRIu64 ", \"shutdown_unloads\": %" PRIu64 ",\n",
               v(c_.collectible_generics), v(c_.shutdown_unloads));
  std::fprintf(f,
               "  \"not_mirrored\": {\"r2r_methods\": %" PRIu64 ", \"cold_parts\": %" PRIu64
               ", \"not_jitted\": %" PRIu64 ", \"bad_payloads\": %" PRIu64 ", \"refused\": %" PRIu64
               ", \"errors\": %" PRIu64 "},\n",
               v(c_.r2r_methods), v(c_.cold_parts), v(c_.not_jitted), v(c_.bad_payloads), v(c_.refused), v(c_.errors));
  std::fprintf(f,
               "  \"catch_up\": {\"bodies\": %" PRIu64 ", \"unloaded\": %" PRIu64 ", \"r2r\": %" PRIu64
               ", \"errors\": %" PRIu64 ", \"gate_waits\": %" PRIu64 ", \"gate_wait_max_us\": %" PRIu64 "},\n",
               v(c_.caught), v(c_.caught_unloaded), v(c_.caught_r2r), v(c_.caught_errors), v(c_.gate_waits),
               v(c_.gate_wait_max_ns) / 1000);
  hostagent::jitdumpStatsJson(f, rt_, opt_);
  hostagent::histJson(f, "load_callback", load_cb_.snapshot());
  hostagent::histJson(f, "unload_callback", unload_cb_.snapshot());
  own_.json(f);  // its threads snapped before the rundown thread ended
  std::fprintf(f, "  \"by_clr_tier\": [");
  for (int i = 0; i < 8; ++i) std::fprintf(f, "%s%" PRIu64, i ? ", " : "", v(c_.by_clr_tier[i]));
  std::fprintf(f,
               "],\n  \"rundowns\": %" PRIu64 ", \"perfmap_written\": %" PRIu64 ", \"perfmap_errors\": %" PRIu64
               ",\n  \"provider\": \"%s\"\n}\n",
               jitprov_rundown_completed(rd_), perfmap_.written, perfmap_.errors, jitprov_trace_provider_status());
  if (!file.commit())
    std::fprintf(stderr, "jitprov-dotnet: write stats %s: %s\n", opt_.stats.c_str(), file.error().c_str());
}

void Mirror::shutdown(const char* runtime_version, uint64_t session_stops) {
  if (rd_ == nullptr) return;
  if (own_.on) own_.snapshotThreads();  // /proc forgets the thread when it ends
  jitprov_rundown_stop(rd_);            // the exit rundown, when asked for
  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(rt_, &ms);
  const uint64_t loads = v(c_.loads) - ms.replayed;  // jitprov counted the replays among them
  writeStats(runtime_version, ms, loads, session_stops);
  hostagent::closeJitdump("jitprov-dotnet", rt_, opt_);
  if (perfmap_.errors != 0)
    std::fprintf(stderr, "jitprov-dotnet: perf map: %" PRIu64 " errors, last: %s\n", perfmap_.errors,
                 perfmap_.last_error.c_str());
  const uint64_t lost = v(c_.bad_payloads) + v(c_.refused) + v(c_.errors);
  std::lock_guard g(error_mu_);
  if (lost != 0 || opt_.verbose)
    std::fprintf(stderr,
                 "jitprov-dotnet: %" PRIu64 " loads, %" PRIu64 " unloads, %" PRIu64 " rundowns; not mirrored: %" PRIu64
                 " precompiled (ReadyToRun) methods, %" PRIu64 " cold parts, %" PRIu64 " bad payloads, %" PRIu64
                 " refused, %" PRIu64 " errors%s%s\n",
                 loads, v(c_.unloads), jitprov_rundown_completed(rd_), v(c_.r2r_methods), v(c_.cold_parts),
                 v(c_.bad_payloads), v(c_.refused), v(c_.errors),
                 first_error_.empty() ? "" : "; first: ", first_error_.c_str());
}

}  // namespace jitprov::dotnet
