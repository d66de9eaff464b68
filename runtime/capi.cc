// SPDX-License-Identifier: MIT
// The C API (jitprov/jitprov.h) over the C++ core. Every entry point converts the
// caller's growable structs, calls the core and maps Errc to jitprov_error; none lets an
// exception cross into the host (guard()).
#include <jitprov/jitprov.h>

#include <jitprov/rundown.h>
#include <jitprov/runtime.h>
#include <jitprov/utf8.h>

#include "capi_internal.h"
#include "rundown_emitter.h"
#include "rcu.h"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct jitprov_runtime {
  explicit jitprov_runtime(const jitprov::RuntimeConfig& c) : rt(c) {}
  jitprov::Runtime rt;
};

struct jitprov_rundown {
  jitprov_rundown(jitprov::Runtime& rt, std::vector<jitprov::RundownMode> modes, jitprov::RundownTriggers t)
      : engine(rt, std::move(modes), t) {}
  jitprov::RundownEngine engine;
  jitprov_rundown_sink sink = nullptr;
  void* sink_ctx = nullptr;

  // Adapts the engine's sink to the C one. Registry strings are NUL-terminated.
  static void forward(void* ctx, const jitprov::RundownEngine::SinkEvent& e) {
    auto* self = static_cast<jitprov_rundown*>(ctx);
    jitprov_sink_record r{};
    r.rundown_id = e.rundown_id;
    switch (e.kind) {
      case jitprov::RundownEngine::SinkEvent::kBegin:
        r.kind = JITPROV_SINK_BEGIN;
        break;
      case jitprov::RundownEngine::SinkEvent::kEnd:
        r.kind = JITPROV_SINK_END;
        break;
      case jitprov::RundownEngine::SinkEvent::kModule:
        r.kind = JITPROV_SINK_MODULE;
        r.module_id = e.module->module_id;
        r.module_path = e.module->path.data();
        break;
      case jitprov::RundownEngine::SinkEvent::kVersion: {
        const jitprov::VersionView& v = *e.version;
        r.kind = JITPROV_SINK_VERSION;
        r.module_id = v.module_id;
        r.method_id = v.method_id;
        r.version_id = v.version_id;
        r.rejit_id = v.rejit_id;
        r.tier = static_cast<uint32_t>(v.tier);
        r.host_tier = v.host_tier;
        r.code_start = v.code_start;
        r.code_size = v.code_size;
        r.name_space = v.name_space.data();
        r.name = v.name.data();
        r.signature = v.signature.data();
        break;
      }
    }
    self->sink(self->sink_ctx, &r);
  }
};

namespace {

using jitprov::Errc;

// The C error numbers are the Errc values.
static_assert(jitprov::RundownEngine::kKeptResults == JITPROV_RUNDOWN_RESULTS_KEPT);
static_assert(jitprov::RuntimeConfig::kDefaultMaxReclamationBacklog == JITPROV_DEFAULT_RECLAMATION_BACKLOG);
static_assert(int(Errc::kUnknownModule) == JITPROV_E_UNKNOWN_MODULE);
static_assert(int(Errc::kBusy) == JITPROV_E_BUSY);
static_assert(int(Errc::kAlreadyExists) == JITPROV_E_EXISTS);
static_assert(int(Errc::kRangeOverlap) == JITPROV_E_RANGE_OVERLAP);
static_assert(int(Errc::kVersionGone) == JITPROV_E_VERSION_GONE);
static_assert(int(Errc::kWrongCodeMode) == JITPROV_E_WRONG_CODE_MODE);
static_assert(int(Errc::kOutOfMemory) == JITPROV_E_NO_MEMORY);
static_assert(int(Errc::kInternal) == JITPROV_E_INTERNAL);
// jitprov_line_entry is read as jitprov::LineEntry.
static_assert(sizeof(jitprov_line_entry) == sizeof(jitprov::LineEntry) &&
              offsetof(jitprov_line_entry, code_addr) == offsetof(jitprov::LineEntry, code_addr) &&
              offsetof(jitprov_line_entry, line) == offsetof(jitprov::LineEntry, line) &&
              offsetof(jitprov_line_entry, discriminator) == offsetof(jitprov::LineEntry, discriminator) &&
              offsetof(jitprov_line_entry, file) == offsetof(jitprov::LineEntry, file));
// The original layouts (what an older caller's sz says).
static_assert(offsetof(jitprov_code_desc, lines) == 40 && offsetof(jitprov_code_desc, flags) == 56);
static_assert(offsetof(jitprov_jitdump_stats, debug_records) == 88);
static_assert(int(Errc::kTooManyVersions) == JITPROV_E_TOO_MANY_VERSIONS);
static_assert(int(Errc::kCutShort) == JITPROV_E_CUT_SHORT);
static_assert(int(jitprov::Tier::kOptimized) == JITPROV_TIER_OPTIMIZED);
static_assert(int(jitprov::RundownMode::kPerMethod) == JITPROV_RUNDOWN_PER_METHOD);
static_assert(int(jitprov::RundownTrigger::kEvery) == JITPROV_TRIGGER_EVERY);
static_assert(jitprov::kHistBuckets == JITPROV_HIST_BUCKETS);
static_assert(jitprov::kLockSiteMax + 1 == JITPROV_LOCK_SITES);

int err(Errc e) noexcept { return static_cast<int>(e); }

template <class F>
int guard(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return JITPROV_E_NO_MEMORY;
  } catch (...) {
    return JITPROV_E_INTERNAL;
  }
}

// The C shape of a Result: its value written to *out (when out is given), its error
// number returned.
template <class T, class U>
int deliver(const jitprov::Result<T>& r, U* out) noexcept {
  if (!r.ok()) return err(r.error());
  if (out != nullptr) *out = static_cast<U>(*r);
  return JITPROV_OK;
}

// Reads a caller's growable struct (libbpf's OPTS rule): a shorter one is padded with
// the defaults in *out; a longer one must have a zero tail (fields this library does
// not know about), up to JITPROV_STRUCT_SZ_MAX.
template <class T>
bool readStruct(const T* in, T* out) noexcept {
  static_assert(sizeof(T) <= JITPROV_STRUCT_SZ_MAX);
  if (in == nullptr) return true;
  // A size that ends inside a field (not on the struct's alignment) is not a struct of
  // any version: copying it would splice half a pointer onto a default. Nor is a huge
  // one: its tail check would read off the caller's memory, or wrap (SIZE_MAX & ~7).
  if (in->sz < sizeof(size_t) || in->sz % alignof(T) != 0 || in->sz > JITPROV_STRUCT_SZ_MAX) return false;
  if (in->sz > sizeof(T)) {
    const auto* tail = reinterpret_cast<const unsigned char*>(in) + sizeof(T);
    if (std::any_of(tail, tail + (in->sz - sizeof(T)), [](unsigned char c) { return c != 0; })) return false;
  }
  std::memcpy(static_cast<void*>(out), in, std::min(in->sz, sizeof(T)));
  out->sz = sizeof(T);
  return true;
}

// Writes an output struct up to the caller's out->sz.
template <class T>
int writeStruct(const T& value, T* out) noexcept {
  if (out == nullptr || out->sz < sizeof(size_t)) return JITPROV_E_INVALID_ARGUMENT;
  const size_t n = std::min(out->sz, sizeof(T));
  const size_t caller_sz = out->sz;
  std::memcpy(static_cast<void*>(out), &value, n);
  out->sz = caller_sz;
  return JITPROV_OK;
}

std::string_view str(const char* s) noexcept { return s == nullptr ? std::string_view() : std::string_view(s); }

void copyHist(const jitprov::HistSnapshot& h, jitprov_hist* out) noexcept {
  out->count = h.count;
  out->total_ns = h.total_ns;
  out->max_ns = h.max_ns;
  std::copy(h.buckets.begin(), h.buckets.end(), out->buckets);
}

// sizeof(jitprov_rundown_result) before it grew (its fields up to `traced`, padded).
constexpr size_t kRundownResultV0Size = 88;
static_assert(offsetof(jitprov_rundown_result, sessions) + sizeof(uint32_t) <= kRundownResultV0Size &&
              offsetof(jitprov_rundown_result, begin_seq) == kRundownResultV0Size);

jitprov_rundown_result toC(const jitprov::RundownResult& r) noexcept {
  jitprov_rundown_result c{};
  c.rundown_id = r.rundown_id;
  c.mode = static_cast<uint32_t>(r.mode);
  c.trigger = static_cast<uint32_t>(r.trigger);
  c.method_count = r.method_count;
  c.modules = r.modules;
  c.methods = r.methods;
  c.versions = r.versions;
  c.skipped = r.skipped;
  c.retried = r.retried;
  c.begin_ns = r.begin_ns;
  c.duration_ns = r.duration_ns;
  c.traced = r.traced ? 1 : 0;
  c.sessions = static_cast<uint32_t>(r.sessions);
  c.begin_seq = r.begin_seq;
  c.publish_seq = r.publish_seq;
  c.end_seq = r.end_seq;
  c.caught_up = r.caught_up;
  c.catch_up_ns = r.catch_up_ns;
  c.cut_short = r.cut_short ? 1 : 0;
  c.caught_up_methods = r.caught_up_methods;
  return c;
}

template <class Parse, class T>
int parseName(const char* name, Parse parse, int* out) noexcept {
  T v;
  if (name == nullptr || out == nullptr || !parse(name, &v)) return JITPROV_E_INVALID_ARGUMENT;
  *out = static_cast<int>(v);
  return JITPROV_OK;
}

}  // namespace

extern "C" {

const char* jitprov_strerror(int error) {
  if (error < 0 || error >= jitprov::kErrcCount) return "unknown error";
  return jitprov::errcMessage(static_cast<Errc>(error));
}

const char* jitprov_tier_name(int tier) {
  if (tier < 0 || tier >= jitprov::kTierCount) return "invalid";
  return jitprov::tierName(static_cast<jitprov::Tier>(tier)).data();  // the names are NUL-terminated literals
}
const char* jitprov_rundown_mode_name(int mode) {
  if (mode < 0 || mode > 255) return "invalid";
  return jitprov::rundownModeName(static_cast<jitprov::RundownMode>(mode)).data();
}
const char* jitprov_rundown_trigger_name(int trigger) {
  if (trigger < 0 || trigger > 255) return "invalid";
  return jitprov::rundownTriggerName(static_cast<jitprov::RundownTrigger>(trigger)).data();
}
const char* jitprov_lock_site_name(int site) {
  if (site < 0 || site > 255) return "invalid";
  return jitprov::lockSiteName(static_cast<jitprov::LockSite>(site)).data();
}
int jitprov_tier_parse(const char* name, int* tier) {
  return parseName<decltype(&jitprov::parseTier), jitprov::Tier>(name, &jitprov::parseTier, tier);
}
int jitprov_rundown_mode_parse(const char* name, int* mode) {
  return parseName<decltype(&jitprov::parseRundownMode), jitprov::RundownMode>(name, &jitprov::parseRundownMode, mode);
}

// ---- runtime -----------------------------------------------------------------------

int jitprov_runtime_create(const jitprov_runtime_config* config, jitprov_runtime** out) {
  if (out == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    jitprov_runtime_config c = JITPROV_RUNTIME_CONFIG_INIT;
    if (!readStruct(config, &c)) return JITPROV_E_INVALID_ARGUMENT;
    if (c.code_mode > JITPROV_CODE_HOST) return JITPROV_E_INVALID_ARGUMENT;
    jitprov::RuntimeConfig rc;
    if (c.tier_up_threshold != 0) rc.tier_up_threshold = c.tier_up_threshold;
    rc.lock_stats = c.lock_stats != 0;
    rc.max_reclamation_backlog = c.max_reclamation_backlog == 0            ? JITPROV_DEFAULT_RECLAMATION_BACKLOG
                                 : c.max_reclamation_backlog == UINT64_MAX ? 0
                                                                           : c.max_reclamation_backlog;
    rc.code_mode = c.code_mode == JITPROV_CODE_HOST ? jitprov::CodeMode::kHost : jitprov::CodeMode::kModelHeap;
    auto* rt = new (std::nothrow) jitprov_runtime(rc);
    if (rt == nullptr) return JITPROV_E_NO_MEMORY;
    *out = rt;
    return JITPROV_OK;
  });
}

uint32_t jitprov_runtime_instance(const jitprov_runtime* rt) { return rt == nullptr ? 0 : rt->rt.instance(); }

void jitprov_runtime_destroy(jitprov_runtime* rt) {
  try {
    delete rt;
  } catch (...) {  // nothing in the destructors throws; never let it reach the host
  }
}

int jitprov_module_register(jitprov_runtime* rt, const char* path, int collectible, uint64_t* module_id) {
  if (rt == nullptr || module_id == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return deliver(rt->rt.registerModule(str(path), collectible != 0), module_id); });
}

int jitprov_module_unload(jitprov_runtime* rt, uint64_t module_id) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return err(rt->rt.unloadModule(module_id).error()); });
}

int jitprov_method_unload(jitprov_runtime* rt, uint64_t method_id) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return err(rt->rt.unloadMethod(method_id).error()); });
}

int jitprov_method_register(jitprov_runtime* rt, uint64_t module_id, const jitprov_method_desc* desc,
                            uint64_t* method_id) {
  if (rt == nullptr || desc == nullptr || method_id == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    if (!readStruct(desc, &d)) return JITPROV_E_INVALID_ARGUMENT;
    if ((d.options & ~JITPROV_METHOD_SANITIZE_NAMES) != 0) return JITPROV_E_INVALID_ARGUMENT;
    std::string_view ns = str(d.name_space), name = str(d.name), sig = str(d.signature);
    std::string buf[3];
    if (d.options & JITPROV_METHOD_SANITIZE_NAMES) {
      std::string_view* parts[3] = {&ns, &name, &sig};
      for (int i = 0; i < 3; ++i) {
        if (!jitprov::isValidUtf8(*parts[i]) || parts[i]->size() > jitprov::kMaxNameBytes) {
          jitprov::sanitizeUtf8(*parts[i], jitprov::kMaxNameBytes, &buf[i]);
          *parts[i] = buf[i];
        }
      }
    }
    jitprov::MethodDesc md{d.token, d.flags, ns, name, sig, d.host_key};
    for (;;) {
      auto r = rt->rt.registerMethod(module_id, md);
      if (r.error() != Errc::kAlreadyExists) return deliver(r, method_id);
      // EXISTS returns the live method's id. Unloaded between the two calls (a host
      // unloading it on another thread), the key is free: register again.
      if (auto found = rt->rt.findMethod(d.host_key); found.ok()) {
        *method_id = *found;
        return JITPROV_E_EXISTS;
      }
    }
  });
}

int jitprov_method_find(jitprov_runtime* rt, uint64_t host_key, uint64_t* method_id) {
  if (rt == nullptr || method_id == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return deliver(rt->rt.findMethod(host_key), method_id); });
}

// ---- code -----------------------------------------------------------------------------

int jitprov_code_publish(jitprov_runtime* rt, uint64_t method_id, const jitprov_code_desc* code, uint64_t* version_id) {
  if (rt == nullptr || code == nullptr || version_id == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
    if (!readStruct(code, &c)) return JITPROV_E_INVALID_ARGUMENT;
    if (c.tier >= uint32_t(jitprov::kTierCount) || c.host_tier > UINT16_MAX || (c.flags & ~JITPROV_CODE_ACTIVATE) != 0)
      return JITPROV_E_INVALID_ARGUMENT;
    const jitprov::HostCode hc{c.code_start,
                               c.code_size,
                               static_cast<jitprov::Tier>(c.tier),
                               static_cast<uint16_t>(c.host_tier),
                               c.osr_il_offset,
                               c.host_version,
                               reinterpret_cast<const jitprov::LineEntry*>(c.lines),
                               c.n_lines,
                               (c.flags & JITPROV_CODE_ACTIVATE) != 0};
    return deliver(rt->rt.publishHostCode(method_id, hc), version_id);
  });
}

int jitprov_jit_begin(jitprov_runtime* rt, uint64_t method_id, int tier, uint32_t osr_il_offset, uint64_t* version_id) {
  if (rt == nullptr || version_id == nullptr || tier < 0 || tier >= jitprov::kTierCount)
    return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    return deliver(rt->rt.beginJit(method_id, static_cast<jitprov::Tier>(tier), osr_il_offset), version_id);
  });
}

int jitprov_jit_publish(jitprov_runtime* rt, uint64_t version_id, uint32_t code_size, uint64_t* code_start) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    auto r = rt->rt.publishCode(version_id, code_size);
    if (!r.ok()) return err(r.error());
    if (code_start != nullptr) *code_start = r->start;
    return JITPROV_OK;
  });
}

int jitprov_code_retire(jitprov_runtime* rt, uint64_t version_id) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return err(rt->rt.retireVersion(version_id).error()); });
}

int jitprov_code_retire_at(jitprov_runtime* rt, uint64_t code_start, uint64_t* version_id) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return deliver(rt->rt.retireHostCode(code_start), version_id); });
}

int jitprov_code_retire_host(jitprov_runtime* rt, uint64_t code_start, uint64_t host_key, jitprov_host_retired* out) {
  if (rt == nullptr || out == nullptr || out->sz < sizeof(size_t)) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    jitprov::Runtime::HostRetired h;
    const int e = err(rt->rt.retireHostCodeOf(code_start, host_key, &h).error());
    const jitprov_host_retired c{
        sizeof(jitprov_host_retired),           h.version, h.method, h.module, h.host_key, h.code_size,
        h.last ? JITPROV_HOST_RETIRED_LAST : 0u};
    (void)writeStruct(c, out);
    return e;
  });
}

int jitprov_code_find_overlap(jitprov_runtime* rt, uint64_t start, uint32_t size, uint64_t* code_start) {
  if (rt == nullptr || code_start == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return deliver(rt->rt.findHostOverlap(start, size), code_start); });
}

int jitprov_method_live_code(const jitprov_runtime* rt, uint64_t method_id, uint64_t* versions) {
  if (rt == nullptr || versions == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return deliver(rt->rt.liveCodeOfMethod(method_id), versions); });
}

int jitprov_module_live_code(const jitprov_runtime* rt, uint64_t module_id, uint64_t* versions) {
  if (rt == nullptr || versions == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return deliver(rt->rt.liveCodeOfModule(module_id), versions); });
}

int jitprov_code_activate(jitprov_runtime* rt, uint64_t version_id) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return err(rt->rt.activate(version_id).error()); });
}

int jitprov_rejit_request(jitprov_runtime* rt, uint64_t method_id, uint32_t* rejit_id) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return deliver(rt->rt.requestRejit(method_id), rejit_id); });
}

int jitprov_call_record(jitprov_runtime* rt, uint64_t method_id) {
  return rt != nullptr && rt->rt.recordCall(method_id) ? 1 : 0;
}

uint64_t jitprov_entry_point(const jitprov_runtime* rt, uint64_t method_id) {
  return rt == nullptr ? 0 : rt->rt.entryPoint(method_id);
}

// ---- statistics -------------------------------------------------------------------------

int jitprov_memory_stats_get(const jitprov_runtime* rt, jitprov_memory_stats* out) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    const jitprov::MemoryStats m = rt->rt.memoryStats();
    jitprov_memory_stats c{sizeof(jitprov_memory_stats),
                           m.live_modules,
                           m.live_methods,
                           m.il_versions,
                           m.native_versions,
                           m.method_bytes,
                           m.version_bytes,
                           m.table_bytes,
                           m.retired,
                           m.replayed,
                           m.overlaps_refused,
                           m.awaiting_reclamation,
                           m.max_reclamation_backlog,
                           m.reclaimed_inline,
                           {},
                           m.live_host_code};
    copyHist(m.reclaim_wait, &c.reclaim_wait);
    return writeStruct(c, out);
  });
}

int jitprov_lock_stats_get(const jitprov_runtime* rt, jitprov_lock_stats* out) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    const jitprov::LockStatsSnapshot s = rt->rt.lockStats();
    auto c = std::make_unique<jitprov_lock_stats>();
    c->sz = sizeof(jitprov_lock_stats);
    for (int r = 0; r < 2; ++r) {
      for (int site = 0; site < JITPROV_LOCK_SITES; ++site) {
        copyHist(s.sites[r][site].wait, &c->wait[r][site]);
        copyHist(s.sites[r][site].hold, &c->hold[r][site]);
      }
    }
    return writeStruct(*c, out);
  });
}

void jitprov_lock_stats_reset(jitprov_runtime* rt) {
  if (rt != nullptr) rt->rt.resetLockStats();
}

// ---- rundown --------------------------------------------------------------------------------

int jitprov_rundown_triggers_check(const char* triggers, char* why, size_t why_len) {
  return guard([&]() -> int {
    jitprov::RundownTriggers t;
    std::string e;
    if (jitprov::parseTriggers(str(triggers), &t, &e)) return JITPROV_OK;
    if (why != nullptr && why_len > 0) {
      const size_t n = std::min(e.size(), why_len - 1);
      std::memcpy(why, e.data(), n);
      why[n] = '\0';
    }
    return JITPROV_E_INVALID_ARGUMENT;
  });
}

int jitprov_rundown_create(jitprov_runtime* rt, const jitprov_rundown_config* config, jitprov_rundown** out) {
  if (rt == nullptr || out == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    jitprov_rundown_config c = JITPROV_RUNDOWN_CONFIG_INIT;
    if (!readStruct(config, &c)) return JITPROV_E_INVALID_ARGUMENT;
    std::vector<jitprov::RundownMode> modes;
    if (c.n_modes > 0 && c.modes == nullptr) return JITPROV_E_INVALID_ARGUMENT;
    for (size_t i = 0; i < c.n_modes; ++i) {
      if (c.modes[i] < JITPROV_RUNDOWN_LOCKFREE || c.modes[i] > JITPROV_RUNDOWN_PER_METHOD)
        return JITPROV_E_INVALID_ARGUMENT;
      modes.push_back(static_cast<jitprov::RundownMode>(c.modes[i]));
    }
    jitprov::RundownTriggers t;
    std::string why;
    if (!jitprov::parseTriggers(str(c.triggers), &t, &why)) return JITPROV_E_INVALID_ARGUMENT;
    auto* rd = new (std::nothrow) jitprov_rundown(rt->rt, std::move(modes), t);
    if (rd == nullptr) return JITPROV_E_NO_MEMORY;
    rd->engine.setMaxRate(c.max_rate);
    if (c.sink != nullptr) {
      rd->sink = c.sink;
      rd->sink_ctx = c.sink_ctx;
      rd->engine.setSink(&jitprov_rundown::forward, rd);
    }
    if (c.prepare != nullptr) rd->engine.setPrepare(c.prepare, c.prepare_ctx);
    *out = rd;
    return JITPROV_OK;
  });
}

int jitprov_rundown_start(jitprov_rundown* rd) {
  if (rd == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int { return err(rd->engine.start().error()); });
}

void jitprov_rundown_stop(jitprov_rundown* rd) {
  if (rd == nullptr) return;
  (void)guard([&]() -> int {
    rd->engine.stop();
    return JITPROV_OK;
  });
}

void jitprov_rundown_destroy(jitprov_rundown* rd) {
  if (rd == nullptr) return;
  try {  // the engine's destructor stops it and waits for runNow() callers (rundown.h)
    delete rd;
  } catch (...) {
  }
}

void jitprov_rundown_request(jitprov_rundown* rd) {
  if (rd != nullptr) rd->engine.request();
}

void jitprov_rundown_request_from_signal(jitprov_rundown* rd) {
  if (rd != nullptr) rd->engine.requestFromSignal();
}

int jitprov_rundown_run_now(jitprov_rundown* rd, int mode, jitprov_rundown_result* out) {
  if (rd == nullptr || mode < JITPROV_RUNDOWN_LOCKFREE || mode > JITPROV_RUNDOWN_PER_METHOD)
    return JITPROV_E_INVALID_ARGUMENT;
  return guard([&]() -> int {
    const jitprov::RundownResult r =
        rd->engine.runNow(static_cast<jitprov::RundownMode>(mode), jitprov::RundownTrigger::kApi);
    if (out != nullptr) {
      // The original layout only: callers built before the struct grew have 88 bytes.
      const jitprov_rundown_result c = toC(r);
      std::memcpy(out, &c, kRundownResultV0Size);
    }
    return r.cut_short ? JITPROV_E_CUT_SHORT : JITPROV_OK;
  });
}

uint64_t jitprov_rundown_completed(const jitprov_rundown* rd) { return rd == nullptr ? 0 : rd->engine.completed(); }

size_t jitprov_rundown_results(const jitprov_rundown* rd, jitprov_rundown_result* out, size_t cap, size_t result_sz) {
  if (rd == nullptr) return 0;
  try {
    const std::vector<jitprov::RundownResult> rs = rd->engine.results();
    if (out != nullptr && result_sz > 0) {
      const size_t n = std::min(cap, rs.size());
      for (size_t i = 0; i < n; ++i) {
        const jitprov_rundown_result c = toC(rs[i]);
        std::memcpy(reinterpret_cast<char*>(out) + i * result_sz, &c, std::min(result_sz, sizeof c));
      }
    }
    return rs.size();
  } catch (...) {
    return 0;
  }
}

// ---- trace provider -----------------------------------------------------------------------

const char* jitprov_trace_provider_status(void) {
  try {
    // Decided once per process; the string lives as long as the process.
    static const std::string status = jitprov::traceProviderStatus();
    return status.c_str();
  } catch (...) {
    return "not loaded: out of memory";
  }
}

int jitprov_trace_provider_loaded(void) {
  return std::strncmp(jitprov_trace_provider_status(), "loaded ", 7) == 0 ? 1 : 0;
}

// ---- internal (hidden: not part of the ABI; the test build of the simulator uses it) ----------

int jitprov_internal_inject_fault(jitprov_rundown* rd, const char* fault) {
  std::unique_ptr<jitprov::RundownEmitter> e = fault != nullptr ? jitprov::faultyEmitter(fault) : nullptr;
  if (rd == nullptr || e == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  rd->engine.setEmitter(std::move(e));
  return JITPROV_OK;
}

}  // extern "C"

jitprov::Runtime* jitprovInternalRuntime(jitprov_runtime* rt) { return rt == nullptr ? nullptr : &rt->rt; }

int jitprov_jitdump_open(jitprov_runtime* rt, const jitprov_jitdump_config* config) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  jitprov_jitdump_config c = JITPROV_JITDUMP_CONFIG_INIT;
  if (!readStruct(config, &c) || (c.flags & ~JITPROV_JITDUMP_COPY_CODE) != 0) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&] {
    jitprov::JitdumpOptions o;
    o.dir = c.dir != nullptr ? c.dir : ".";
    o.copy_code = (c.flags & JITPROV_JITDUMP_COPY_CODE) != 0;
    const jitprov::Result<void> r = rt->rt.jitdumpOpen(o);
    return r.ok() ? JITPROV_OK : err(r.error());
  });
}

void jitprov_jitdump_close(jitprov_runtime* rt) {
  if (rt != nullptr) rt->rt.jitdumpClose();
}

int jitprov_jitdump_stats_get(const jitprov_runtime* rt, jitprov_jitdump_stats* out) {
  if (rt == nullptr) return JITPROV_E_INVALID_ARGUMENT;
  return guard([&] {
    const jitprov::JitdumpStats s = rt->rt.jitdumpStats();
    jitprov_jitdump_stats c{};
    c.sz = sizeof c;
    c.open = s.open ? 1 : 0;
    c.loads = s.loads;
    c.rundown_loads = s.rundown_loads;
    c.code_bytes = s.code_bytes;
    c.loads_without_code = s.loads_without_code;
    c.unreadable = s.unreadable;
    c.bytes = s.bytes;
    c.write_errors = s.write_errors;
    c.dropped = s.dropped;
    c.last_errno = s.last_errno;
    c.debug_records = s.debug_records;
    c.debug_entries = s.debug_entries;
    c.debug_dropped = s.debug_dropped;
    return writeStruct(c, out);
  });
}
