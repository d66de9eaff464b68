// SPDX-License-Identifier: MIT
// Defines the tracepoints (dynamic linkage: the probes live in libjitprov-lttng.so).
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "jitprov_rundown_tp.h"
#include "jitprov_runtime_tp.h"

#include "trace.h"

#include "jitprov_sessions.h"
#include "version_record.h"

#include <jitprov/runtime.h>

#include <jitprov/utf8.h>

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace jitprov::trace {

namespace {
std::once_flag g_once;
std::string g_status = "not loaded yet";
jitprov_watch_session_starts_fn g_watch = nullptr;    // set once, inside g_once
jitprov_recording_sessions_fn g_recording = nullptr;  // set once, inside g_once

// Names in the registry are valid UTF-8 without NUL (checked at registration), so only
// length can make a string unfit for an event: cut long ones into a buffer.
const char* fit(std::string_view s, std::string* buf) {
  if (s.size() <= kMaxTraceString) return s.data();  // NUL-terminated in the registry
  sanitizeUtf8(s, kMaxTraceString, buf);
  return buf->c_str();
}

// Whether a record's names all fit an event (kMaxTraceString bytes): nearly always, so
// the common case emits the record as it is (a rundown emits one per version), and the
// rare overlong one goes through withCutNames().
inline bool fits(const VersionRecord& rec) {
  return rec.ns_len <= kMaxTraceString && rec.name_len <= kMaxTraceString && rec.sig_len <= kMaxTraceString;
}

// Calls emit(record) with a copy of `rec` whose names are cut to fit into buffers that
// live until emit returns (lttng-ust copies them into the event inside the call).
template <class Emit>
[[gnu::noinline, gnu::cold]] void withCutNames(const VersionRecord& rec, const Emit& emit) {
  std::string ns, name, sig;
  jitprov_method_record cut = rec.r;
  cut.name_space = fit({rec.r.name_space, rec.ns_len}, &ns);
  cut.name = fit({rec.r.name, rec.name_len}, &name);
  cut.signature = fit({rec.r.signature, rec.sig_len}, &sig);
  emit(cut);
}

// Emits `rec` through emit(const jitprov_method_record&), its names cut when overlong.
template <class Emit>
inline void emitFitting(const VersionRecord& rec, const Emit& emit) {
  if (fits(rec)) [[likely]]
    emit(rec.r);
  else
    withCutNames(rec, emit);
}

uint32_t length32(std::string_view s) { return static_cast<uint32_t>(std::min<size_t>(s.size(), UINT32_MAX)); }
}  // namespace

VersionRecord recordOf(uint32_t instance, const VersionView& v) {
  VersionRecord rec;
  jitprov_method_record& r = rec.r;
  r.runtime_instance = instance;
  r.method_id = v.method_id;
  r.version_id = v.version_id;
  r.code_start = v.code_start;
  r.module_id = v.module_id;
  r.rejit_id = v.rejit_id;
  r.code_size = v.code_size;
  r.method_token = v.method_token;
  r.method_flags = v.method_flags;
  r.tier = static_cast<uint8_t>(v.tier);
  r.host_tier = v.host_tier;
  r.host_version = v.host_version;
  r.publish_seq = v.publish_seq;
  r.name_space = v.name_space.data();  // NUL-terminated in the registry
  r.name = v.name.data();
  r.signature = v.signature.data();
  rec.ns_len = length32(v.name_space);
  rec.name_len = length32(v.name);
  rec.sig_len = length32(v.signature);
  return rec;
}

// The directory of the object this code is linked into: libjitprov.so.1 for hosts
// (installed, the provider is in its jitprov/ subdirectory; in the build tree, beside
// it), or the executable for programs linked with the static core.
std::string ownDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ownDirectory), &info) == 0 || info.dli_fname == nullptr) return {};
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// dlopen()s `path` and checks that it is this provider (its ABI symbol); on failure
// appends why to *why.
bool openProvider(const char* path, std::string* why) {
  void* h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    const char* err = dlerror();
    *why += std::string(why->empty() ? "" : "; ") + (err != nullptr ? err : path);
    return false;
  }
  const auto* abi = static_cast<const int*>(dlsym(h, "jitprov_lttng_provider_abi"));
  if (abi == nullptr) {
    dlclose(h);
    *why += std::string(why->empty() ? "" : "; ") + path + " is not the jitprov LTTng provider";
    return false;
  }
  if (*abi != JITPROV_LTTNG_PROVIDER_ABI) {
    const std::string have = std::to_string(*abi);
    dlclose(h);
    *why += std::string(why->empty() ? "" : "; ") + path + " is a jitprov LTTng provider of another version (ABI " +
            have + ", this library needs " + std::to_string(JITPROV_LTTNG_PROVIDER_ABI) + ")";
    return false;
  }
  g_watch = reinterpret_cast<jitprov_watch_session_starts_fn>(dlsym(h, JITPROV_WATCH_SESSION_STARTS));
  g_recording = reinterpret_cast<jitprov_recording_sessions_fn>(dlsym(h, JITPROV_RECORDING_SESSIONS));
  return true;
}

bool loadProvider() {
  std::call_once(g_once, [] {
    std::string tried;
    const char* env = std::getenv("JITPROV_PROVIDER");
    if (env != nullptr && *env != '\0') {
      // The user named one: that one or none (no silent fall-back elsewhere).
      if (openProvider(env, &tried)) {
        g_status = std::string("loaded ") + env;
        tried.clear();
      } else {
        tried = "$JITPROV_PROVIDER: " + tried;
      }
    } else {
      // Installed, in the library's private directory (LIBDIR/jitprov, with the agents:
      // a plugin without a SONAME stays out of the linker's path); in a build tree,
      // beside the library; then the library search path.
      const std::string dir = ownDirectory();
      const std::string installed = dir.empty() ? std::string() : dir + "/jitprov/libjitprov-lttng.so";
      const std::string beside = dir.empty() ? std::string() : dir + "/libjitprov-lttng.so";
      for (const char* path : {installed.c_str(), beside.c_str(), "libjitprov-lttng.so"}) {
        if (*path == '\0') continue;
        if (openProvider(path, &tried)) {
          g_status = std::string("loaded ") + path;
          tried.clear();
          break;
        }
      }
    }
    if (!tried.empty()) g_status = "not loaded, running untraced: " + tried;
    const char* dbg = std::getenv("JITPROV_TRACE_DEBUG");
    if (dbg != nullptr && *dbg == '1') std::fprintf(stderr, "jitprov: tracing provider %s\n", g_status.c_str());
  });
  return g_status.rfind("loaded ", 0) == 0;
}

std::string providerStatus() {
  loadProvider();
  return g_status;
}

void moduleLoad(uint32_t instance, ModuleId id, const char* path) {
  lttng_ust_tracepoint(jitprov_runtime, module_load, instance, id, path);
}
void moduleUnload(uint32_t instance, ModuleId id, const char* path) {
  lttng_ust_tracepoint(jitprov_runtime, module_unload, instance, id, path);
}
void methodLoad(uint32_t instance, const VersionView& v) {
  if (lttng_ust_tracepoint_enabled(jitprov_runtime, method_load)) {
    emitFitting(recordOf(instance, v),
                [](const jitprov_method_record& rec) { lttng_ust_do_tracepoint(jitprov_runtime, method_load, &rec); });
  }
}
void methodUnload(uint32_t instance, MethodId method, ModuleId module, uint64_t unload_seq) {
  lttng_ust_tracepoint(jitprov_runtime, method_unload, instance, method, module, unload_seq);
}
void codeUnload(uint32_t instance, MethodId method, VersionId version, uint64_t code_start, uint32_t code_size,
                uint64_t retire_seq) {
  lttng_ust_tracepoint(jitprov_runtime, code_unload, instance, method, version, code_start, code_size, retire_seq);
}
void rejitRequest(uint32_t instance, MethodId method, RejitId rejit) {
  lttng_ust_tracepoint(jitprov_runtime, rejit_request, instance, method, rejit);
}

bool rundownEventsEnabled() noexcept { return lttng_ust_tracepoint_enabled(jitprov_rundown, rundown_begin); }

std::vector<Session> recordingSessions() {
  if (!loadProvider() || g_recording == nullptr) return {};
  // The runtime's own tracepoint definitions (this translation unit defines them).
  lttng_ust_tracepoint* const tps[] = {&lttng_ust_tracepoint_jitprov_rundown___rundown_begin,
                                       &lttng_ust_tracepoint_jitprov_rundown___method};
  std::vector<Session> out(4);
  for (;;) {
    const size_t n = g_recording(tps, std::size(tps), out.data(), out.size());
    if (n <= out.size()) {
      out.resize(n);
      return out;
    }
    out.resize(n);  // more sessions than room: ask again
  }
}

namespace {
// The watchers of session starts. Never destroyed: lttng-ust may call in while the
// process exits.
struct Watchers {
  std::mutex mu;
  uint64_t next = 1;
  struct W {
    uint64_t token;
    void (*fn)(void*, Session);
    void* ctx;
  };
  std::vector<W> list;
};
Watchers& watchers() {
  static Watchers* w = [] {
    auto* n = new Watchers;
    // Held across fork(), so that a child never inherits it locked (an engine starting
    // or stopping on another thread); lttng-ust's own fork handling already keeps its
    // listener, the caller of onSessionStart(), out of the way.
    pthread_atfork([] { watchers().mu.lock(); }, [] { watchers().mu.unlock(); }, [] { watchers().mu.unlock(); });
    return n;
  }();
  return *w;
}
void onSessionStart(void*, void* session) {
  Watchers& w = watchers();
  std::lock_guard<std::mutex> g(w.mu);
  for (const auto& x : w.list) x.fn(x.ctx, session);
}
std::once_flag g_watch_once;
int g_watch_rc = -1;
}  // namespace

uint64_t watchSessionStarts(void (*fn)(void* ctx, Session session), void* ctx) {
  if (!loadProvider() || g_watch == nullptr) return 0;
  std::call_once(g_watch_once, [] {
    g_watch_rc = g_watch(&onSessionStart, nullptr);
    if (g_watch_rc != 0)
      std::fprintf(stderr,
                   "jitprov: lttng-ust refused the session-start probe (%d): the session trigger "
                   "falls back to watching whether rundown events are enabled\n",
                   g_watch_rc);
  });
  if (g_watch_rc != 0) return 0;
  Watchers& w = watchers();
  std::lock_guard<std::mutex> g(w.mu);
  const uint64_t token = w.next++;
  w.list.push_back({token, fn, ctx});
  return token;
}

void unwatchSessionStarts(uint64_t token) {
  if (token == 0) return;
  Watchers& w = watchers();
  std::lock_guard<std::mutex> g(w.mu);
  std::erase_if(w.list, [&](const Watchers::W& x) { return x.token == token; });
}

namespace {
lttng_ust_session* ust(Session s) { return static_cast<lttng_ust_session*>(s); }
}  // namespace

void rundownBegin(const Rundown& r, RundownMode mode, RundownTrigger trigger, uint64_t method_count,
                  uint64_t publish_seq) {
  for (Session s : r.to)
    lttng_ust_tracepoint(jitprov_rundown, rundown_begin, ust(s), r.instance, r.id, static_cast<uint8_t>(mode),
                         static_cast<uint8_t>(trigger), method_count, publish_seq);
}
void rundownModule(const Rundown& r, const ModuleView& m) {
  if (lttng_ust_tracepoint_enabled(jitprov_rundown, module)) {
    std::string buf;
    const char* path = fit(m.path, &buf);
    for (Session s : r.to)
      lttng_ust_do_tracepoint(jitprov_rundown, module, ust(s), r.instance, r.id, m.module_id, path);
  }
}
namespace {
// Into every session of the rundown.
inline void emitRundown(const Rundown& r, const VersionRecord& rec) {
  emitFitting(rec, [&r](const jitprov_method_record& cut) {
    for (Session s : r.to) lttng_ust_do_tracepoint(jitprov_rundown, method, ust(s), r.id, &cut);
  });
}
}  // namespace
void rundownMethod(const Rundown& r, const VersionView& v) {
  if (lttng_ust_tracepoint_enabled(jitprov_rundown, method)) emitRundown(r, recordOf(r.instance, v));
}
void rundownRecord(const Rundown& r, const VersionRecord& rec) {
  if (lttng_ust_tracepoint_enabled(jitprov_rundown, method)) emitRundown(r, rec);
}
void rundownEnd(const Rundown& r, const RundownEnd& e) {
  const jitprov_rundown_end_record rec{r.instance,         r.id,      e.modules,   e.methods,
                                       e.versions,         e.skipped, e.retried,   e.duration_ns,
                                       e.publish_seq,      e.end_seq, e.caught_up, uint8_t(e.cut_short ? 1 : 0),
                                       e.caught_up_methods};
  for (Session s : r.to) lttng_ust_tracepoint(jitprov_rundown, rundown_end, ust(s), &rec);
}

}  // namespace jitprov::trace

namespace jitprov {
std::string traceProviderStatus() { return trace::providerStatus(); }
}  // namespace jitprov
