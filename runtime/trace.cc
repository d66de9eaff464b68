// Defines the tracepoints (dynamic linkage: the probes live in libjitprov-lttng.so).
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "jitprov_rundown_tp.h"
#include "jitprov_runtime_tp.h"

#include "trace.h"

#include <jitprov/runtime.h>

#include <jitprov/utf8.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace jitprov::trace {

namespace {
std::once_flag g_once;
std::string g_status = "not loaded yet";

// Names in the registry are valid UTF-8 without NUL (checked at registration), so only
// length can make a string unfit for an event: cut long ones into a per-thread buffer.
const char* fit(std::string_view s, std::string* buf) {
  if (s.size() <= kMaxTraceString) return s.data();  // NUL-terminated in the registry
  sanitizeUtf8(s, kMaxTraceString, buf);
  return buf->c_str();
}

struct Record {
  jitprov_method_record r;
  std::string ns, name, sig;  // only used for overlong strings
  explicit Record(const VersionView& v) {
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
    r.name_space = fit(v.name_space, &ns);
    r.name = fit(v.name, &name);
    r.signature = fit(v.signature, &sig);
  }
};
}  // namespace

// The directory of the object this code is linked into: libjitprov.so.0 for hosts
// (installed or in the build tree, the provider sits beside it), or the executable
// for programs linked with the static core.
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
  if (dlsym(h, "jitprov_lttng_provider_abi") == nullptr) {
    dlclose(h);
    *why += std::string(why->empty() ? "" : "; ") + path + " is not the jitprov LTTng provider";
    return false;
  }
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
      // Beside the library, then the library search path.
      const std::string dir = ownDirectory();
      const std::string beside = dir.empty() ? std::string() : dir + "/libjitprov-lttng.so";
      for (const char* path : {beside.c_str(), "libjitprov-lttng.so"}) {
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

void moduleLoad(ModuleId id, const char* path) { lttng_ust_tracepoint(jitprov_runtime, module_load, id, path); }
void moduleUnload(ModuleId id, const char* path) {
  lttng_ust_tracepoint(jitprov_runtime, module_unload, id, path);
}
void methodLoad(const VersionView& v) {
  if (lttng_ust_tracepoint_enabled(jitprov_runtime, method_load)) {
    Record rec(v);
    lttng_ust_do_tracepoint(jitprov_runtime, method_load, &rec.r);
  }
}
void methodUnload(MethodId method, ModuleId module) {
  lttng_ust_tracepoint(jitprov_runtime, method_unload, method, module);
}
void codeUnload(MethodId method, VersionId version, uint64_t code_start, uint32_t code_size) {
  lttng_ust_tracepoint(jitprov_runtime, code_unload, method, version, code_start, code_size);
}
void rejitRequest(MethodId method, RejitId rejit) {
  lttng_ust_tracepoint(jitprov_runtime, rejit_request, method, rejit);
}

bool rundownEventsEnabled() noexcept { return lttng_ust_tracepoint_enabled(jitprov_rundown, rundown_begin); }

void rundownBegin(uint64_t id, RundownMode mode, RundownTrigger trigger, uint64_t method_count) {
  lttng_ust_tracepoint(jitprov_rundown, rundown_begin, id, static_cast<uint8_t>(mode),
                       static_cast<uint8_t>(trigger), method_count);
}
void rundownModule(uint64_t id, const ModuleView& m) {
  if (lttng_ust_tracepoint_enabled(jitprov_rundown, module)) {
    std::string buf;
    lttng_ust_do_tracepoint(jitprov_rundown, module, id, m.module_id, fit(m.path, &buf));
  }
}
void rundownMethod(uint64_t id, const VersionView& v) {
  if (lttng_ust_tracepoint_enabled(jitprov_rundown, method)) {
    Record rec(v);
    lttng_ust_do_tracepoint(jitprov_rundown, method, id, &rec.r);
  }
}
void rundownEnd(uint64_t id, uint64_t modules, uint64_t methods, uint64_t versions, uint64_t skipped,
                uint64_t retried, uint64_t duration_ns) {
  lttng_ust_tracepoint(jitprov_rundown, rundown_end, id, modules, methods, versions, skipped, retried,
                       duration_ns);
}

}  // namespace jitprov::trace

namespace jitprov {
std::string traceProviderStatus() { return trace::providerStatus(); }
}  // namespace jitprov
