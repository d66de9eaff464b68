// SPDX-License-Identifier: MIT
// libjitprov-dotnet.so: a CoreCLR profiler that mirrors the app's JIT'd code into
// jitprov (mirror.h). CoreCLR loads it from the environment alone:
//   CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={JITPROV_DOTNET_CLSID}
//   CORECLR_PROFILER_PATH=/path/libjitprov-dotnet.so [JITPROV_DOTNET=OPTIONS]
// It enables no profiler callback: at Initialize it starts an EventPipe session of its
// own, which CoreCLR delivers synchronously, on the thread that raises each event, to
// EventPipeEventDelivered (nothing buffered, nothing lost to a full buffer). The COM
// objects are plain structs whose first member is a vtable of this file's functions.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "clr_abi.h"
#include "atomic_file.h"
#include "catchup.h"
#include "client_hresults.h"
#include "clr_events.h"
#include "mirror.h"

namespace jitprov::dotnet {
namespace {

// {6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}: the client's class id (docs/dotnet.md).
constexpr Guid kClsid{0x6A3F8F27, 0x5C5E, 0x4D0B, {0x9A, 0x5C, 0x0F, 0x3E, 0x1B, 0x2C, 0x7D, 0x41}};

constexpr char kHelp[] =
    "jitprov-dotnet: mirrors a .NET app's JIT'd code into jitprov (a CoreCLR profiler)\n"
    "environment: CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}\n"
    "             CORECLR_PROFILER_PATH=/path/libjitprov-dotnet.so JITPROV_DOTNET=OPTIONS\n"
    "options (comma-separated; a trigger list continues after a comma):\n"
    "  help               print this and exit\n"
    "  mirror=on|off      off: open the same EventPipe session and only count its\n"
    "                     events (what the session alone costs the app; no rundown,\n"
    "                     no perf map; stats= gets the counts) (default on)\n"
    "  toggle=on|off      on, for benchmarks only: the app may stop and restart the\n"
    "                     client's session through jitprov_dotnet_session(0|1)\n"
    "                     (tools/bench/dotnet-cost measures the client so); while it is\n"
    "                     stopped the mirror misses loads and unloads (code unloaded\n"
    "                     then stays in it, and later code at its addresses is refused,\n"
    "                     counted); the stats and a line at exit say how many stops\n"
    "                     there were (default off: the call is refused)\n"
    "  calibrate=NS       busy-waits NS nanoseconds more in every MethodLoadVerbose\n"
    "                     callback: a known cost that tools/bench/dotnet-cost must\n"
    "                     find (default 0)\n"
    "  catchup_delay_ms=N for tests only: an attach's catch-up waits N ms (at most\n"
    "                     60000) between its enumeration and its publications, then\n"
    "                     on until an unload comes after it (at most 5 s\n"
    "                     more), so that unloads land inside it (default 0)\n"
    "  (with stats=, the client also times each callback for the file: two clock reads)\n";

struct Profiler {
  const void* const* vtbl;  // first: the object is its own COM interface
  void* info = nullptr;     // ICorProfilerInfo12
  uint64_t session = 0;
  std::string runtime_version;
  Mirror mirror;
  // mirror=off: the session's events counted, nothing mirrored.
  bool mirror_off = false;
  bool toggle = false;             // toggle=on: jitprov_dotnet_session() may stop the session
  uint64_t calibrate_ns = 0;       // calibrate=NS
  CatchUpTestHooks catchup_hooks;  // catchup_delay_ms=N (tests only)
  // Initialize or InitializeForAttach succeeded, Shutdown not yet called: the client
  // runs (a second start is refused, nothing registered twice), and
  // jitprov_dotnet_session may act.
  std::atomic<bool> ready{false};
  // A start is under way (Initialize or InitializeForAttach); reset by every refusal
  // before the session is up, so that a refused attach can be retried (the object and
  // its library stay: NODELETE, one object for the process).
  std::atomic<bool> started{false};
  // A start failed after jitprov's runtime was created: its threads stopped, it cannot be
  // started again in this process.
  bool spent = false;
  bool attached = false;  // loaded by an attach (InitializeForAttach)
  bool verbose = false;
  std::mutex session_mu;  // guards session against two callers of jitprov_dotnet_session
  std::string stats;
  std::atomic<uint64_t> events{0}, load_events{0}, session_stops{0};
};

ModuleInfo moduleInfo(void* info, uint64_t module) {
  ModuleInfo mi;
  const uint8_t* base = nullptr;
  char16_t name[1024];
  uint32_t len = 0, flags = 0;
  uint64_t assembly = 0;
  const HRESULT hr =
      comCall<HRESULT>(info, kInfoGetModuleInfo2, module, &base, uint32_t(1024), &len, name, &assembly, &flags);
  if (hr != kOk) return mi;
  mi.known = true;
  mi.path = utf16ToUtf8(name, len > 0 && len <= 1024 ? len - 1 : 0);  // len counts the NUL
  mi.collectible = (flags & kModuleFlagCollectible) != 0;
  return mi;
}

std::string runtimeVersion(void* info) {
  uint16_t instance = 0, major = 0, minor = 0, build = 0, qfe = 0;
  uint32_t type = 0, len = 0;
  char16_t text[128];
  if (comCall<HRESULT>(info, kInfoGetRuntimeInformation, &instance, &type, &major, &minor, &build, &qfe, uint32_t(128),
                       &len, text) != kOk)
    return "unknown";
  return utf16ToUtf8(text, len > 0 && len <= 128 ? len - 1 : 0);
}

HRESULT queryInterface(void* self, const Guid* iid, void** out);
uint32_t addRef(void*) { return 1; }  // one object for the life of the process
uint32_t release(void*) { return 1; }
HRESULT ignored(void*) { return kOk; }  // callbacks the client does not enable

// A configuration the client cannot run with: one line says why and that this process
// runs untraced, and Initialize fails, so that CoreCLR detaches the client and the app
// runs on (issue 24: a tracing tool must not take the app down with it). Nothing of the
// client is running yet when it is called.
// An attach's refusals return the client's own HRESULTs (client_hresults.h), which
// CoreCLR hands to `jitprov attach`; a startup load's, E_FAIL.
HRESULT refuse(const std::string& why, bool attached = false, uint32_t code = kHrClientStartFailed) {
  std::fprintf(stderr, "jitprov-dotnet: %s (%s); pid %d runs untraced\n", why.c_str(),
               attached ? "jitprov attach --options help lists the options" : "JITPROV_DOTNET=help lists the options",
               int(getpid()));
  std::fflush(stderr);
  return attached ? HRESULT(code) : kFail;
}

// The client's EventPipe session: the runtime provider's JIT and loader events at
// verbose level (MethodLoadVerbose, MethodUnloadVerbose, ModuleUnload) and
// R2RGetEntryPoint (CompilationDiagnostic), delivered synchronously, no rundown.
bool startSession(Profiler& p) {
  static const char16_t kProvider[] = u"Microsoft-Windows-DotNETRuntime";
  EventPipeProviderConfig cfg{kProvider, kKeywordJit | kKeywordLoader | kKeywordCompilationDiagnostic, kLevelVerbose,
                              nullptr};
  return comCall<HRESULT>(p.info, kInfoEventPipeStartSession, uint32_t(1), &cfg, int32_t(0), &p.session) == kOk;
}

// The mark of a client that runs, for `jitprov attach` (clr_attach.cc): a one-page
// mapping of a memfd named kReadyMark, seen in /proc/PID/maps as
// "/memfd:jitprov-dotnet-ready (deleted)". CoreCLR answers a second attach
// CORPROF_E_PROFILER_ALREADY_ACTIVE without calling the client, whichever profiler holds
// its slot: the mark says it is this client, running (not merely its library mapped,
// which stays after a refused attach). Kept to the process's end.
constexpr char kReadyMark[] = "jitprov-dotnet-ready";
void markReady() {
  const int fd = static_cast<int>(syscall(SYS_memfd_create, kReadyMark, 1u /* MFD_CLOEXEC */));
  if (fd < 0) return;
  if (ftruncate(fd, 4096) == 0) (void)mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
}

HRESULT startOnce(Profiler& p, void* info_unk, const std::string& options, bool attached);

// The client's start, from Initialize (options from JITPROV_DOTNET) or from
// InitializeForAttach (options from the attach's client data, same syntax). A refusal
// before the session is up leaves the client as it found it: a later attach may try
// again (review item 2 of jitprov attach).
HRESULT start(Profiler& p, void* info_unk, const std::string& options, bool attached) {
  if (p.ready || p.started.exchange(true))  // the same library reached twice: never two mirrors
    return refuse("the client runs in this process already", attached, kHrClientAlreadyRunning);
  if (p.spent) {
    p.started = false;
    return refuse("an earlier start failed after jitprov's runtime was created: restart the process to trace it",
                  attached, kHrClientStartFailed);
  }
  const HRESULT hr = startOnce(p, info_unk, options, attached);
  if (hr == kOk) {
    markReady();
  } else {
    p.started = false;
  }
  return hr;
}

HRESULT startOnce(Profiler& p, void* info_unk, const std::string& options, bool attached) {
  p.attached = attached;
  p.mirror_off = false;  // the defaults again: an earlier refused attach may have set them
  p.toggle = false;
  p.calibrate_ns = 0;
  p.catchup_hooks = {};
  hostagent::Options opt;
  auto extra = [&p](const std::string& k, const std::string& v, std::string* why) {
    if (k == "calibrate") {
      if (!hostagent::parseCount(v, &p.calibrate_ns) || p.calibrate_ns > 1000000000) {
        *why = "not a count of nanoseconds up to 1000000000";
        return -1;
      }
      return 1;
    }
    if (k == "catchup_delay_ms") {  // tests only
      uint64_t ms = 0;
      if (!hostagent::parseCount(v, &ms) || ms > 60000) {
        *why = "not a count of milliseconds up to 60000";
        return -1;
      }
      p.catchup_hooks.delay_ms = uint32_t(ms);
      return 1;
    }
    if (k != "mirror" && k != "toggle") return 0;
    if (v != "on" && v != "off") {
      *why = "not on or off";
      return -1;
    }
    if (k == "mirror")
      p.mirror_off = v == "off";
    else
      p.toggle = v == "on";
    return 1;
  };
  const std::string err =
      hostagent::parseOptions(options, &opt, extra, "signal", "no signal trigger (the .NET runtime owns its signals)");
  if (err == "help" && !attached) {
    std::fputs(kHelp, stdout);
    std::fputs(hostagent::kCommonHelp, stdout);
    std::fflush(stdout);
    _exit(0);
  }
  if (err == "help")
    return refuse("help: the options are JITPROV_DOTNET's (docs/dotnet.md)", true, kHrClientBadOptions);
  if (!err.empty()) return refuse(err, attached, kHrClientBadOptions);
  if (p.mirror_off && p.calibrate_ns != 0)
    return refuse("calibrate=: nothing to calibrate with mirror=off", attached, kHrClientBadOptions);
  if (comCall<HRESULT>(info_unk, kSlotQueryInterface, &kIidInfo12, &p.info) != kOk)
    return refuse("this runtime has no ICorProfilerInfo12 (.NET 5 or later is needed)", attached,
                  kHrClientRuntimeTooOld);
  p.runtime_version = runtimeVersion(p.info);
  if (comCall<HRESULT>(p.info, kInfoSetEventMask2, uint32_t(0), kHighMonitorEventPipe) != kOk)
    return refuse("the runtime refused the event mask", attached, kHrClientRuntimeRefused);
  void* info = p.info;
  p.stats = opt.stats;
  p.verbose = opt.verbose;
  // Attached: the catch-up is begun before the mirror starts its rundown engine, whose
  // first rundown (the session's, when one is tracing) then waits for it (prepareRundown).
  if (attached && !p.mirror_off) p.mirror.beginCatchUp();
  if (!p.mirror_off) {
    if (std::string why = p.mirror.start(
            opt, [info](uint64_t m) { return moduleInfo(info, m); },
            [info](uint64_t fid) { return methodModules(info, fid); });
        !why.empty()) {
      p.spent = true;  // jitprov's runtime may exist, half started
      p.mirror.endCatchUp();
      return refuse(why, attached, kHrClientStartFailed);
    }
    // Attached: the code JIT'd so far is enumerated once the session is live
    // (ProfilerAttachComplete); every unload from the session's first event on is
    // remembered meanwhile, so that none is undone by the enumeration, and a collectible
    // context's unload waits in the mirror's gate until the enumeration is resolved, so
    // that nothing enumerated is freed under it (catchup.cc). (Begun above.)
  }
  if (!startSession(p)) {
    if (!p.mirror_off) p.spent = true;
    p.mirror.endCatchUp();                            // the gate open: no catch-up will run
    p.mirror.shutdown(p.runtime_version.c_str(), 0);  // its threads stopped before CoreCLR unloads the client
    return refuse("the runtime refused the EventPipe session", attached, kHrClientRuntimeRefused);
  }
  if (opt.verbose)
    std::fprintf(stderr, "jitprov-dotnet: %s pid %d, runtime %s, provider %s\n", attached ? "attached to" : "loaded in",
                 int(getpid()), p.runtime_version.c_str(), jitprov_trace_provider_status());
  p.ready = true;
  return kOk;
}

HRESULT initialize(void* self, void* info_unk) {
  const char* env = std::getenv("JITPROV_DOTNET");
  return start(*static_cast<Profiler*>(self), info_unk, env != nullptr ? env : "", false);
}

// An attach (`jitprov attach PID`, CoreCLR's diagnostics IPC): on CoreCLR's diagnostics
// server thread; the client data, valid during the call only, are the options. On
// failure CoreCLR unloads the library: it is pinned first, so that nothing of it that
// may still run (a thread of jitprov's, a late callback) runs unmapped code.
HRESULT initializeForAttach(void* self, void* info_unk, const void* data, uint32_t len) {
  Dl_info dl{};
  if (dladdr(reinterpret_cast<const void*>(&initializeForAttach), &dl) != 0 && dl.dli_fname != nullptr)
    (void)dlopen(dl.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  const std::string options(static_cast<const char*>(data), data != nullptr ? len : 0);
  if (options.find('\0') != std::string::npos) return refuse("the options hold a NUL byte", true, kHrClientBadOptions);
  return start(*static_cast<Profiler*>(self), info_unk, options, true);
}

// After InitializeForAttach, on the same thread, before CoreCLR answers the attach: the
// session is live, so every body JIT'd from now on arrives as an event; the ones JIT'd
// before are enumerated and published (catchup.h). Both may report one body: the second
// publication is a replay.
HRESULT profilerAttachComplete(void* self) {
  auto& p = *static_cast<Profiler*>(self);
  if (!p.attached || !p.ready || p.mirror_off) return kOk;
  CatchUpResult r;
  {
    const hostagent::OwnCpu::Span cpu(p.mirror.own(), true);  // the start's, in the own CPU account
    r = catchUp(p.info, p.mirror, p.catchup_hooks);
    p.mirror.endCatchUp();
  }
  if (p.verbose) {
    const Counters& c = p.mirror.counters();
    std::fprintf(stderr,
                 "jitprov-dotnet: caught up in %.1f ms: %" PRIu64 " JIT'd bodies of %" PRIu64
                 " methods enumerated, %" PRIu64 " published, %" PRIu64 " unloaded meanwhile, %" PRIu64
                 " precompiled, %" PRIu64 " errors; resolved in %.1f ms, %" PRIu64
                 " module unloads held, at most %.1f ms\n",
                 double(r.ns) / 1e6, r.elements, r.functions, c.caught.load(), c.caught_unloaded.load(),
                 c.caught_r2r.load(), c.caught_errors.load(), double(r.resolve_ns) / 1e6, c.gate_waits.load(),
                 double(c.gate_wait_max_ns.load()) / 1e6);
  }
  return kOk;
}

// mirror=off: the counts, in the stats file when one is asked for.
void writeEventCounts(const Profiler& p) {
  if (p.stats.empty()) return;
  tools::AtomicFile file;
  if (file.open(p.stats)) {
    std::fprintf(file.file(),
                 "{\"pid\": %d, \"runtime\": \"%s\", \"mirror\": \"off\", \"events\": %" PRIu64
                 ", \"load_events\": %" PRIu64 ", \"session_stops\": %" PRIu64 "}\n",
                 int(getpid()), p.runtime_version.c_str(), p.events.load(), p.load_events.load(),
                 p.session_stops.load());
    if (file.commit()) return;
  }
  std::fprintf(stderr, "jitprov-dotnet: write stats %s: %s\n", p.stats.c_str(), file.error().c_str());
}

HRESULT shutdown(void* self) {
  auto& p = *static_cast<Profiler*>(self);
  {
    std::lock_guard g(p.session_mu);  // no jitprov_dotnet_session acts from now on
    p.ready = false;
  }
  if (const uint64_t stops = p.session_stops.load(); stops != 0)
    std::fprintf(stderr,
                 "jitprov-dotnet: the app stopped the client's session %" PRIu64
                 " times (toggle=on): what ran meanwhile is not mirrored\n",
                 stops);
  if (p.mirror_off)
    writeEventCounts(p);
  else
    p.mirror.shutdown(p.runtime_version.c_str(), p.session_stops.load());
  return kOk;
}

HRESULT eventDelivered(void* self, uintptr_t, uint32_t id, uint32_t version, uint32_t, const uint8_t*, uint32_t len,
                       const uint8_t* data, const Guid*, const Guid*, uintptr_t, uint32_t, uintptr_t*) {
  auto& p = *static_cast<Profiler*>(self);
  if (p.mirror_off) {  // the floor: no clock read, no decoding
    p.events.fetch_add(1, std::memory_order_relaxed);
    if (id == kEvMethodLoadVerbose) p.load_events.fetch_add(1, std::memory_order_relaxed);
    return kOk;
  }
  const hostagent::OwnCpu::Span cpu(p.mirror.own(), false);  // stats= only
  // The callbacks are timed for the stats file only: two clock reads a callback were a
  // tenth of the client's work (0 below: not timed).
  const uint64_t t0 = !p.stats.empty() || p.calibrate_ns != 0 ? hostagent::nowNs() : 0;
  if (p.calibrate_ns != 0 && id == kEvMethodLoadVerbose)  // a known cost, inside the callback's time
    while (hostagent::nowNs() - t0 < p.calibrate_ns) {
    }
  auto& m = p.mirror;
  switch (id) {
    case kEvMethodLoadVerbose:
    case kEvMethodUnloadVerbose: {
      MethodEvent ev;
      if (!decodeMethod(data, len, version, &ev)) return m.badPayload(id), kOk;
      id == kEvMethodLoadVerbose ? m.methodLoad(ev, t0) : m.methodUnload(ev, t0);
      break;
    }
    case kEvModuleUnload: {
      ModuleEvent ev;
      if (!decodeModule(data, len, version, &ev)) return m.badPayload(id), kOk;
      m.moduleUnload(ev);
      break;
    }
    case kEvR2RGetEntryPoint:
      m.r2rEntry();
      break;
    default:
      break;
  }
  return kOk;
}

HRESULT providerCreated(void*, uintptr_t) { return kOk; }

const std::array<const void*, kCallbackSlots> kCallbackVtbl = [] {
  std::array<const void*, kCallbackSlots> v;
  v.fill(reinterpret_cast<const void*>(&ignored));
  v[kSlotQueryInterface] = reinterpret_cast<const void*>(&queryInterface);
  v[kSlotAddRef] = reinterpret_cast<const void*>(&addRef);
  v[kSlotRelease] = reinterpret_cast<const void*>(&release);
  v[kSlotInitialize] = reinterpret_cast<const void*>(&initialize);
  v[kSlotShutdown] = reinterpret_cast<const void*>(&shutdown);
  v[kSlotInitializeForAttach] = reinterpret_cast<const void*>(&initializeForAttach);
  v[kSlotProfilerAttachComplete] = reinterpret_cast<const void*>(&profilerAttachComplete);
  v[kSlotEventPipeEventDelivered] = reinterpret_cast<const void*>(&eventDelivered);
  v[kSlotEventPipeProviderCreated] = reinterpret_cast<const void*>(&providerCreated);
  return v;
}();

Profiler* g_profiler = nullptr;

HRESULT queryInterface(void* self, const Guid* iid, void** out) {
  bool ok = *iid == kIidUnknown;
  for (const Guid& g : kIidCallbacks) ok = ok || *iid == g;
  *out = ok ? self : nullptr;
  return ok ? kOk : kNoInterface;
}

// IClassFactory
HRESULT factoryQi(void* self, const Guid* iid, void** out) {
  const bool ok = *iid == kIidUnknown || *iid == kIidClassFactory;
  *out = ok ? self : nullptr;
  return ok ? kOk : kNoInterface;
}
HRESULT createInstance(void*, void* outer, const Guid* iid, void** out) {
  if (outer != nullptr) return int32_t(0x80040110u);  // CLASS_E_NOAGGREGATION
  if (g_profiler == nullptr) g_profiler = new Profiler{kCallbackVtbl.data()};
  return queryInterface(g_profiler, iid, out);
}
HRESULT lockServer(void*, int32_t) { return kOk; }

const void* const kFactoryVtbl[] = {
    reinterpret_cast<const void*>(&factoryQi),  reinterpret_cast<const void*>(&addRef),
    reinterpret_cast<const void*>(&release),    reinterpret_cast<const void*>(&createInstance),
    reinterpret_cast<const void*>(&lockServer),
};
struct Factory {
  const void* const* vtbl;
} g_factory{kFactoryVtbl};

}  // namespace
}  // namespace jitprov::dotnet

// The one entry point CoreCLR looks up in a profiler library.
extern "C" __attribute__((visibility("default"))) jitprov::dotnet::HRESULT DllGetClassObject(
    const jitprov::dotnet::Guid* clsid, const jitprov::dotnet::Guid* iid, void** out) {
  using namespace jitprov::dotnet;
  if (out == nullptr) return kFail;
  *out = nullptr;
  if (!(*clsid == kClsid)) {
    std::fprintf(stderr, "jitprov-dotnet: CORECLR_PROFILER is not {6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}\n");
    return kClassNotAvailable;
  }
  return factoryQi(&g_factory, iid, out);
}

// Stops (on = 0) or restarts (on = 1) the client's EventPipe session, for an app that
// measures what the client costs it (tools/bench/dotnet-cost; JITPROV_DOTNET=toggle=on).
// 0: done (or already so); -1: the client is not this process's profiler (or the runtime
// shut it down); -2: toggle=on was not given; -3: the runtime refused. Never from inside
// one of the client's callbacks: a session's stop waits for the events being delivered.
extern "C" __attribute__((visibility("default"))) int jitprov_dotnet_session(int on) {
  using namespace jitprov::dotnet;
  Profiler* p = g_profiler;
  if (p == nullptr) return -1;
  std::lock_guard g(p->session_mu);
  if (!p->ready) return -1;
  if (!p->toggle) return -2;
  if (on != 0) {
    if (p->session != 0) return 0;
    return startSession(*p) ? 0 : -3;
  }
  if (p->session == 0) return 0;
  if (comCall<HRESULT>(p->info, kInfoEventPipeStopSession, p->session) != kOk) return -3;
  p->session = 0;
  p->session_stops.fetch_add(1, std::memory_order_relaxed);
  return 0;
}
