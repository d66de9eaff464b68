// SPDX-License-Identifier: MIT
// jitprov_node.node: V8's machine code mirrored into jitprov, from inside Node.js.
//
//   NODE_OPTIONS=--require=/path/jitprov/node/preload.js [JITPROV_NODE=OPTIONS] node app.js
//
// A native addon (context-aware: loaded again by every worker thread's isolate, each
// getting its own handler) that installs v8::Isolate::SetJitCodeEventHandler with
// kJitCodeEventEnumExisting and maps V8 onto jitprov's model (docs/node.md):
//   - module: a script URL of an isolate (as V8 names it; the script id in the
//     methods' token); V8's builtins and bytecode handlers (code embedded in the node
//     binary, shared by every isolate) in the module "v8-builtins", regexp code in
//     "v8-regexp", anything else in "v8-other";
//   - method: a function, named as V8 names it ("f /app/x.js:3:22", V8's own log's
//     name); keyed by isolate, script and that name;
//   - native version: one code object, its tier from V8's marker in the event's name
//     ('^' Sparkplug, '+' Maglev, '*' TurboFan: host_tier 11, 12, 13, V8's CodeKind,
//     as its own log prints it); CODE_MOVED retires the version at the old address and
//     publishes the same code object at the new one (host_version: the client's serial
//     of the code object, kept through moves).
// V8 never says when code dies ("removal events are not currently issued"). Death is
// inferred: V8 places a new code object (or a moved one) only in memory that no live
// object holds, so every version whose range the new range overlaps is retired; an
// isolate's teardown (a worker's exit) retires all of its code. Bytecode (BYTE_CODE
// events point at bytecode, not at machine code), and JS functions whose code is a
// builtin (no tier marker) are counted, not mirrored.
//
// Threads: the handler runs on the isolate's thread, and CODE_MOVED also on V8's GC
// threads (parallel evacuation), concurrently; every isolate of the process calls the
// same handler. The handler copies what it needs (the name, the script id) into a queue
// (Client::qmu); the client's thread jitprov-publish publishes the queue in its order
// (Client::mu serialises that and the client's map address -> version) every publish=MS
// while events come (hostagent::Publisher), and each rundown, census and isolate teardown first publishes
// what is queued (publish=inline and the jitdump: the handler publishes its own).
// jitprov's registry is safe from any thread. Rundowns run on jitprov's engine thread,
// lock-free.
#include <jitprov/jitprov.h>
#include <jitprov/populate.h>
#include <jitprov/utf8.h>

#include "host_agent.h"
#include "publisher.h"
#include "atomic_file.h"

#include <absl/container/btree_map.h>
#include <node.h>
#include <uv.h>
#include <v8.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <utility>
#include <mutex>
#include <string>
#include <thread>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitprov::node_client {
namespace {

using hostagent::nowNs;

constexpr uint16_t kUnknownKind = 65535;

// What a CODE_ADDED's name says the code is (its tag before ':').
enum class Kind { kJs, kBuiltin, kRegExp, kOther };

struct Isolate;

// Heterogeneous lookup of a std::string key by a string_view (C++20).
struct UrlHash {
  using is_transparent = void;
  size_t operator()(std::string_view v) const noexcept { return std::hash<std::string_view>{}(v); }
};

// One live code object in the registry.
struct Live {
  uint64_t version_id;
  uint64_t method_id;
  uint32_t size;
  uint32_t serial;  // host_version: the code object, through moves
  uint16_t host_tier;
  uint8_t tier;
  Isolate* iso;       // nullptr: shared code (the embedded builtins)
  uint32_t seen = 0;  // the census (Isolate::epoch) that last saw it
};

struct Isolate {
  v8::Isolate* v8 = nullptr;
  uint32_t index = 0;
  bool gone = false;
  bool main = false;  // the main thread's (its cleanup ends the client), not the first loaded
  // V8's embedded builtins (GetEmbeddedCodeRange): a JS function's code there is a
  // builtin's, whatever its name says. Set before the handler; 0: unknown.
  uint64_t embedded_start = 0, embedded_size = 0;
  uint32_t epoch = 0;                 // censuses taken
  std::atomic<uint64_t> full_gcs{0};  // mark-compacts (the GC epilogue); relaxed: a count
  uint64_t full_gcs_at_census = 0;    // isolate's thread only
  uv_timer_t* timer = nullptr;        // the census timer, on the isolate's event loop
  // Script URL ("<anonymous>" for code with none) -> module; looked up by the name's view, without
  // a copy. The last one found first: most code objects come from the script before.
  std::unordered_map<std::string, uint64_t, UrlHash, std::equal_to<>> modules;
  const std::pair<const std::string, uint64_t>* last_module = nullptr;
};

struct Counters {
  uint64_t events = 0, added = 0, shared_js = 0, moves = 0, moves_unknown = 0;
  uint64_t replays = 0, retired_overlap = 0, retired_isolate = 0, refused = 0, errors = 0;
  uint64_t by_kind[4] = {};
  uint64_t by_marker[5] = {};  // ~ ^ + * none
  uint64_t methods = 0, methods_unloaded = 0, modules = 0, isolates = 0, isolates_gone = 0;
  // The census (census=SEC): V8's code enumerated again after a full GC; versions the
  // client holds that it no longer lists are counted (never retired: docs/node.md).
  uint64_t censuses = 0, census_versions = 0, census_absent = 0, census_absent_max = 0, census_absent_last = 0;
  uint64_t census_absent_baseline = 0;  // of census_absent: Sparkplug code (never OSR code)
};

// A code event the handler queued for publication: CODE_ADDED (JIT code) with its name
// in Queue::text and its script id, or CODE_MOVED.
struct Queued {
  v8::Isolate* isolate;
  uint64_t start, to;  // to: kMoved
  int script_id;
  uint32_t size;
  uint32_t text, len;  // kAdded: the name
  enum Kind : uint8_t { kAdded, kMoved } kind;
};
struct Queue {
  std::vector<Queued> events;
  std::string text;
  void clear() {
    events.clear();
    text.clear();
  }
  // Room for a batch, its pages made present by one call each (populatePages) instead of
  // a page fault each as the handler first writes them: 67 faults of 11-16 us on node's
  // main thread in a tsc run (perf record -e page-faults), most in the enumeration at
  // install. A batch held up to 1 163 events and 92 KB of names there; beyond this the
  // buffers grow as before.
  void reserveBatch() {
    events.reserve(2048);
    text.reserve(128 * 1024);
    (void)populatePages(events.data(), events.capacity() * sizeof(Queued));
    (void)populatePages(text.data(), text.capacity());
  }
};

struct Client {
  hostagent::Options opt;
  jitprov_runtime* rt = nullptr;
  jitprov_rundown* rd = nullptr;
  hostagent::PerfMap perfmap;
  uint64_t builtin_module = 0, regexp_module = 0, other_module = 0;
  bool overlap_retire = true;  // death inference; off only for the tests' mutant (infer=off)
  std::mutex mu;               // guards everything below
  // Code address -> the live object there: a B-tree, as the JVM agent's (a node-based
  // std::map's walk took twice the samples there).
  absl::btree_map<uint64_t, Live> live;
  // Method id -> its versions in `live` (and a publication in progress, which pins it):
  // a method with none left is unloaded, so that functions made and dropped by the
  // million (new Function, eval, vm.Script, a worker's regexps) do not fill the registry.
  hostagent::LiveCounts live_per_method;
  std::unordered_map<v8::Isolate*, Isolate*> isolates;
  uint32_t next_serial = 1;
  Counters n;
  std::string first_error;
  std::string name_buf;  // methodOf's NUL-terminated copy of a name
  std::string provider;  // jitprov_trace_provider_status() at the start, for the stats
  hostagent::Hist census_ns;
  // Its own CPU time (stats= only): callbacks, start, its threads (hostagent::OwnCpu).
  hostagent::OwnCpu own;
  uint64_t census_ms = 0;             // census=SEC in ms; 0: off
  std::atomic<bool> finished{false};  // the exit's work begun (finishBegin)

  // The queue: the handler's side (any thread). Lock order: mu, then qmu.
  std::mutex qmu;  // guards this part
  Queue queued;
  hostagent::Publisher publisher;   // its thread; its wake-up state under qmu (deferred())
  uint64_t bytecode = 0, wasm = 0;  // counted, not queued
  // The exit rundown done (finishWork): from here the handler counts V8's events in
  // after_exit and drops them (node's last moments: the last publication is under way).
  std::atomic<bool> closed{false};
  uint64_t after_exit = 0;
  hostagent::Hist add_ns, move_ns;  // the handler's wall time (qmu)
  // The publisher's side (mu).
  Queue publishing;
  // The option publish=MS/EVENTS (publisher.periodMs(), batchEvents(): as run): a batch
  // every MS ms or EVENTS events; MS 0: inline. The defaults as the JVM agent's: a
  // batch's first events cost the most (docs/jvm-agent.md, "Why 250 ms and 1 024 events").
  uint32_t publish_ms = 250;
  size_t publish_batch = 1024;
  hostagent::BatchStats batches;  // the batches published (empty ones not counted)

  // The first isolate's code enumerated at install (its handler's kJitCodeEventEnumExisting
  // returned): a rundown waits for it (prepareRundown). Guarded by start_mu.
  std::mutex start_mu;
  std::condition_variable start_cv;
  bool first_enumerated = false;
};

Client* g_client = nullptr;
enum class Start { kStarted, kRefused, kFailed };  // kRefused: the options, nothing started

// The client's start (guarded by g_start_mu): untried, started, or disabled for good (bad
// options in JITPROV_NODE, a failed start: the process runs untraced). An attach's
// options refused leave it untried: nothing was started, another attach may try again.
enum class State { kUntried, kStarted, kDisabled };
std::mutex g_start_mu;
State g_state = State::kUntried;

void logf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void logf(const char* fmt, ...) {
  if (g_client == nullptr || !g_client->opt.verbose) return;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "jitprov-node: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

// Client::mu held.
void noteError(Client& c, const std::string& what) {
  ++c.n.errors;
  if (c.first_error.empty()) {
    c.first_error = what;
    std::fprintf(stderr, "jitprov-node: %s (further errors are counted in the stats)\n", what.c_str());
  }
}

uint64_t hashKey(const void* iso, int script, std::string_view name, uint64_t salt) {
  uint64_t h = std::hash<std::string_view>{}(name);
  h ^= (reinterpret_cast<uintptr_t>(iso) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  h ^= (uint64_t(uint32_t(script)) * 0xff51afd7ed558ccdull) ^ salt;
  return h == 0 ? 1 : h;
}

// A CODE_ADDED name, "TAG:REST": for JS, REST is MARKER + "fn url:line:col".
struct Parsed {
  Kind kind = Kind::kOther;
  std::string_view tag, rest;
  char marker = 0;  // JS only: '~', '^', '+', '*', or 0 (a builtin's code: no tier)
};

Parsed parse(std::string_view name) {
  Parsed p;
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos) {
    p.rest = name;
    return p;
  }
  p.tag = name.substr(0, colon);
  p.rest = name.substr(colon + 1);
  if (p.tag == "JS" || p.tag == "Eval" || p.tag == "Function" || p.tag == "LazyCompile" || p.tag == "Script") {
    p.kind = Kind::kJs;
    if (!p.rest.empty() && std::strchr("~^+*", p.rest.front()) != nullptr) {
      p.marker = p.rest.front();
      p.rest.remove_prefix(1);
    }
  } else if (p.tag == "Builtin" || p.tag == "BytecodeHandler") {
    p.kind = Kind::kBuiltin;
  } else if (p.tag == "RegExp") {
    p.kind = Kind::kRegExp;
  }
  return p;
}

// V8's CodeKind, as its own log prints it (code-creation's third field).
uint16_t hostTier(const Parsed& p) {
  switch (p.kind) {
    case Kind::kJs:
      return p.marker == '~' ? 10 : p.marker == '^' ? 11 : p.marker == '+' ? 12 : p.marker == '*' ? 13 : kUnknownKind;
    case Kind::kBuiltin:
      return p.tag == "BytecodeHandler" ? 0 : 2;
    case Kind::kRegExp:
      return 3;
    default:
      return kUnknownKind;
  }
}

// jitprov's tier: baseline code (Sparkplug, and interpreter entry copies) is tier0, the
// optimizing compilers' (Maglev, TurboFan) tier1; V8's own kind is in host_tier.
// Builtins, bytecode handlers, regexp code: tier1 (compiled ahead or optimized once).
int tierOf(const Parsed& p) {
  if (p.kind == Kind::kJs) return (p.marker == '~' || p.marker == '^') ? JITPROV_TIER0 : JITPROV_TIER1;
  return JITPROV_TIER1;
}

// The script's URL in "fn url:line:col": the text after the last space, without
// ":line:col" (V8 gives no other name without allocating; a URL with a space in it is
// cut there: docs/node.md). "" for code with no script name (new Function, eval).
std::string_view scriptUrl(std::string_view rest) {
  size_t end = rest.size();
  for (int i = 0; i < 2; ++i) {
    const size_t c = rest.rfind(':', end == 0 ? 0 : end - 1);
    if (c == std::string_view::npos) return {};
    end = c;
  }
  const size_t sp = rest.rfind(' ', end == 0 ? 0 : end - 1);
  const size_t begin = sp == std::string_view::npos ? 0 : sp + 1;
  return begin <= end ? rest.substr(begin, end - begin) : std::string_view{};
}

// Client::mu held.
Isolate* isolateOf(Client& c, v8::Isolate* v8iso) {
  auto it = c.isolates.find(v8iso);
  if (it != c.isolates.end() && !it->second->gone) return it->second;
  // An isolate the client was not installed into (it cannot be: events come only from
  // isolates with the handler), or one whose address a new isolate took: a new one.
  auto* iso = new Isolate();
  iso->v8 = v8iso;
  iso->index = uint32_t(++c.n.isolates);
  c.isolates[v8iso] = iso;
  return iso;
}

// The module of a script URL of an isolate: scripts of one URL share it (every `new
// Function` and eval is a script of its own, with no URL: one module "<anonymous>"
// per isolate, not one per function); the script id is each method's token. Its path:
// the URL, prefixed with "[isolate N] " in isolates after the first.
// Client::mu held.
bool moduleOf(Client& c, Isolate& iso, std::string_view url, uint64_t* out) {
  if (url.empty()) url = "<anonymous>";  // one key, one module, for code with no URL and that name
  if (iso.last_module != nullptr && iso.last_module->first == url) {
    *out = iso.last_module->second;
    return true;
  }
  auto it = iso.modules.find(url);
  if (it == iso.modules.end()) {
    std::string path(url);
    if (!iso.main) path = "[isolate " + std::to_string(iso.index) + "] " + path;
    // V8 writes a lone surrogate of a script's name (vm.Script's filename) as bytes that
    // are not UTF-8, which the registry refuses: U+FFFD instead, as for method names.
    if (std::string clean; jitprov::sanitizeUtf8(path, 64 * 1024, &clean)) path = std::move(clean);
    const int e = jitprov_module_register(c.rt, path.c_str(), 1, out);
    if (e != JITPROV_OK) {
      noteError(c, "register module " + path + ": " + jitprov_strerror(e));
      return false;
    }
    ++c.n.modules;
    it = iso.modules.emplace(std::string(url), *out).first;
  }
  iso.last_module = &*it;  // unordered_map's elements stay where they are until erased
  *out = it->second;
  return true;
}

// The name is NUL-terminated in a buffer kept for the next one (no allocation).
// Client::mu held.
bool methodOf(Client& c, uint64_t module, uint64_t key, const char* ns, std::string_view name, uint32_t token,
              uint64_t* id) {
  if (jitprov_method_find(c.rt, key, id) == JITPROV_OK) return true;
  c.name_buf.assign(name);
  jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
  d.host_key = key;
  d.token = token;
  d.name_space = ns;
  d.name = c.name_buf.c_str();
  d.signature = "";
  d.options = JITPROV_METHOD_SANITIZE_NAMES;
  const int e = jitprov_method_register(c.rt, module, &d, id);
  if (e == JITPROV_OK) ++c.n.methods;
  if (e != JITPROV_OK && e != JITPROV_E_EXISTS) {
    noteError(c, "register method " + c.name_buf + ": " + jitprov_strerror(e));
    return false;
  }
  return true;
}

// One version of `method_id` out of `live` (or a pin let go): the method unloaded with
// its last one. Client::mu held.
void dropLive(Client& c, uint64_t method_id) {
  if (!c.live_per_method.drop(method_id)) return;
  const int e = jitprov_method_unload(c.rt, method_id);
  if (e != JITPROV_OK) noteError(c, std::string("unload a method with no live code: ") + jitprov_strerror(e));
  ++c.n.methods_unloaded;
}

// V8 places code only where no live object is: every version that [start, start+size)
// overlaps is dead, unless it is `keep` (the same method at the same range: a replay).
// Client::mu held.
void retireOverlapped(Client& c, uint64_t start, uint32_t size, uint64_t keep_method) {
  const uint64_t end = start + size;
  auto it = c.live.lower_bound(start);
  if (it != c.live.begin() && std::prev(it)->first + std::prev(it)->second.size > start) --it;
  while (it != c.live.end() && it->first < end) {
    if (it->first == start && it->second.size == size && it->second.method_id == keep_method) {
      ++it;
      continue;
    }
    if (!c.overlap_retire) return;  // the mutant: the stale version stays (publication refused)
    const int e = jitprov_code_retire(c.rt, it->second.version_id);
    if (e != JITPROV_OK) noteError(c, std::string("retire overlapped code: ") + jitprov_strerror(e));
    ++c.n.retired_overlap;
    const uint64_t method = it->second.method_id;
    it = c.live.erase(it);
    dropLive(c, method);
  }
}

// Client::mu held.
void publish(Client& c, Isolate* iso, uint64_t method_id, uint64_t start, uint32_t size, int tier, uint16_t host_tier,
             uint32_t serial) {
  // Pinned: retiring its older code here must not unload it. The pin becomes the new
  // version's count, or is let go (a method that never got a version is unloaded too).
  c.live_per_method.add(method_id);
  retireOverlapped(c, start, size, method_id);
  jitprov_code_desc d = JITPROV_CODE_DESC_INIT;
  d.code_start = start;
  d.code_size = size;
  d.tier = uint32_t(tier);
  d.host_tier = host_tier;
  d.host_version = serial;
  d.flags = JITPROV_CODE_ACTIVATE;
  uint64_t vid = 0;
  int e = jitprov_code_publish(c.rt, method_id, &d, &vid);
  if (e == JITPROV_E_RANGE_OVERLAP) {
    ++c.n.refused;
    if (c.overlap_retire) noteError(c, "code at " + std::to_string(start) + " overlaps live code: refused");
    return dropLive(c, method_id);
  }
  if (e != JITPROV_OK) {
    noteError(c, std::string("publish code: ") + jitprov_strerror(e));
    return dropLive(c, method_id);
  }
  auto [it, inserted] = c.live.emplace(start, Live{vid, method_id, size, serial, host_tier, uint8_t(tier), iso});
  if (!inserted) {
    ++c.n.replays;  // jitprov returned the version it has (the same code enumerated again)
    if (iso != nullptr) it->second.seen = iso->epoch;
    return dropLive(c, method_id);
  }
  if (iso != nullptr) it->second.seen = iso->epoch;
}

// A queued CODE_ADDED. Client::mu held.
void publishAdded(Client& c, const Queue& q, const Queued& ev) {
  const std::string_view name(q.text.data() + ev.text, ev.len);
  Parsed p = parse(name);
  const uint64_t start = ev.start;
  const uint32_t size = ev.size;
  Isolate* iso = isolateOf(c, ev.isolate);
  if (p.kind == Kind::kJs) {
    // A function whose code is a builtin's (CompileLazy, ...): no code of its own. Told
    // by its address: the name's first character is a tier marker only when V8 put one
    // (a function may be named "*"); without the range, by the marker's absence.
    const bool embedded = iso->embedded_size != 0 ? start - iso->embedded_start < iso->embedded_size : p.marker == 0;
    if (embedded) {
      ++c.n.shared_js;
      return;
    }
    if (p.marker == 0) p.marker = '~';  // code of its own with no marker: an interpreter entry's copy
  }
  const int script_id = ev.script_id;
  ++c.n.added;
  ++c.n.by_kind[int(p.kind)];
  if (p.kind == Kind::kJs) ++c.n.by_marker[std::string_view("~^+*").find(p.marker)];
  if (size == 0) return;
  uint64_t module = 0, key = 0, method = 0;
  const char* ns = "";
  switch (p.kind) {
    case Kind::kJs:
      if (!moduleOf(c, *iso, scriptUrl(p.rest), &module)) return retireOverlapped(c, start, size, 0);
      key = hashKey(iso, script_id, p.rest, 0x4a53);
      break;
    case Kind::kBuiltin:  // embedded in the node binary: one copy for every isolate
      module = c.builtin_module;
      key = hashKey(nullptr, 0, name, 0x4255);
      ns = p.tag == "BytecodeHandler" ? "BytecodeHandler" : "Builtin";
      iso = nullptr;
      break;
    case Kind::kRegExp:
      module = c.regexp_module;
      key = hashKey(iso, 0, name, 0x5245);
      ns = "RegExp";
      break;
    default:
      module = c.other_module;
      key = hashKey(iso, 0, name, 0x4f54);
      break;
  }
  // Not registered (counted in errors): not published, but what it overlaps is dead all the same.
  if (!methodOf(c, module, key, ns, p.kind == Kind::kOther ? name : p.rest, uint32_t(script_id), &method))
    return retireOverlapped(c, start, size, 0);
  publish(c, iso, method, start, size, tierOf(p), hostTier(p), c.next_serial++);
}

// A queued CODE_MOVED. Client::mu held.
void publishMoved(Client& c, const Queued& ev) {
  const uint64_t from = ev.start, to = ev.to;
  ++c.n.moves;
  auto it = c.live.find(from);
  if (it == c.live.end()) {
    // Bytecode (not mirrored), or code the client never saw: nothing to republish, but
    // whatever the client has where the object now lives is dead.
    ++c.n.moves_unknown;
    if (ev.size > 0) retireOverlapped(c, to, ev.size, 0);
    return;
  }
  const Live l = it->second;
  c.live.erase(it);
  const int e = jitprov_code_retire(c.rt, l.version_id);
  if (e != JITPROV_OK) noteError(c, std::string("retire moved code: ") + jitprov_strerror(e));
  publish(c, l.iso, l.method_id, to, l.size, l.tier, l.host_tier, l.serial);
  dropLive(c, l.method_id);  // the version at `from`: after, so that the method lives on
}

using hostagent::By;

// Publishes what the handler queued, in its order. Takes Client::mu (then qmu for the
// swap alone: the handler queues on while a batch is published).
void publishQueued(Client& c, By by) {
  std::lock_guard<std::mutex> g(c.mu);
  hostagent::publishBatch(c.qmu, c.queued, c.publishing, c.batches, by, [&c](const Queue& q, const Queued& ev) {
    if (ev.kind == Queued::kAdded)
      publishAdded(c, q, ev);
    else
      publishMoved(c, ev);
  });
}

// At the start of every rundown (jitprov_rundown_config.prepare), on its thread. The
// session's rundown of a client that starts in a running session (`jitprov record -p`, an
// attach into a traced node, a start under `jitprov record`) is requested while the client
// starts, before V8 has enumerated the code that exists (the handler is installed after
// the rundown engine): it waits for that enumeration, so that it holds the node's code
// then, in the lossless rundown channel (it held none: that code came only as method_load
// events of the runtime channel, which drops under a burst). 5 s at most, once.
void prepareRundown(void* client) {
  Client& c = *static_cast<Client*>(client);
  {
    std::unique_lock<std::mutex> l(c.start_mu);
    if (!c.start_cv.wait_for(l, std::chrono::seconds(5), [&c] { return c.first_enumerated; }))
      c.first_enumerated = true;  // not waited for again
  }
  publishQueued(c, By::kPrepare);
}

// The publisher thread's (hostagent::Publisher) view of the queue.
void publishByThread(void* client) { publishQueued(*static_cast<Client*>(client), By::kThread); }
size_t queueCount(void* client) { return static_cast<Client*>(client)->queued.events.size(); }

// Before the handler is installed: the publisher thread, unless the handler publishes
// inline (publish=inline, or the jitdump: its records carry their publication's time,
// which must be the code's for perf to name samples in it).
void startPublisher(Client& c) {
  {
    std::lock_guard<std::mutex> g(c.mu);
    std::lock_guard<std::mutex> q(c.qmu);
    c.queued.reserveBatch();
    c.publishing.reserveBatch();
  }
  (void)c.publisher.start("jitprov-node", &c.qmu, c.opt.jitdump.empty() ? c.publish_ms : 0, c.publish_batch,
                          &publishByThread, &queueCount, &c);
}

// From here the handler publishes its own; the publisher stopped (joined) and what is
// left published.
void stopPublisher(Client& c) {
  c.publisher.stop();
  publishQueued(c, By::kInline);
}

// Counts an event that came after the exit rundown (closed), under qmu; true if so.
bool afterExit(Client& c) {
  if (!c.closed.load(std::memory_order_relaxed)) return false;
  ++c.after_exit;
  return true;
}

void onJitCodeEvent(const v8::JitCodeEvent* ev) {
  Client* c = g_client;
  if (c == nullptr) return;
  // Line info events (about 17 a code object) return here: they are V8's for any
  // handler, and timing them would cost more than they do.
  if (ev->type != v8::JitCodeEvent::CODE_ADDED && ev->type != v8::JitCodeEvent::CODE_MOVED) return;
  // Code that V8 makes after node's 'exit' event (a TurboFan job it finalizes in its
  // teardown) is taken until the exit rundown has run: the rundown holds it, or it is
  // published after the rundown began. After that it is counted (after_exit), dropped.
  if (c->closed.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> g(c->qmu);
    (void)afterExit(*c);
    return;
  }
  const hostagent::OwnCpu::Span cpu(c->own, false);
  const uint64_t t0 = nowNs();
  const bool added = ev->type == v8::JitCodeEvent::CODE_ADDED;
  Queued q{};
  q.isolate = ev->isolate;
  q.start = reinterpret_cast<uintptr_t>(ev->code_start);
  q.size = uint32_t(ev->code_len);
  const std::string_view name(ev->name.str != nullptr ? ev->name.str : "", ev->name.len);
  if (added) {
    if (ev->code_type != v8::JitCodeEvent::JIT_CODE) {
      std::lock_guard<std::mutex> g(c->qmu);
      ++(ev->code_type == v8::JitCodeEvent::BYTE_CODE ? c->bytecode : c->wasm);
      return;
    }
    q.kind = Queued::kAdded;
    // The script id: a field read (no allocation), on the isolate's thread, now.
    const Parsed p = parse(name);
    q.script_id = (p.kind == Kind::kJs && !ev->script.IsEmpty()) ? ev->script->GetId() : -1;
  } else {
    q.kind = Queued::kMoved;
    q.to = reinterpret_cast<uintptr_t>(ev->new_code_start);
  }
  bool inline_publish = false, wake = false;
  {
    std::lock_guard<std::mutex> g(c->qmu);
    if (afterExit(*c)) return;  // closed meanwhile: stopPublisher's drain may have run
    if (added) {
      q.text = uint32_t(c->queued.text.size());
      q.len = uint32_t(name.size());
      c->queued.text.append(name);
    }
    c->queued.events.push_back(q);
    inline_publish = !c->publisher.deferred();
    wake = !inline_publish && c->publisher.mustWake(c->queued.events.size());
    if (!inline_publish) (added ? c->add_ns : c->move_ns).add(nowNs() - t0);
  }
  if (!inline_publish) {
    if (wake) c->publisher.wake();
    return;
  }
  publishQueued(*c, By::kInline);
  std::lock_guard<std::mutex> g(c->qmu);
  (added ? c->add_ns : c->move_ns).add(nowNs() - t0);
}

// A string inside JSON quotes: '"', '\\' and control characters escaped.
std::string jsonSafe(const std::string& v) {
  std::string out;
  for (const char ch : v) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", unsigned(static_cast<unsigned char>(ch)));
      out += b;
    } else {
      out += ch;
    }
  }
  return out;
}

void writeStats(Client& c) {
  if (c.opt.stats.empty()) return;
  std::lock_guard<std::mutex> g(c.mu);
  std::lock_guard<std::mutex> q(c.qmu);
  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(c.rt, &ms);
  tools::AtomicFile file;
  if (!file.open(c.opt.stats)) {
    std::fprintf(stderr, "jitprov-node: write stats %s: %s\n", c.opt.stats.c_str(), file.error().c_str());
    return;
  }
  FILE* f = file.file();
  const Counters& n = c.n;
  std::fprintf(f, "{\n  \"pid\": %d,\n", int(getpid()));
  std::fprintf(f,
               "  \"added\": %" PRIu64 ", \"bytecode\": %" PRIu64 ", \"wasm\": %" PRIu64 ", \"shared_js\": %" PRIu64
               ", \"moves\": %" PRIu64 ", \"moves_unknown\": %" PRIu64 ", \"replays\": %" PRIu64 ",\n",
               n.added, c.bytecode, c.wasm, n.shared_js, n.moves, n.moves_unknown, n.replays);
  std::fprintf(f,
               "  \"retired_overlap\": %" PRIu64 ", \"retired_isolate\": %" PRIu64 ", \"refused\": %" PRIu64
               ", \"errors\": %" PRIu64 ", \"live_versions\": %zu, \"retired\": %" PRIu64 ", \"after_exit\": %" PRIu64
               ",\n",
               n.retired_overlap, n.retired_isolate, n.refused, n.errors, c.live.size(), ms.retired, c.after_exit);
  std::fprintf(f,
               "  \"by_kind\": {\"js\": %" PRIu64 ", \"builtin\": %" PRIu64 ", \"regexp\": %" PRIu64
               ", \"other\": %" PRIu64 "},\n",
               n.by_kind[0], n.by_kind[1], n.by_kind[2], n.by_kind[3]);
  std::fprintf(f,
               "  \"by_marker\": {\"~\": %" PRIu64 ", \"^\": %" PRIu64 ", \"+\": %" PRIu64 ", \"*\": %" PRIu64 "},\n",
               n.by_marker[0], n.by_marker[1], n.by_marker[2], n.by_marker[3]);
  std::fprintf(f,
               "  \"methods\": %" PRIu64 ", \"methods_unloaded\": %" PRIu64 ", \"modules\": %" PRIu64
               ", \"isolates\": %" PRIu64 ", \"isolates_gone\": %" PRIu64 ", \"infer\": %s,\n",
               n.methods, n.methods_unloaded, n.modules, n.isolates, n.isolates_gone,
               c.overlap_retire ? "true" : "false");
  std::fprintf(f,
               "  \"census\": {\"every_ms\": %" PRIu64 ", \"count\": %" PRIu64 ", \"versions\": %" PRIu64
               ", \"absent\": %" PRIu64 ", \"absent_baseline\": %" PRIu64 ", \"absent_max\": %" PRIu64
               ", \"absent_last\": %" PRIu64 "},\n",
               c.census_ms, n.censuses, n.census_versions, n.census_absent, n.census_absent_baseline,
               n.census_absent_max, n.census_absent_last);
  hostagent::histJson(f, "census_time", c.census_ns);
  c.batches.json(f, c.publisher, c.queued.events.size());
  hostagent::histJson(f, "add_callback", c.add_ns);
  hostagent::histJson(f, "move_callback", c.move_ns);
  c.own.json(f);
  hostagent::jitdumpStatsJson(f, c.rt, c.opt);
  std::fprintf(f,
               "  \"rundowns\": %" PRIu64 ", \"perfmap_written\": %" PRIu64 ", \"perfmap_errors\": %" PRIu64
               ", \"provider\": \"%s\"\n}\n",
               c.rd != nullptr ? jitprov_rundown_completed(c.rd) : 0, c.perfmap.written, c.perfmap.errors,
               jsonSafe(c.provider).c_str());
  if (!file.commit())
    std::fprintf(stderr, "jitprov-node: write stats %s: %s\n", c.opt.stats.c_str(), file.error().c_str());
}

// The exit's work: the exit rundown when asked for (the queue first), the last
// publication, the jitdump closed, the stats. On the finishing thread (finishBegin).
void finishWork(Client* c) {
  const uint64_t cpu0 = c->own.on ? hostagent::threadCpuNs() : 0;
  if (c->rd != nullptr) jitprov_rundown_stop(c->rd);  // the exit rundown: the queue first
  {
    // Closed before the last drain, under qmu: every event the handler queued is in it.
    std::lock_guard<std::mutex> g(c->qmu);
    c->closed.store(true, std::memory_order_relaxed);
  }
  stopPublisher(*c);
  if (c->own.on) c->own.exit_ns.store(hostagent::threadCpuNs() - cpu0, std::memory_order_relaxed);
  // The dump is closed before the stats are written, so that they count all of it;
  // code V8 adds after (node's last moments) is not in it, as a dump has no unloads.
  hostagent::closeJitdump("jitprov-node", c->rt, c->opt);
  writeStats(*c);
  if (c->perfmap.errors != 0)
    std::fprintf(stderr, "jitprov-node: perf map: %" PRIu64 " errors, last: %s\n", c->perfmap.errors,
                 c->perfmap.last_error.c_str());
  logf("exit: %" PRIu64 " code objects added, %" PRIu64 " moves, %" PRIu64 " retired by overlap, %" PRIu64
       " with their isolate, %" PRIu64 " rundowns",
       c->n.added, c->n.moves, c->n.retired_overlap, c->n.retired_isolate,
       c->rd != nullptr ? jitprov_rundown_completed(c->rd) : 0);
}

std::mutex g_finish_mu;              // orders finishBegin() and finishEnd() on any thread
std::thread* g_finishing = nullptr;  // the exit's work, from node's 'exit' event to exit()
pid_t g_finishing_pid = 0;           // the process that started it (a forked child has no such thread)

// The process ends: node's 'exit' event (preload.js), or the main environment's cleanup.
// The exit's work runs on a thread of its own (the handler takes V8's events until its
// exit rundown has run: `closed`) while node tears down its environment and isolate
// (4-18 ms after tsc's 'exit' on this machine, 8 ms the median; tsc's exit rundown
// takes 2): finishEnd(), at exit(), waits for it. Once.
void finishBegin() {
  Client* c = g_client;
  if (c == nullptr) return;
  std::lock_guard<std::mutex> g(g_finish_mu);  // before `finished`: finishEnd() finds the thread
  if (c->finished.exchange(true)) return;
  if (c->own.on) c->own.snapshotThreads();  // before the rundown thread ends
  try {
    g_finishing = new std::thread(finishWork, c);
    g_finishing_pid = getpid();
  } catch (const std::exception&) {
    finishWork(c);  // no thread: on this one, as before
  }
}

// At exit() (atexit: every handler runs before the libraries' destructors, lttng-ust's
// included), on whichever thread calls it: the exit's work done.
void finishEnd() {
  finishBegin();
  std::thread* t = nullptr;
  {
    std::lock_guard<std::mutex> g(g_finish_mu);
    t = g_finishing;
    g_finishing = nullptr;
  }
  if (t == nullptr) return;
  // Left alone (and leaked) where joining cannot be: exit() called by the exit's work
  // itself, or a child forked without exec after the 'exit' event (the thread is the
  // parent's).
  if (g_finishing_pid != getpid() || t->get_id() == std::this_thread::get_id()) return;
  t->join();
  delete t;
}

// The GC epilogue: counts the isolate's mark-compacts (any thread; a relaxed count).
void onGcEpilogue(v8::Isolate*, v8::GCType type, v8::GCCallbackFlags, void* data) {
  if (type & v8::kGCTypeMarkSweepCompact) static_cast<Isolate*>(data)->full_gcs.fetch_add(1, std::memory_order_relaxed);
}

// census=SEC: on the isolate's event loop (between JS tasks), after a full GC, V8's
// code is enumerated again (kJitCodeEventEnumExisting: every live code object is
// reported once more, a replay here); versions of this isolate not reported are counted.
// Not retired: V8's enumeration leaves out OSR code and code only a stack still runs.
void onCensusTimer(uv_timer_t* t) {
  auto* iso = static_cast<Isolate*>(t->data);
  Client& c = *g_client;
  const uint64_t gcs = iso->full_gcs.load(std::memory_order_relaxed);
  if (gcs == iso->full_gcs_at_census || c.finished.load(std::memory_order_relaxed)) return;
  iso->full_gcs_at_census = gcs;
  const uint64_t t0 = nowNs();
  publishQueued(c, By::kInline);  // what came before the census is seen by the epoch before
  {
    std::lock_guard<std::mutex> g(c.mu);
    ++iso->epoch;
  }
  v8::HandleScope scope(iso->v8);
  iso->v8->SetJitCodeEventHandler(v8::kJitCodeEventEnumExisting, &onJitCodeEvent);
  publishQueued(c, By::kInline);  // the enumeration's replays mark what V8 listed
  std::lock_guard<std::mutex> g(c.mu);
  uint64_t absent = 0, versions = 0;
  for (const auto& [start, l] : c.live) {
    if (l.iso != iso) continue;
    ++versions;
    if (l.seen != iso->epoch) {
      ++absent;
      if (l.host_tier == 11) ++c.n.census_absent_baseline;
    }
  }
  ++c.n.censuses;
  c.n.census_versions += versions;
  c.n.census_absent += absent;
  c.n.census_absent_last = absent;
  c.n.census_absent_max = std::max(c.n.census_absent_max, absent);
  c.census_ns.add(nowNs() - t0);
  logf("census of isolate %u: %" PRIu64 " of %" PRIu64 " versions not listed by V8 (%.1f ms)", iso->index, absent,
       versions, double(nowNs() - t0) / 1e6);
}

void startCensus(Client& c, Isolate* iso) {
  iso->v8->AddGCEpilogueCallback(&onGcEpilogue, iso, v8::kGCTypeMarkSweepCompact);
  if (c.census_ms == 0) return;
  uv_loop_t* loop = node::GetCurrentEventLoop(iso->v8);
  if (loop == nullptr) return;
  iso->timer = new uv_timer_t;
  uv_timer_init(loop, iso->timer);
  iso->timer->data = iso;
  uv_timer_start(iso->timer, &onCensusTimer, c.census_ms, c.census_ms);
  uv_unref(reinterpret_cast<uv_handle_t*>(iso->timer));  // never keeps the program alive
}

void stopCensus(Isolate* iso) {
  iso->v8->RemoveGCEpilogueCallback(&onGcEpilogue, iso);
  if (iso->timer == nullptr) return;
  uv_timer_stop(iso->timer);
  uv_close(reinterpret_cast<uv_handle_t*>(iso->timer), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  iso->timer = nullptr;
}

// A worker's environment is torn down (on its thread, before its isolate is disposed):
// its handler is removed and all of its code retired (its heap goes with it).
void onIsolateCleanup(void* arg) {
  auto* iso = static_cast<Isolate*>(arg);
  v8::Isolate* v8iso = iso->v8;
  v8iso->SetJitCodeEventHandler(v8::kJitCodeEventDefault, nullptr);
  stopCensus(iso);
  Client& c = *g_client;
  // At the process's exit (node stops its workers after its 'exit' event, finishBegin()
  // ran) the worker's code stays: the exit rundown, under way on the finishing thread,
  // reports it live, as it was at the 'exit' event, whichever thread gets there first.
  if (c.finished.load(std::memory_order_acquire)) return;
  publishQueued(c, By::kInline);  // the isolate's last events, before its code is retired
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.isolates.find(v8iso);
  if (it == c.isolates.end() || it->second != iso) return;
  for (auto l = c.live.begin(); l != c.live.end();) {
    if (l->second.iso != iso) {
      ++l;
      continue;
    }
    const int e = jitprov_code_retire(c.rt, l->second.version_id);
    if (e != JITPROV_OK) noteError(c, std::string("retire an ended isolate's code: ") + jitprov_strerror(e));
    ++c.n.retired_isolate;
    const uint64_t method = l->second.method_id;
    l = c.live.erase(l);
    dropLive(c, method);
  }
  for (const auto& [url, module] : iso->modules) (void)jitprov_module_unload(c.rt, module);
  iso->last_module = nullptr;
  iso->modules.clear();
  iso->gone = true;
  ++c.n.isolates_gone;
  c.isolates.erase(it);  // the Isolate record stays (Live entries of no one point to it)
}

void onMainCleanup(void* arg) {
  stopCensus(static_cast<Isolate*>(arg));
  finishBegin();
}

// The perf map, named as V8's own perf map names code: "*f /app/x.js:3:22", "Builtin:X".
void perfMapSink(void* ctx, const jitprov_sink_record* r) {
  auto* c = static_cast<Client*>(ctx);
  if (r->kind != JITPROV_SINK_VERSION) return hostagent::perfMapSink(&c->perfmap, r);
  std::string name;
  if (r->name_space[0] == '\0') {
    const uint32_t t = r->host_tier;
    name.push_back(t == 10 ? '~' : t == 11 ? '^' : t == 12 ? '+' : t == 13 ? '*' : '?');
    name += r->name;
  } else {
    name = std::string(r->name_space) + ":" + r->name;
  }
  jitprov_sink_record copy = *r;
  copy.module_id = c->perfmap.bare_module;
  copy.name = name.c_str();
  hostagent::perfMapSink(&c->perfmap, &copy);
}

const char kHelp[] =
    "jitprov-node: V8's JIT code mirrored into jitprov (docs/node.md)\n"
    "usage: NODE_OPTIONS=--require=LIBDIR/jitprov/node/preload.js JITPROV_NODE=OPTIONS node app.js\n"
    "OPTIONS, comma-separated:\n";
const char kExtraHelp[] =
    "  census=SEC         every SEC s after a full GC, between JS tasks, enumerate V8's\n"
    "                     code again and count the versions it no longer lists (stats;\n"
    "                     a measurement: nothing is retired for it; default 0: off)\n"
    "  infer=off          for tests only: no death inference (code overlapped by newer\n"
    "                     code stays in the registry, the newer code is refused)\n"
    "  publish=MS[/EVENTS]|inline  the handler queues V8's code events and a thread of\n"
    "                     the client publishes them every MS ms while they come, or once\n"
    "                     EVENTS are queued (0: the period alone), and before each rundown\n"
    "                     (default 250/1024); inline: the handler publishes each one (as\n"
    "                     with jitdump=, which publishes inline)\n";

// Node's lock of the environment (node::per_process::env_var_mutex), which node takes
// around every setenv, unsetenv and getenv of its own (process.env, in any thread): a
// node::Mutex, one uv_mutex_t, exported with node's other symbols for addons. Null when
// this node does not export it as that (its size tells).
uv_mutex_t* nodeEnvMutex() {
  void* sym = dlsym(RTLD_DEFAULT, "_ZN4node11per_process13env_var_mutexE");
  Dl_info info;
  const ElfW(Sym)* entry = nullptr;
  if (sym == nullptr ||
      dladdr1(sym, &info, reinterpret_cast<void**>(const_cast<ElfW(Sym)**>(&entry)), RTLD_DL_SYMENT) == 0 ||
      entry == nullptr || entry->st_size != sizeof(uv_mutex_t))
    return nullptr;
  return static_cast<uv_mutex_t*>(sym);
}

// Node's lock of the environment held from construction to unlock() (or the end); a
// node without it: nothing.
class EnvLock {
 public:
  EnvLock() : mu_(nodeEnvMutex()) {
    if (mu_ != nullptr) uv_mutex_lock(mu_);
  }
  ~EnvLock() { unlock(); }
  bool held() const { return mu_ != nullptr; }
  void unlock() {
    if (mu_ != nullptr) uv_mutex_unlock(mu_);
    mu_ = nullptr;
  }
  EnvLock(const EnvLock&) = delete;
  EnvLock& operator=(const EnvLock&) = delete;

 private:
  uv_mutex_t* mu_;
};

// Parses JITPROV_NODE (or, from `jitprov attach`, `attach_options`), creates the runtime
// and the rundown engine. False: untraced (said).
//
// The start reads the environment (JITPROV_NODE; the runtime's JITPROV_* variables;
// lttng-ust's constructor, which copies it for its threads) and writes it
// (setLttngEnvironment). On the main thread no JavaScript runs meanwhile, but a client
// a worker loads (its execArgv, its env's NODE_OPTIONS) starts on the worker's thread
// while the main thread's JavaScript runs on, and its `process.env.X = ...` (glibc's
// setenv, which may move the array a getenv walks) would race with it. So the start
// holds node's own lock of the environment, which process.env takes, until the runtime
// is created: a program touching process.env meanwhile waits for lttng-ust's
// registration as the loading thread does (docs/node.md, "The start").
Start startClient(const std::string* attach_options) {
  EnvLock env_lock;
  auto* c = new Client();
  const char* env = attach_options != nullptr ? attach_options->c_str() : std::getenv("JITPROV_NODE");
  const std::string why = hostagent::parseOptions(
      env != nullptr ? env : "", &c->opt,
      [c](const std::string& k, const std::string& v, std::string* w) {
        if (k == "census") {
          uint64_t sec = 0;
          if (!hostagent::parseCount(v, &sec) || sec > 86400) {
            *w = "not a number of seconds (0 to 86400)";
            return -1;
          }
          c->census_ms = sec * 1000;
          return 1;
        }
        if (k == "publish") return hostagent::parsePublish(v, &c->publish_ms, &c->publish_batch, w) ? 1 : -1;
        if (k != "infer") return 0;
        if (v != "on" && v != "off") {
          *w = "not on or off";
          return -1;
        }
        c->overlap_retire = v == "on";
        return 1;
      },
      "signal", "node owns SIGUSR1 (its inspector): use session, every:SEC, at:SEC or exit");
  if (why == "help") {
    std::fprintf(stderr, "%s%s%s", kHelp, hostagent::kCommonHelp, kExtraHelp);
    delete c;
    return Start::kRefused;
  }
  if (!why.empty()) {
    std::fprintf(stderr, "jitprov-node: %s (JITPROV_NODE=help lists the options); pid %d runs untraced\n", why.c_str(),
                 int(getpid()));
    delete c;
    return Start::kRefused;
  }
  c->own.on = !c->opt.stats.empty();
  const hostagent::OwnCpu::Span cpu(c->own, true);  // c is not freed from here on
  hostagent::setLttngEnvironment();                 // before the runtime loads lttng-ust
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.code_mode = JITPROV_CODE_HOST;
  cfg.lock_stats = 0;
  int e = jitprov_runtime_create(&cfg, &c->rt);
  const bool env_locked = env_lock.held();  // for the verbose line below
  env_lock.unlock();                        // the environment is read (lttng-ust's constructor ran) and written
  if (e == JITPROV_OK) e = jitprov_module_register(c->rt, "v8-builtins", 0, &c->builtin_module);
  if (e == JITPROV_OK) e = jitprov_module_register(c->rt, "v8-regexp", 0, &c->regexp_module);
  if (e == JITPROV_OK) e = jitprov_module_register(c->rt, "v8-other", 0, &c->other_module);
  if (e != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-node: create the jitprov runtime: %s; pid %d runs untraced\n", jitprov_strerror(e),
                 int(getpid()));
    return Start::kFailed;
  }
  g_client = c;
  c->provider = jitprov_trace_provider_status();
  c->perfmap.bare_module = c->builtin_module;  // perfMapSink above names every record itself
  if (const std::string jd = hostagent::openJitdump(c->rt, c->opt); !jd.empty())
    std::fprintf(stderr, "jitprov-node: jitdump: %s\n", jd.c_str());
  jitprov_rundown_config rc = JITPROV_RUNDOWN_CONFIG_INIT;
  rc.modes = &c->opt.mode;
  rc.n_modes = 1;
  rc.triggers = c->opt.trigger.c_str();
  rc.max_rate = c->opt.rate;
  if (!c->opt.perfmap.empty()) {
    c->perfmap.final_path = c->opt.perfmap + "/perf-" + std::to_string(getpid()) + ".map";
    rc.sink = &perfMapSink;
    rc.sink_ctx = c;
  }
  rc.prepare = &prepareRundown;
  rc.prepare_ctx = c;
  startPublisher(*c);  // before the handler is installed (the first events)
  {
    const hostagent::RundownThreadName named;  // the engine's thread takes it when created
    e = jitprov_rundown_create(c->rt, &rc, &c->rd);
    if (e == JITPROV_OK) e = jitprov_rundown_start(c->rd);
  }
  if (e != JITPROV_OK) std::fprintf(stderr, "jitprov-node: start the rundown engine: %s\n", jitprov_strerror(e));
  std::atexit(finishEnd);  // the exit's work, which preload.js begins at process 'exit', done
  logf("loaded: trigger=%s perfmap=%s rundown=%s infer=%s; provider %s; started %s node's lock of the environment",
       c->opt.trigger.c_str(), c->opt.perfmap.empty() ? "off" : c->perfmap.final_path.c_str(),
       jitprov_rundown_mode_name(c->opt.mode), c->overlap_retire ? "on" : "off", jitprov_trace_provider_status(),
       env_locked ? "under" : "without (not found in this node)");
  return Start::kStarted;
}

// exports.finish(): preload.js calls it from the main thread's process 'exit' event,
// while node still runs (process.exit() included): the exit rundown and the stats begin.
void finishFromJs(const v8::FunctionCallbackInfo<v8::Value>&) { finishBegin(); }

// The addon's init in one context of one isolate (the main thread's, a worker's).
void install(v8::Local<v8::Object> exports, v8::Local<v8::Context> context) {
  v8::Isolate* js = context->GetIsolate();
  v8::Local<v8::Function> fn;
  if (v8::Function::New(context, &finishFromJs).ToLocal(&fn))
    (void)exports->Set(context, v8::String::NewFromUtf8Literal(js, "finish"), fn).FromMaybe(false);
  // `jitprov attach` passes its options in a global of the main context (symbol
  // jitprov.node.options, a string) for the time of its process.dlopen.
  std::string attach_options;
  bool attached = false;
  v8::Local<v8::Value> opt;
  if (context->Global()
          ->Get(context, v8::Symbol::For(js, v8::String::NewFromUtf8Literal(js, "jitprov.node.options")))
          .ToLocal(&opt) &&
      opt->IsString()) {
    attach_options = *v8::String::Utf8Value(js, opt);
    attached = true;
  }
  State state;
  {
    std::lock_guard<std::mutex> g(g_start_mu);
    if (g_state == State::kUntried) {
      const Start st = startClient(attached ? &attach_options : nullptr);
      // The options of an attach refused: untried still, for the next attach's (the addon
      // stays mapped: node cannot unload it). Those of the environment: for good.
      if (st == Start::kStarted)
        g_state = State::kStarted;
      else if (st == Start::kFailed || !attached)
        g_state = State::kDisabled;
    }
    state = g_state;
  }
  const bool started = state == State::kStarted;
  (void)exports->Set(context, v8::String::NewFromUtf8Literal(js, "started"), v8::Boolean::New(js, started))
      .FromMaybe(false);
  (void)exports
      ->Set(context, v8::String::NewFromUtf8Literal(js, "disabled"), v8::Boolean::New(js, state == State::kDisabled))
      .FromMaybe(false);
  if (!started) return;
  Client& c = *g_client;
  v8::Isolate* v8iso = context->GetIsolate();
  Isolate* iso = nullptr;
  {
    std::lock_guard<std::mutex> g(c.mu);
    if (auto it = c.isolates.find(v8iso); it != c.isolates.end()) return;  // another context of it
    iso = isolateOf(c, v8iso);
    // The main thread's: its event loop is libuv's default one (a worker may load the
    // addon first, or alone: its execArgv, its env's NODE_OPTIONS).
    iso->main = node::GetCurrentEventLoop(v8iso) == uv_default_loop();
    const void* blob = nullptr;
    size_t blob_size = 0;
    v8iso->GetEmbeddedCodeRange(&blob, &blob_size);
    iso->embedded_start = reinterpret_cast<uintptr_t>(blob);
    iso->embedded_size = blob != nullptr ? blob_size : 0;
  }
  node::AddEnvironmentCleanupHook(v8iso, iso->main ? &onMainCleanup : &onIsolateCleanup, iso);
  startCensus(c, iso);
  const uint64_t t0 = nowNs();
  // Every code object alive now is enumerated (on this thread) before this returns.
  v8iso->SetJitCodeEventHandler(v8::kJitCodeEventEnumExisting, &onJitCodeEvent);
  logf("isolate %p: handler installed, existing code enumerated in %.1f ms", static_cast<void*>(v8iso),
       double(nowNs() - t0) / 1e6);
  {
    std::lock_guard<std::mutex> g(c.start_mu);
    c.first_enumerated = true;
  }
  c.start_cv.notify_all();
}

}  // namespace
}  // namespace jitprov::node_client

NODE_MODULE_INIT(/* exports, module, context */) {
  (void)module;
  jitprov::node_client::install(exports, context);
}
