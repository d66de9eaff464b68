// SPDX-License-Identifier: MIT
#include "mirror.h"

#include <unistd.h>

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

}  // namespace

std::string Mirror::start(const hostagent::Options& opt, std::function<ModuleInfo(uint64_t)> module_info) {
  opt_ = opt;
  module_info_ = std::move(module_info);
  // Rundown events go to a channel that may block (docs/tracing.md): only jitprov's
  // rundown thread emits there. Set before the runtime loads lttng-ust.
  setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.code_mode = JITPROV_CODE_HOST;
  int e = jitprov_runtime_create(&cfg, &rt_);
  if (e != JITPROV_OK) return std::string("create the jitprov runtime: ") + jitprov_strerror(e);
  if (std::string why = hostagent::openJitdump(rt_, opt_); !why.empty()) return "jitdump: " + why;
  e = hostagent::startRundowns(rt_, opt_, &perfmap_, &rd_);
  if (e != JITPROV_OK) return std::string("start the rundown engine: ") + jitprov_strerror(e);
  return "";
}

void Mirror::error(const std::string& what, int e) {
  ++c_.errors;
  if (c_.first_error.empty()) c_.first_error = what + ": " + jitprov_strerror(e);
}

uint64_t Mirror::moduleOf(uint64_t clr_module) {
  if (auto it = modules_.find(clr_module); it != modules_.end()) return it->second.id;
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
    return 0;
  }
  ++c_.modules;
  modules_.emplace(clr_module, Module{id, info.collectible});
  return id;
}

uint64_t Mirror::methodOf(const MethodEvent& ev, uint64_t module) {
  if (auto it = methods_.find(ev.method_id); it != methods_.end()) return it->second.id;
  jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
  d.host_key = ev.method_id;
  d.token = ev.token;
  d.flags = ev.flags;
  d.name_space = ev.name_space.c_str();
  d.name = ev.name.c_str();
  d.signature = ev.signature.c_str();
  d.options = JITPROV_METHOD_SANITIZE_NAMES;
  uint64_t id = 0;
  const int e = jitprov_method_register(rt_, module, &d, &id);
  if (e != JITPROV_OK && e != JITPROV_E_EXISTS) {
    error("register method " + ev.name_space + "::" + ev.name, e);
    return 0;
  }
  ++c_.methods;
  methods_.emplace(ev.method_id, Mirrored{id, ev.module_id});
  return id;
}

void Mirror::methodLoad(const MethodEvent& ev, uint64_t t0) {
  std::lock_guard g(mu_);
  const Timed timed{load_cb_, t0};
  if ((ev.flags & kMethodColdPart) != 0) {
    ++c_.cold_parts;
    return;
  }
  if ((ev.flags & kMethodJitted) == 0) {
    ++c_.not_jitted;
    return;
  }
  const uint32_t clr_tier = (ev.flags >> kTierShift) & kTierMask;
  ++c_.by_clr_tier[clr_tier];
  const uint64_t module = moduleOf(ev.module_id);
  const uint64_t method = module != 0 ? methodOf(ev, module) : 0;
  if (method == 0) return;
  jitprov_code_desc cd = JITPROV_CODE_DESC_INIT;
  cd.code_start = ev.start;
  cd.code_size = ev.size;
  cd.tier = tierOf(clr_tier);
  cd.host_tier = clr_tier;
  // CoreCLR's own id of this body's native code version (its "ReJITID" event field
  // carries the NativeCodeVersionId: 0 for a method's first body).
  cd.host_version = static_cast<uint32_t>(ev.native_version);
  uint64_t version = 0;
  const int e = jitprov_code_publish(rt_, method, &cd, &version);
  if (e == JITPROV_E_RANGE_OVERLAP || e == JITPROV_E_ZERO_CODE_SIZE) {
    ++c_.refused;
    return;
  }
  if (e != JITPROV_OK) return error("publish " + ev.name_space + "::" + ev.name, e);
  auto [it, fresh] = live_.emplace(ev.start, Mirrored{version, ev.module_id});
  if (!fresh && it->second.id == version) {
    ++c_.replays;
    return;
  }
  it->second = Mirrored{version, ev.module_id};
  ++c_.loads;
  // CoreCLR makes each new non-OSR body the method's entry point once published.
  if (cd.tier != JITPROV_TIER1_OSR) (void)jitprov_code_activate(rt_, version);
}

void Mirror::methodUnload(const MethodEvent& ev, uint64_t t0) {
  std::lock_guard g(mu_);
  const Timed timed{unload_cb_, t0};
  auto it = live_.find(ev.start);
  if (it == live_.end()) {
    ++c_.unknown_unloads;
    return;
  }
  const int e = jitprov_code_retire(rt_, it->second.id);
  live_.erase(it);
  if (e != JITPROV_OK) return error("retire", e);
  ++c_.unloads;
}

void Mirror::moduleUnload(const ModuleEvent& ev) {
  std::lock_guard g(mu_);
  auto it = modules_.find(ev.module_id);
  if (it == modules_.end()) return;  // no code was mirrored for it
  if (!it->second.collectible) return;
  const int e = jitprov_module_unload(rt_, it->second.id);
  if (e != JITPROV_OK) error("unload module", e);
  ++c_.module_unloads;
  modules_.erase(it);
  // Its methods and versions are gone in jitprov: forget them here too (CoreCLR may
  // hand out their MethodIDs and addresses again).
  std::erase_if(methods_, [&](const auto& kv) { return kv.second.clr_module == ev.module_id; });
  std::erase_if(live_, [&](const auto& kv) { return kv.second.clr_module == ev.module_id; });
}

void Mirror::badPayload(uint32_t event_id) {
  std::lock_guard g(mu_);
  ++c_.bad_payloads;
  if (c_.first_error.empty()) c_.first_error = "event " + std::to_string(event_id) + ": payload did not decode";
}

}  // namespace jitprov::dotnet

namespace jitprov::dotnet {

void Mirror::writeStats(const char* runtime_version) {
  if (opt_.stats.empty()) return;
  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(rt_, &ms);
  tools::AtomicFile file;
  if (!file.open(opt_.stats)) {
    std::fprintf(stderr, "jitprov-dotnet: write stats %s: %s\n", opt_.stats.c_str(), file.error().c_str());
    return;
  }
  FILE* f = file.file();
  std::fprintf(f, "{\n  \"pid\": %d, \"runtime\": \"%s\",\n", int(getpid()), runtime_version);
  std::fprintf(f,
               "  \"loads\": %" PRIu64 ", \"replays\": %" PRIu64 ", \"unloads\": %" PRIu64
               ", \"unknown_unloads\": %" PRIu64 ", \"methods\": %" PRIu64 ", \"modules\": %" PRIu64
               ", \"module_unloads\": %" PRIu64 ", \"live_versions\": %zu, \"retired\": %" PRIu64 ",\n",
               c_.loads, c_.replays, c_.unloads, c_.unknown_unloads, c_.methods, c_.modules, c_.module_unloads,
               live_.size(), ms.retired);
  std::fprintf(f,
               "  \"not_mirrored\": {\"r2r_methods\": %" PRIu64 ", \"cold_parts\": %" PRIu64
               ", \"not_jitted\": %" PRIu64 ", \"bad_payloads\": %" PRIu64 ", \"refused\": %" PRIu64
               ", \"errors\": %" PRIu64 "},\n",
               c_.r2r_methods, c_.cold_parts, c_.not_jitted, c_.bad_payloads, c_.refused, c_.errors);
  hostagent::jitdumpStatsJson(f, rt_, opt_);
  hostagent::histJson(f, "load_callback", load_cb_);
  hostagent::histJson(f, "unload_callback", unload_cb_);
  std::fprintf(f, "  \"by_clr_tier\": [");
  for (int i = 0; i < 8; ++i) std::fprintf(f, "%s%" PRIu64, i ? ", " : "", c_.by_clr_tier[i]);
  std::fprintf(f,
               "],\n  \"rundowns\": %" PRIu64 ", \"perfmap_written\": %" PRIu64 ", \"perfmap_errors\": %" PRIu64
               ",\n  \"provider\": \"%s\"\n}\n",
               jitprov_rundown_completed(rd_), perfmap_.written, perfmap_.errors, jitprov_trace_provider_status());
  if (!file.commit())
    std::fprintf(stderr, "jitprov-dotnet: write stats %s: %s\n", opt_.stats.c_str(), file.error().c_str());
}

void Mirror::shutdown(const char* runtime_version) {
  if (rd_ == nullptr) return;
  jitprov_rundown_stop(rd_);  // the exit rundown, when asked for
  std::lock_guard g(mu_);
  writeStats(runtime_version);
  hostagent::closeJitdump("jitprov-dotnet", rt_, opt_);
  if (perfmap_.errors != 0)
    std::fprintf(stderr, "jitprov-dotnet: perf map: %" PRIu64 " errors, last: %s\n", perfmap_.errors,
                 perfmap_.last_error.c_str());
  const uint64_t lost = c_.bad_payloads + c_.refused + c_.errors;
  if (lost != 0 || opt_.verbose)
    std::fprintf(stderr,
                 "jitprov-dotnet: %" PRIu64 " loads, %" PRIu64 " unloads, %" PRIu64 " rundowns; not mirrored: %" PRIu64
                 " precompiled (ReadyToRun) methods, %" PRIu64 " cold parts, %" PRIu64 " bad payloads, %" PRIu64
                 " refused, %" PRIu64 " errors%s%s\n",
                 c_.loads, c_.unloads, jitprov_rundown_completed(rd_), c_.r2r_methods, c_.cold_parts, c_.bad_payloads,
                 c_.refused, c_.errors, c_.first_error.empty() ? "" : "; first: ", c_.first_error.c_str());
}

}  // namespace jitprov::dotnet
