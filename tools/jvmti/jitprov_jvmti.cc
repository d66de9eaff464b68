// SPDX-License-Identifier: MIT
// libjitprov-jvmti.so: HotSpot's compiled code mirrored into jitprov, through JVMTI.
//
//   java -agentpath:/path/libjitprov-jvmti.so[=OPTIONS] ...      (OPTIONS: `help`)
//
// One jitprov method per jmethodID (names resolved at its first load), one native
// version per CompiledMethodLoad at HotSpot's own address and size, its comp level in
// host_tier (level 0 -> tier0, 1 and 4 -> tier1, 2 and 3 -> instrumented, OSR ->
// tier1_osr; the level is read from HotSpot's VMStructs: vm_structs.h), retired at
// CompiledMethodUnload; GenerateEvents' replays are idempotent (jitprov's host mode).
// DynamicCodeGenerated blobs (interpreter, stubs) go to a module of their own. Each
// rundown (lock-free, on jitprov's thread) feeds two sinks from one walk: the
// jitprov_rundown LTTng events and /tmp/perf-PID.map (written to a temporary file,
// then renamed).
//
// A host of libjitprov's public C API only. Never installs a signal handler: HotSpot
// owns SIGUSR2 (triggers: session, every:SEC, at:SEC, exit).
//
// Threads: CompiledMethodLoad/Unload arrive on HotSpot's Service Thread, in order;
// GenerateEvents' replays on the thread of VMInit; DynamicCodeGenerated also on compiler
// threads. One mutex serialises the agent's own bookkeeping (address -> version).
#include <jitprov/jitprov.h>

#include "atomic_file.h"
#include "vm_structs.h"

#include <jvmti.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitprov::jvmti {
namespace {

constexpr uint16_t kUnknownLevel = 65535;
constexpr uint64_t kStubKeyBit = uint64_t{1} << 63;  // stub keys have it; jmethodIDs (user pointers) do not

const char kHelp[] =
    "jitprov-jvmti: HotSpot's compiled code in jitprov's lock-free rundown and a perf map\n"
    "usage: java -agentpath:/path/libjitprov-jvmti.so[=OPTION,...] ...\n"
    "options (comma-separated; a trigger list continues after a comma):\n"
    "  help               print this and stop the JVM from starting\n"
    "  trigger=LIST       rundown triggers: session (an lttng session that records\n"
    "                     jitprov_rundown events starts), every:SEC, at:SEC, exit, none\n"
    "                     (default session,exit; no signal: HotSpot owns SIGUSR2)\n"
    "  perfmap=DIR|off    write DIR/perf-PID.map at every rundown (default /tmp)\n"
    "  rundown=MODE       lockfree (default), locked, per-method\n"
    "  rate=N             cap rundown events per second (default 0: unpaced)\n"
    "  stats=FILE         write the agent's counters as JSON at VM death\n"
    "  verbose            log to stderr what the agent found (VMStructs fields, ...)\n"
    "example: -agentpath:/usr/local/lib/x86_64-linux-gnu/libjitprov-jvmti.so=trigger=session,every:30,perfmap=/tmp\n";

struct Options {
  std::string trigger = "session,exit";
  std::string perfmap = "/tmp";  // empty: off
  int mode = JITPROV_RUNDOWN_LOCKFREE;
  uint64_t rate = 0;
  std::string stats;
  bool verbose = false;
};

// A log2 histogram of callback durations, for the stats file.
struct Hist {
  uint64_t count = 0, total_ns = 0, max_ns = 0;
  uint64_t buckets[40] = {};
  void add(uint64_t ns) {
    ++count;
    total_ns += ns;
    max_ns = std::max(max_ns, ns);
    int b = 0;
    while (b < 39 && (uint64_t{1} << b) <= ns) ++b;
    ++buckets[b];
  }
  uint64_t quantile(double q) const {
    uint64_t seen = 0;
    for (int b = 0; b < 40; ++b) {
      seen += buckets[b];
      if (count != 0 && double(seen) >= q * double(count)) return std::min(max_ns, (uint64_t{1} << b) - 1);
    }
    return max_ns;
  }
};

struct PerfMap {
  std::string dir;                  // empty: off
  jitprov::tools::AtomicFile file;  // open between a rundown's BEGIN and END
  bool open = false;
  std::string final_path;
  uint64_t stub_module = 0;
  uint64_t written = 0, lines = 0, errors = 0;
  std::string last_error;
};

struct Agent {
  Options opt;
  jvmtiEnv* jvmti = nullptr;
  jitprov_runtime* rt = nullptr;
  jitprov_rundown* rd = nullptr;
  uint64_t java_module = 0, stub_module = 0;
  VmStructs vm;
  PerfMap perfmap;

  std::mutex mu;  // guards everything below
  struct Live {
    uint64_t version_id, method_id;
    uint32_t size;
    bool stub;
  };
  std::map<uint64_t, Live> live;  // code address -> the live version there
  uint64_t loads = 0, replays = 0, unloads = 0, unknown_unloads = 0, stubs = 0, refused = 0, errors = 0;
  // Live code that a newer load landed on: stubs (HotSpot posts no event when it frees
  // one) and, should HotSpot ever free an nmethod without CompiledMethodUnload, methods.
  uint64_t superseded_stubs = 0, superseded_methods = 0;
  uint64_t methods = 0, name_failures = 0;
  uint64_t tier_by[4] = {0, 0, 0, 0};         // VmStructs::Source
  uint64_t by_level[6] = {0, 0, 0, 0, 0, 0};  // 0-4, 5 = unknown
  uint64_t osr = 0;
  Hist load_ns, unload_ns;
  std::string first_error;
};

Agent* g_agent = nullptr;

uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ULL + uint64_t(ts.tv_nsec);
}

void logf(const char* fmt, ...) {
  if (g_agent == nullptr || !g_agent->opt.verbose) return;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "jitprov-jvmti: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

// Agent::mu held.
void noteError(Agent& a, const std::string& what) {
  ++a.errors;
  if (a.first_error.empty()) {
    a.first_error = what;
    std::fprintf(stderr, "jitprov-jvmti: %s (further errors are counted in the stats)\n", what.c_str());
  }
}

// The Java form of a class signature, as Class.getName() gives it:
// "Ljava/lang/String;" -> "java.lang.String"; a hidden class
// "Ljava/lang/invoke/LambdaForm$MH.0x00007f71;" -> "java.lang.invoke.LambdaForm$MH/0x00007f71"
// (in the internal form '.' only separates a hidden class's suffix). Arrays and
// primitives as they are.
std::string javaClassName(const char* sig) {
  std::string s = sig != nullptr ? sig : "";
  if (s.size() >= 2 && s.front() == 'L' && s.back() == ';') s = s.substr(1, s.size() - 2);
  for (char& ch : s) ch = ch == '/' ? '.' : ch == '.' ? '/' : ch;
  return s;
}

int tierOf(int level, bool osr) {
  if (osr) return JITPROV_TIER1_OSR;
  switch (level) {
    case 0:
      return JITPROV_TIER0;
    case 2:
    case 3:
      return JITPROV_TIER_INSTRUMENTED;
    default:
      return JITPROV_TIER1;  // 1 (C1, final) and 4 (C2); unknown too
  }
}

// The jitprov method of a jmethodID: found by key, or registered with its names.
// Agent::mu held.
bool methodOf(Agent& a, jvmtiEnv* jvmti, jmethodID method, uint64_t* id) {
  const uint64_t key = reinterpret_cast<uintptr_t>(method);
  if (jitprov_method_find(a.rt, key, id) == JITPROV_OK) return true;
  char *name = nullptr, *sig = nullptr, *csig = nullptr;
  jclass klass = nullptr;
  std::string cls = "?", mname = "?", msig = "";
  if (jvmti->GetMethodName(method, &name, &sig, nullptr) == JVMTI_ERROR_NONE) {
    mname = name != nullptr ? name : "?";
    msig = sig != nullptr ? sig : "";
  } else {
    ++a.name_failures;
  }
  if (jvmti->GetMethodDeclaringClass(method, &klass) == JVMTI_ERROR_NONE &&
      jvmti->GetClassSignature(klass, &csig, nullptr) == JVMTI_ERROR_NONE) {
    cls = javaClassName(csig);
  } else {
    ++a.name_failures;
  }
  for (char* p : {name, sig, csig})
    if (p != nullptr) jvmti->Deallocate(reinterpret_cast<unsigned char*>(p));
  jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
  d.host_key = key;
  d.name_space = cls.c_str();
  d.name = mname.c_str();
  d.signature = msig.c_str();
  d.options = JITPROV_METHOD_SANITIZE_NAMES;  // JVM names are modified UTF-8
  const int e = jitprov_method_register(a.rt, a.java_module, &d, id);
  if (e != JITPROV_OK && e != JITPROV_E_EXISTS) {
    noteError(a, std::string("register method ") + cls + "." + mname + ": " + jitprov_strerror(e));
    return false;
  }
  if (e == JITPROV_OK) ++a.methods;
  return true;
}

// HotSpot places new code only in free memory: live code that overlaps it is gone
// (retired here), unless it is the same method at the same range (a replay).
// Agent::mu held.
void retireOverlapped(Agent& a, uint64_t method_id, uint64_t start, uint32_t size) {
  const uint64_t end = start + size;
  auto it = a.live.lower_bound(start);
  if (it != a.live.begin() && std::prev(it)->first + std::prev(it)->second.size > start) --it;
  while (it != a.live.end() && it->first < end) {
    if (it->first == start && it->second.size == size && it->second.method_id == method_id) {
      ++it;
      continue;
    }
    const int e = jitprov_code_retire(a.rt, it->second.version_id);
    if (e != JITPROV_OK) noteError(a, std::string("retire superseded code: ") + jitprov_strerror(e));
    ++(it->second.stub ? a.superseded_stubs : a.superseded_methods);
    it = a.live.erase(it);
  }
}

// Agent::mu held.
void publish(Agent& a, uint64_t method_id, const void* addr, jint size, int tier, uint16_t host_tier,
             bool stub = false) {
  retireOverlapped(a, method_id, reinterpret_cast<uintptr_t>(addr), uint32_t(size));
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  c.code_start = reinterpret_cast<uintptr_t>(addr);
  c.code_size = uint32_t(size);
  c.tier = uint32_t(tier);
  c.host_tier = host_tier;
  uint64_t vid = 0;
  const int e = jitprov_code_publish(a.rt, method_id, &c, &vid);
  if (e == JITPROV_E_RANGE_OVERLAP) {
    ++a.refused;
    noteError(a, "code at " + std::to_string(c.code_start) + " overlaps live code: refused");
    return;
  }
  if (e != JITPROV_OK) {
    noteError(a, std::string("publish code: ") + jitprov_strerror(e));
    return;
  }
  auto [it, inserted] = a.live.emplace(c.code_start, Agent::Live{vid, method_id, c.code_size, stub});
  if (!inserted && it->second.version_id == vid) ++a.replays;  // jitprov returned the version it has
  it->second = Agent::Live{vid, method_id, c.code_size, stub};
}

void JNICALL onCompiledMethodLoad(jvmtiEnv* jvmti, jmethodID method, jint code_size, const void* code_addr, jint,
                                  const jvmtiAddrLocationMap*, const void*) {
  Agent& a = *g_agent;
  const uint64_t t0 = nowNs();
  std::lock_guard<std::mutex> g(a.mu);  // also keeps levelOf() off readHeaps() (VMInit)
  VmStructs::Level lv = a.vm.levelOf(method, code_addr);
  jboolean native = JNI_FALSE;
  if (lv.source == VmStructs::Source::kUnknown && jvmti->IsMethodNative(method, &native) == JVMTI_ERROR_NONE &&
      native) {
    // Compiled code of a native method is its native wrapper: level 0 (method handle
    // intrinsics such as linkToStatic are native too).
    lv.level = 0;
    lv.source = VmStructs::Source::kNative;
  }
  ++a.loads;
  ++a.tier_by[static_cast<int>(lv.source)];
  ++a.by_level[lv.level >= 0 && lv.level <= 4 ? lv.level : 5];
  if (lv.osr) ++a.osr;
  uint64_t id = 0;
  if (lv.source == VmStructs::Source::kUnknown && a.tier_by[int(VmStructs::Source::kUnknown)] <= 5 && a.opt.verbose) {
    char* name = nullptr;
    (void)jvmti->GetMethodName(method, &name, nullptr, nullptr);
    logf("comp level unknown for %s at %p (%d bytes)", name != nullptr ? name : "?", code_addr, int(code_size));
    if (name != nullptr) jvmti->Deallocate(reinterpret_cast<unsigned char*>(name));
  }
  if (code_size > 0 && methodOf(a, jvmti, method, &id))
    publish(a, id, code_addr, code_size, tierOf(lv.level, lv.osr), lv.level >= 0 ? uint16_t(lv.level) : kUnknownLevel);
  a.load_ns.add(nowNs() - t0);
}

void JNICALL onCompiledMethodUnload(jvmtiEnv*, jmethodID, const void* code_addr) {
  // The class may be gone: the jmethodID is not used here (only the address).
  Agent& a = *g_agent;
  const uint64_t t0 = nowNs();
  std::lock_guard<std::mutex> g(a.mu);
  ++a.unloads;
  auto it = a.live.find(reinterpret_cast<uintptr_t>(code_addr));
  if (it == a.live.end() || it->second.stub) {
    ++a.unknown_unloads;  // loaded before the agent saw it (never replayed), or superseded
  } else {
    const int e = jitprov_code_retire(a.rt, it->second.version_id);
    if (e != JITPROV_OK) noteError(a, std::string("retire code: ") + jitprov_strerror(e));
    a.live.erase(it);
  }
  a.unload_ns.add(nowNs() - t0);
}

void JNICALL onDynamicCodeGenerated(jvmtiEnv*, const char* name, const void* address, jint length) {
  Agent& a = *g_agent;
  if (length <= 0 || address == nullptr) return;
  std::lock_guard<std::mutex> g(a.mu);
  ++a.stubs;
  // Keyed by address and name: HotSpot reuses a freed stub's address for other blobs
  // (which then supersede it: retireOverlapped).
  const uint64_t key =
      (reinterpret_cast<uintptr_t>(address) ^ (std::hash<std::string_view>{}(name != nullptr ? name : "") << 1)) |
      kStubKeyBit;
  uint64_t id = 0;
  if (jitprov_method_find(a.rt, key, &id) != JITPROV_OK) {
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    d.host_key = key;
    d.name_space = "hotspot";
    d.name = name != nullptr ? name : "stub";
    d.options = JITPROV_METHOD_SANITIZE_NAMES;
    const int e = jitprov_method_register(a.rt, a.stub_module, &d, &id);
    if (e != JITPROV_OK && e != JITPROV_E_EXISTS)
      return noteError(a, std::string("register stub: ") + jitprov_strerror(e));
  }
  publish(a, id, address, length, JITPROV_TIER0, 0, true);
}

// The perf map sink: one line per live version of every rundown, "START SIZE NAME".
void perfMapSink(void* ctx, const jitprov_sink_record* r) {
  auto& pm = *static_cast<PerfMap*>(ctx);
  switch (r->kind) {
    case JITPROV_SINK_BEGIN:
      // A fresh temporary beside the map (mkstemp: never through a planted symlink).
      pm.open = pm.file.open(pm.final_path);
      if (!pm.open) {
        ++pm.errors;
        pm.last_error = "open " + pm.final_path + ": " + pm.file.error();
      }
      pm.lines = 0;
      break;
    case JITPROV_SINK_VERSION:
      if (!pm.open) break;
      if (r->module_id == pm.stub_module)
        std::fprintf(pm.file.file(), "%" PRIx64 " %x %s\n", r->code_start, r->code_size, r->name);
      else
        std::fprintf(pm.file.file(), "%" PRIx64 " %x %s::%s\n", r->code_start, r->code_size, r->name_space, r->name);
      ++pm.lines;
      break;
    case JITPROV_SINK_END:
      if (!pm.open) break;
      pm.open = false;
      if (!pm.file.commit()) {
        ++pm.errors;
        pm.last_error = "write " + pm.final_path + ": " + pm.file.error();
      } else {
        ++pm.written;
      }
      break;
    default:
      break;
  }
}

void writeStats(Agent& a) {
  if (a.opt.stats.empty()) return;
  std::lock_guard<std::mutex> g(a.mu);
  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(a.rt, &ms);
  jitprov::tools::AtomicFile file;
  if (!file.open(a.opt.stats)) {
    std::fprintf(stderr, "jitprov-jvmti: write stats %s: %s\n", a.opt.stats.c_str(), file.error().c_str());
    return;
  }
  FILE* f = file.file();
  auto hist = [&](const char* name, const Hist& h) {
    std::fprintf(f,
                 "  \"%s\": {\"count\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"p50_ns\": %" PRIu64
                 ", \"p99_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 "},\n",
                 name, h.count, h.total_ns, h.quantile(0.5), h.quantile(0.99), h.max_ns);
  };
  std::fprintf(f, "{\n  \"pid\": %d,\n", int(getpid()));
  std::fprintf(f,
               "  \"loads\": %" PRIu64 ", \"replays\": %" PRIu64 ", \"unloads\": %" PRIu64
               ", \"unknown_unloads\": %" PRIu64 ", \"stubs\": %" PRIu64 ", \"refused\": %" PRIu64
               ", \"errors\": %" PRIu64 ", \"name_failures\": %" PRIu64 ",\n",
               a.loads, a.replays, a.unloads, a.unknown_unloads, a.stubs, a.refused, a.errors, a.name_failures);
  std::fprintf(f,
               "  \"methods\": %" PRIu64 ", \"live_versions\": %zu, \"retired\": %" PRIu64
               ", \"superseded_stubs\": %" PRIu64 ", \"superseded_methods\": %" PRIu64 ",\n",
               a.methods, a.live.size(), ms.retired, a.superseded_stubs, a.superseded_methods);
  std::fprintf(f,
               "  \"tier_by\": {\"method_code\": %" PRIu64 ", \"blob_scan\": %" PRIu64 ", \"native\": %" PRIu64
               ", \"unknown\": %" PRIu64 "},\n",
               a.tier_by[0], a.tier_by[1], a.tier_by[3], a.tier_by[2]);
  std::fprintf(f,
               "  \"by_level\": {\"0\": %" PRIu64 ", \"1\": %" PRIu64 ", \"2\": %" PRIu64 ", \"3\": %" PRIu64
               ", \"4\": %" PRIu64 ", \"unknown\": %" PRIu64 "}, \"osr\": %" PRIu64 ",\n",
               a.by_level[0], a.by_level[1], a.by_level[2], a.by_level[3], a.by_level[4], a.by_level[5], a.osr);
  hist("load_callback", a.load_ns);
  hist("unload_callback", a.unload_ns);
  std::fprintf(f,
               "  \"rundowns\": %" PRIu64 ", \"perfmap_written\": %" PRIu64 ", \"perfmap_errors\": %" PRIu64
               ", \"provider\": \"%s\"\n}\n",
               jitprov_rundown_completed(a.rd), a.perfmap.written, a.perfmap.errors, jitprov_trace_provider_status());
  if (!file.commit())
    std::fprintf(stderr, "jitprov-jvmti: write stats %s: %s\n", a.opt.stats.c_str(), file.error().c_str());
}

void JNICALL onVMInit(jvmtiEnv* jvmti, JNIEnv*, jthread) {
  Agent& a = *g_agent;
  {
    // CompiledMethodLoad events may already arrive (live phase): levelOf() runs under
    // the same mutex.
    std::lock_guard<std::mutex> g(a.mu);
    logf("VMInit: %s", a.vm.readHeaps().c_str());
  }
  // Code compiled before the events were enabled: replayed (idempotent in jitprov).
  if (jvmti->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED) != JVMTI_ERROR_NONE ||
      jvmti->GenerateEvents(JVMTI_EVENT_COMPILED_METHOD_LOAD) != JVMTI_ERROR_NONE) {
    std::lock_guard<std::mutex> g(a.mu);
    noteError(a, "GenerateEvents failed: code compiled before VMInit is missing");
  }
}

void JNICALL onVMDeath(jvmtiEnv*, JNIEnv*) {
  Agent& a = *g_agent;
  jitprov_rundown_stop(a.rd);  // the exit rundown, when asked for
  writeStats(a);
  if (a.perfmap.errors != 0)
    std::fprintf(stderr, "jitprov-jvmti: perf map: %" PRIu64 " errors, last: %s\n", a.perfmap.errors,
                 a.perfmap.last_error.c_str());
  logf("VMDeath: %" PRIu64 " loads (%" PRIu64 " replays), %" PRIu64 " unloads, %" PRIu64 " stubs, %" PRIu64
       " rundowns, perf map written %" PRIu64 " times",
       a.loads, a.replays, a.unloads, a.stubs, jitprov_rundown_completed(a.rd), a.perfmap.written);
}

// "" when `v` is a perfmap= value the rundowns can write to ("off", or a writable
// directory), else why not.
std::string checkPerfMapDir(const std::string& v) {
  if (v.empty()) return "empty (perfmap=off turns the perf map off)";
  if (v == "off") return "";
  struct stat st;
  if (stat(v.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory (the map is written as DIR/perf-PID.map)";
  if (access(v.c_str(), W_OK) != 0) return std::strerror(errno);
  return "";
}

// Parses "k=v,k=v,...": a piece without '=' continues the previous value (trigger=session,every:30).
bool parseOptions(const char* text, Options* o) {
  std::string s = text != nullptr ? text : "";
  std::vector<std::pair<std::string, std::string>> kv;
  size_t pos = 0;
  while (pos <= s.size() && !s.empty()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    const std::string piece = s.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t eq = piece.find('=');
    if (piece == "help") {
      std::fputs(kHelp, stdout);
      return false;
    }
    if (piece == "verbose") {
      o->verbose = true;
    } else if (eq != std::string::npos) {
      kv.emplace_back(piece.substr(0, eq), piece.substr(eq + 1));
    } else if (!kv.empty() && kv.back().first == "trigger" && !piece.empty()) {
      kv.back().second += "," + piece;
    } else if (!piece.empty()) {
      std::fprintf(stderr, "jitprov-jvmti: unknown option '%s' (-agentpath:...=help lists them)\n", piece.c_str());
      return false;
    }
    if (comma >= s.size()) break;
  }
  for (const auto& [k, v] : kv) {
    if (k == "trigger") {
      char why[256];
      if (v.find("signal") != std::string::npos) {
        std::fprintf(stderr,
                     "jitprov-jvmti: trigger=%s: no signal trigger, HotSpot owns SIGUSR2 (session, every:SEC, "
                     "at:SEC, exit)\n",
                     v.c_str());
        return false;
      }
      if (jitprov_rundown_triggers_check(v.c_str(), why, sizeof why) != JITPROV_OK) {
        std::fprintf(stderr, "jitprov-jvmti: trigger=%s: %s\n", v.c_str(), why);
        return false;
      }
      o->trigger = v;
    } else if (k == "perfmap") {
      // Checked now: a bad one would fail every rundown's map, quietly, until VM death.
      if (const std::string why = checkPerfMapDir(v); !why.empty()) {
        std::fprintf(stderr, "jitprov-jvmti: perfmap=%s: %s\n", v.c_str(), why.c_str());
        return false;
      }
      o->perfmap = v == "off" ? "" : v;
    } else if (k == "rundown") {
      if (jitprov_rundown_mode_parse(v.c_str(), &o->mode) != JITPROV_OK) {
        std::fprintf(stderr, "jitprov-jvmti: rundown=%s: not one of lockfree, locked, per-method\n", v.c_str());
        return false;
      }
    } else if (k == "rate") {
      char* end = nullptr;
      errno = 0;
      const unsigned long long r = std::strtoull(v.c_str(), &end, 10);
      // Digits only: strtoull takes "-1" (as ULLONG_MAX: unlimited), spaces and '+' too.
      if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || *end != '\0' || errno != 0) {
        std::fprintf(stderr, "jitprov-jvmti: rate=%s: not a number of events per second (0 to %llu)\n", v.c_str(),
                     ULLONG_MAX);
        return false;
      }
      o->rate = r;
    } else if (k == "stats") {
      // Checked now, not at VM death: never a device, a directory or a symlink.
      if (const std::string why = jitprov::tools::checkOutputPath(v); !why.empty()) {
        std::fprintf(stderr, "jitprov-jvmti: stats=%s: %s\n", v.c_str(), why.c_str());
        return false;
      }
      o->stats = v;
    } else {
      std::fprintf(stderr, "jitprov-jvmti: unknown option '%s' (-agentpath:...=help lists them)\n", k.c_str());
      return false;
    }
  }
  return true;
}

jint start(JavaVM* vm, const char* options) {
  auto* a = new Agent();
  if (!parseOptions(options, &a->opt)) {
    delete a;
    return JNI_ERR;
  }
  g_agent = a;
  if (vm->GetEnv(reinterpret_cast<void**>(&a->jvmti), JVMTI_VERSION_1_2) != JNI_OK) {
    std::fprintf(stderr, "jitprov-jvmti: this JVM offers no JVMTI 1.2 environment\n");
    return JNI_ERR;
  }
  jvmtiEnv* jvmti = a->jvmti;
  jvmtiCapabilities caps{};
  caps.can_generate_compiled_method_load_events = 1;
  if (jvmti->AddCapabilities(&caps) != JVMTI_ERROR_NONE) {
    std::fprintf(stderr, "jitprov-jvmti: JVMTI refuses can_generate_compiled_method_load_events\n");
    return JNI_ERR;
  }
  logf("%s", a->vm.init(reinterpret_cast<const void*>(jvmti->functions->GetMethodName)).c_str());
  if (!a->vm.usable()) logf("comp levels will be unknown (host_tier 65535): VMStructs fields missing");

  // Rundown events go to a channel that may block (docs/tracing.md): only jitprov's rundown
  // thread emits there. Before the runtime loads lttng-ust.
  setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.code_mode = JITPROV_CODE_HOST;
  int e = jitprov_runtime_create(&cfg, &a->rt);
  if (e == JITPROV_OK) e = jitprov_module_register(a->rt, "java", 0, &a->java_module);
  if (e == JITPROV_OK) e = jitprov_module_register(a->rt, "hotspot-stubs", 0, &a->stub_module);
  if (e != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-jvmti: create the jitprov runtime: %s\n", jitprov_strerror(e));
    return JNI_ERR;
  }
  logf("tracing provider: %s", jitprov_trace_provider_status());
  jitprov_rundown_config rc = JITPROV_RUNDOWN_CONFIG_INIT;
  rc.modes = &a->opt.mode;
  rc.n_modes = 1;
  rc.triggers = a->opt.trigger.c_str();
  rc.max_rate = a->opt.rate;
  if (!a->opt.perfmap.empty()) {
    a->perfmap.dir = a->opt.perfmap;
    a->perfmap.final_path = a->opt.perfmap + "/perf-" + std::to_string(getpid()) + ".map";
    a->perfmap.stub_module = a->stub_module;
    rc.sink = &perfMapSink;
    rc.sink_ctx = &a->perfmap;
  }
  e = jitprov_rundown_create(a->rt, &rc, &a->rd);
  if (e == JITPROV_OK) e = jitprov_rundown_start(a->rd);
  if (e != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-jvmti: start the rundown engine: %s\n", jitprov_strerror(e));
    return JNI_ERR;
  }

  jvmtiEventCallbacks cb{};
  cb.CompiledMethodLoad = &onCompiledMethodLoad;
  cb.CompiledMethodUnload = &onCompiledMethodUnload;
  cb.DynamicCodeGenerated = &onDynamicCodeGenerated;
  cb.VMInit = &onVMInit;
  cb.VMDeath = &onVMDeath;
  if (jvmti->SetEventCallbacks(&cb, sizeof cb) != JVMTI_ERROR_NONE) {
    std::fprintf(stderr, "jitprov-jvmti: SetEventCallbacks failed\n");
    return JNI_ERR;
  }
  for (jvmtiEvent ev : {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                        JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH}) {
    if (jvmti->SetEventNotificationMode(JVMTI_ENABLE, ev, nullptr) != JVMTI_ERROR_NONE) {
      std::fprintf(stderr, "jitprov-jvmti: enable JVMTI event %d failed\n", int(ev));
      return JNI_ERR;
    }
  }
  logf("loaded: trigger=%s perfmap=%s rundown=%s", a->opt.trigger.c_str(),
       a->opt.perfmap.empty() ? "off" : a->perfmap.final_path.c_str(), jitprov_rundown_mode_name(a->opt.mode));
  return JNI_OK;
}

}  // namespace
}  // namespace jitprov::jvmti

extern "C" {
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) { return jitprov::jvmti::start(vm, options); }
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM*, char*, void*) {
  std::fprintf(stderr, "jitprov-jvmti: attaching to a running JVM is not supported: start it with -agentpath\n");
  return JNI_ERR;
}
JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {
  // The JVM is going away; the rundown thread was stopped at VMDeath. The runtime is
  // left to the process exit (late callbacks may still be on their way).
  if (jitprov::jvmti::g_agent != nullptr) jitprov_rundown_destroy(jitprov::jvmti::g_agent->rd);
}
}
