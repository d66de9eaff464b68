// SPDX-License-Identifier: MIT
// libjitprov-jvmti.so: HotSpot's compiled code mirrored into jitprov, through JVMTI.
//
//   java -agentpath:/path/libjitprov-jvmti.so[=OPTIONS] ...      (OPTIONS: `help`)
//   jitprov attach PID [--options OPTIONS]       (a running JVM: Agent_OnAttach)
//
// One jitprov method per jmethodID (names resolved at its first load), one native
// version per CompiledMethodLoad at HotSpot's own address and size, its comp level in
// host_tier (level 0 -> tier0, 1 and 4 -> tier1, 2 and 3 -> instrumented, OSR ->
// tier1_osr; the level is read from HotSpot's VMStructs: vm_structs.h), retired at
// CompiledMethodUnload when its jmethodID is the one loaded there (a stale unload of
// earlier code at that address retires nothing); GenerateEvents' replays are idempotent
// (jitprov's host mode).
// DynamicCodeGenerated blobs (interpreter, stubs) go to a module of their own. Each
// rundown (lock-free, on jitprov's thread) feeds two sinks from one walk: the
// jitprov_rundown LTTng events and /tmp/perf-PID.map (written to a temporary file,
// then renamed).
//
// A host of libjitprov's public C API only. Never installs a signal handler: HotSpot
// owns SIGUSR2 (triggers: session, every:SEC, at:SEC, exit).
//
// Threads: CompiledMethodLoad/Unload arrive on HotSpot's Service Thread, in order;
// GenerateEvents' replays on the thread of VMInit, or (attached) on the Attach Listener
// thread inside Agent_OnAttach; DynamicCodeGenerated also on compiler threads. The
// callbacks read what only they can (comp level, names, lines) and queue the event
// (Agent::qmu); the agent's publisher thread publishes the queue in batches, in its
// order, and each rundown first publishes what is queued (Agent::mu serialises the
// publication and the agent's map address -> version). publish=inline and the jitdump:
// each callback publishes its own.
//
// Here the JVMTI callbacks and the agent's start; its state in agent.h, its options in
// agent_options, the perf map writer in perf_map, the stats file in agent_stats.
#include <jitprov/jitprov.h>

#include "agent.h"
#include "attach_codes.h"
#include "agent_options.h"
#include "agent_stats.h"
#include "jvmti_requests.h"
#include "vm_structs.h"

#include <jvmti.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace jitprov::jvmti {
namespace {

constexpr uint16_t kUnknownLevel = 65535;
constexpr uint64_t kStubKeyBit = uint64_t{1} << 63;  // stub keys have it; jmethodIDs (user pointers) do not

Agent* g_agent = nullptr;
// Set by the first Agent_OnLoad/Agent_OnAttach: a second one (jitprov attach twice, jcmd
// JVMTI.agent_load after -agentpath) registers nothing and says so.
std::atomic<bool> g_started{false};

using hostagent::By;
using hostagent::nowNs;

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
// primitives as they are. In place, in JVMTI's copy of the signature: returns where the
// name begins in `sig` (nullptr: "").
const char* javaClassName(char* sig) {
  if (sig == nullptr) return "";
  const size_t n = std::strlen(sig);
  if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
    sig[n - 1] = '\0';
    ++sig;
  }
  for (char* p = sig; *p != '\0'; ++p) *p = *p == '/' ? '.' : *p == '.' ? '/' : *p;
  return sig;
}

// A hidden class's internal name: its last '+' followed by "0x" and hex digits to the
// end (HotSpot appends the class's address so). Sets *plus to that '+'.
bool hiddenClassPlus(std::string_view k, size_t* plus) {
  const size_t p = k.rfind('+');
  if (p == std::string_view::npos || k.size() - p < 4 || k.compare(p + 1, 2, "0x") != 0) return false;
  for (size_t i = p + 3; i < k.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(k[i]))) return false;
  *plus = p;
  return true;
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

// The names of a method's first load, queued after the queue's text (kLoad: class, name,
// signature): from VMStructs, converted in the agent's buffers (names_vm), or JVMTI's
// copies, the class's converted in place. Agent::qmu held.
void queueNames(Agent& a, jvmtiEnv* jvmti, jmethodID method, Queued* ev) {
  char *name = nullptr, *sig = nullptr, *csig = nullptr;
  jclass klass = nullptr;
  const char *cls = "?", *mname = "?", *msig = "";
  // From VMStructs: the class's internal name converted as javaClassName() converts
  // JVMTI's signature. A hidden class's internal name ends in '+' and its address
  // ("LambdaForm$MH+0x0000000800c01000"), a '+' JVMTI's signature shows as '.', so '/'
  // here; the first kNameChecks methods, and the first kNameChecks of hidden classes,
  // are named both ways and compared. Another '+' in a name: JVMTI's way.
  const uint64_t tn0 = nowNs();
  VmStructs::Names vn;
  size_t hidden = std::string_view::npos;  // the hidden class's '+'
  const bool from_vm = a.names_vm && a.vm.namesOf(method, &vn) &&
                       (vn.klass.find('+') == std::string_view::npos || hiddenClassPlus(vn.klass, &hidden));
  if (from_vm) {
    a.cls_buf.assign(vn.klass);
    for (char& ch : a.cls_buf) ch = ch == '/' ? '.' : ch == '.' ? '/' : ch;
    if (hidden != std::string_view::npos) a.cls_buf[hidden] = '/';
    a.name_buf.assign(vn.name);
    a.sig_buf.assign(vn.signature);
  }
  const bool hidden_checked = hidden == std::string_view::npos || a.hidden_names_checked >= Agent::kNameChecks;
  if (from_vm && a.names_checked >= Agent::kNameChecks && hidden_checked) {
    cls = a.cls_buf.c_str();
    mname = a.name_buf.c_str();
    msig = a.sig_buf.c_str();
    ++a.names_vmstructs;
  } else {
    ++a.names_jvmti;
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
    if (from_vm) {
      ++(a.names_checked < Agent::kNameChecks ? a.names_checked : a.hidden_names_checked);
      if (a.cls_buf != cls || a.name_buf != mname || a.sig_buf != msig) {
        ++a.name_mismatches;
        a.names_vm = false;
        // Nothing is lost (this method's names are JVMTI's): said once, counted in the stats.
        std::fprintf(stderr,
                     "jitprov-jvmti: VMStructs names differ from JVMTI's (%s.%s%s against %s.%s%s): names from JVMTI "
                     "from now on\n",
                     a.cls_buf.c_str(), a.name_buf.c_str(), a.sig_buf.c_str(), cls, mname, msig);
      }
    }
  }
  std::string& t = a.queued.text;
  ev->named = true;
  ev->text = uint32_t(t.size());
  ev->cls_len = uint32_t(std::strlen(cls));
  ev->name_len = uint32_t(std::strlen(mname));
  ev->sig_len = uint32_t(std::strlen(msig));
  t.append(cls, ev->cls_len).append(1, '\0').append(mname, ev->name_len).append(1, '\0');
  t.append(msig, ev->sig_len).append(1, '\0');
  for (char* p : {name, sig, csig})
    if (p != nullptr) jvmti->Deallocate(reinterpret_cast<unsigned char*>(p));
  a.names_ns += nowNs() - tn0;
}

// A retirement's report: a method whose last code went is a candidate for unloading
// (forgetDead, at the batch's end), with its jmethodID (0 for a stub). Agent::mu held.
void retiredFrom(Agent& a, const jitprov_host_retired& r) {
  if ((r.flags & JITPROV_HOST_RETIRED_LAST) != 0)
    a.dead.emplace_back(r.method_id, r.module_id == a.stub_module ? 0 : r.host_key);
}

// At the end of a batch: each method whose last version went in it, and that got none
// again since, is unloaded and its jmethodID taken out of `named`, so that its next load
// (HotSpot never reuses a jmethodID, but a method can be compiled again) queues its names
// and registers it anew. Not while a load of it queued without names waits in the
// callbacks' queue (queued after the batch was taken, before this): that one needs the
// method. Agent::mu held (so no load is published meanwhile: the live code jitprov
// counts stays what it was when asked, before qmu).
void forgetDead(Agent& a) {
  if (a.dead.empty()) return;
  // A method can be there twice (a failed publication, then its only version's end).
  std::sort(a.dead.begin(), a.dead.end());
  a.dead.erase(
      std::unique(a.dead.begin(), a.dead.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
      a.dead.end());
  std::erase_if(a.dead, [&a](const auto& d) {  // it got a version again (or is gone)
    uint64_t n = 0;
    return jitprov_method_live_code(a.rt, d.first, &n) != JITPROV_OK || n != 0;
  });
  std::vector<std::pair<uint64_t, bool>> unload;  // method, a stub's
  if (!a.dead.empty()) {
    std::lock_guard<std::mutex> q(a.qmu);
    HostKeyIndex waiting;  // jmethodIDs of the queued loads without names
    for (const Queued& ev : a.queued.events)
      if (ev.kind == Queued::kLoad && !ev.named && waiting.find(ev.jmid) == 0) waiting.insert(ev.jmid, 1);
    for (const auto& [method, jmid] : a.dead) {
      if (jmid != 0 && waiting.find(jmid) != 0) continue;
      if (jmid != 0) a.named.erase(jmid);
      unload.emplace_back(method, jmid == 0);
    }
  }
  a.dead.clear();
  // Before any later batch registers the method's next load (this thread, under mu).
  for (const auto& [m, stub] : unload) {
    const int e = jitprov_method_unload(a.rt, m);
    if (e != JITPROV_OK) noteError(a, std::string("unload a method with no live code: ") + jitprov_strerror(e));
    ++(stub ? a.stubs_unloaded : a.methods_unloaded);
  }
}

// HotSpot places new code only in free memory: live code that overlaps it is gone. When
// jitprov refuses a publication for an overlap, that code is retired here (a stub,
// which HotSpot frees without an event; an nmethod, should it ever free one without
// CompiledMethodUnload), one range at a time: JITPROV_OK, else the error (the caller counts it).
// The same method's code at the same range is no overlap: jitprov returns it (a replay).
// Agent::mu held.
int retireOverlapping(Agent& a, uint64_t start, uint32_t size) {
  uint64_t at = 0;
  int e = jitprov_code_find_overlap(a.rt, start, size, &at);
  jitprov_host_retired r{};
  r.sz = sizeof r;
  if (e == JITPROV_OK) e = jitprov_code_retire_host(a.rt, at, 0, &r);
  if (e != JITPROV_OK) return e;  // the caller counts the refused publication, once
  ++(r.module_id == a.stub_module ? a.superseded_stubs : a.superseded_methods);
  retiredFrom(a, r);
  return JITPROV_OK;
}

// The source lines of a compiled method for the jitdump (JIT_CODE_DEBUG_INFO): each
// entry of HotSpot's address map (pc -> bytecode index of the outermost method: inlined
// code counts as its caller's) with the line its method's LineNumberTable gives that
// index, consecutive entries of one line merged, the code before the first mapped pc
// given the method's first line; the file "package/dir/Source.java".
// Only entries inside [code_addr, code_addr + code_size) in ascending order (what
// jitprov_code_publish accepts). Any thread, no lock; `file` holds the name.
Lines lineEntries(Agent& a, jvmtiEnv* jvmti, jmethodID method, const void* code_addr, jint code_size, jint map_length,
                  const jvmtiAddrLocationMap* map) {
  Lines out;
  if (map == nullptr || map_length <= 0) {
    out.absent = true;
    return out;
  }
  jint n = 0;
  jvmtiLineNumberEntry* table = nullptr;
  jvmtiError e = jvmti->GetLineNumberTable(method, &n, &table);
  jclass klass = nullptr;
  char *src = nullptr, *csig = nullptr;
  // The file from VMStructs (as the names: Agent::files_vm), each of the first
  // kNameChecks also from JVMTI and compared; else from JVMTI's three calls.
  std::string_view package, source;
  const bool from_vm = e == JVMTI_ERROR_NONE && n > 0 && a.files_vm.load(std::memory_order_relaxed) &&
                       a.vm.sourceOf(method, &package, &source);
  // Trusted once kNameChecks loads compared equal (acquire: those checks done, on any
  // thread); until then every load takes JVMTI's way and, when VMStructs gave a file too,
  // is one more check (several threads may check at once: a few more than kNameChecks).
  const bool check = from_vm && a.files_verified.load(std::memory_order_acquire) < Agent::kNameChecks;
  if (from_vm && !check) {
    out.file.reserve(package.size() + source.size());
    out.file.assign(package).append(source);
    a.files_vmstructs.fetch_add(1, std::memory_order_relaxed);
  } else if (e == JVMTI_ERROR_NONE) {
    e = jvmti->GetMethodDeclaringClass(method, &klass);
    if (e == JVMTI_ERROR_NONE) e = jvmti->GetSourceFileName(klass, &src);
    if (e == JVMTI_ERROR_NONE) e = jvmti->GetClassSignature(klass, &csig, nullptr);
    // "Ljitwork/Gen3;" -> "jitwork/" + "Gen3.java"
    std::string_view cs = csig != nullptr ? csig : "";
    const size_t slash = cs.rfind('/');
    if (cs.size() > 1 && cs.front() == 'L' && slash != std::string_view::npos) out.file = cs.substr(1, slash);
    out.file += src != nullptr ? src : "";
    a.files_jvmti.fetch_add(1, std::memory_order_relaxed);
    const bool same = out.file.size() == package.size() + source.size() &&
                      out.file.compare(0, package.size(), package) == 0 &&
                      out.file.compare(package.size(), source.size(), source) == 0;
    // A JVMTI call that failed (a phase's end, a class being unloaded) decides nothing.
    if (check && e == JVMTI_ERROR_NONE && same) a.files_verified.fetch_add(1, std::memory_order_release);
    if (check && e == JVMTI_ERROR_NONE && !same) {
      // Nothing is lost (this load's file is JVMTI's): said once, counted in the stats.
      if (a.files_vm.exchange(false, std::memory_order_relaxed))
        std::fprintf(stderr,
                     "jitprov-jvmti: the source file from VMStructs differs from JVMTI's (%.*s%.*s against %s): "
                     "files from JVMTI from now on\n",
                     int(package.size()), package.data(), int(source.size()), source.data(), out.file.c_str());
      a.file_mismatches.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (e == JVMTI_ERROR_NONE && n > 0) {
    std::vector<std::pair<jlocation, jint>> byBci;
    byBci.reserve(size_t(n));
    for (jint i = 0; i < n; ++i) byBci.emplace_back(table[i].start_location, table[i].line_number);
    std::sort(byBci.begin(), byBci.end());
    const uint64_t start = reinterpret_cast<uintptr_t>(code_addr), end = start + uint64_t(code_size);
    uint64_t prev = start;
    for (jint i = 0; i < map_length; ++i) {
      const uint64_t pc = reinterpret_cast<uintptr_t>(map[i].start_address);
      const jlocation bci = map[i].location;
      auto it = std::upper_bound(byBci.begin(), byBci.end(), std::make_pair(bci, INT32_MAX));
      if (pc < prev || pc >= end || bci < 0 || it == byBci.begin()) {
        ++out.skipped;
        continue;
      }
      const uint32_t line = uint32_t(std::prev(it)->second);
      prev = pc;
      if (!out.entries.empty() && out.entries.back().line == line) continue;  // the same line goes on
      out.entries.push_back(jitprov_line_entry{pc, line, 0, nullptr});
    }
    // The code before the first mapped pc (the prologue, the invocation counter)
    // precedes bytecode 0: the method's first line, so that no address of it is lineless.
    const uint32_t first = uint32_t(byBci.front().second);
    if (!out.entries.empty() && out.entries.front().line == first)
      out.entries.front().code_addr = start;
    else if (!out.entries.empty() && out.entries.front().code_addr != start)
      out.entries.insert(out.entries.begin(), jitprov_line_entry{start, first, 0, nullptr});
  } else if (e == JVMTI_ERROR_ABSENT_INFORMATION || e == JVMTI_ERROR_NATIVE_METHOD ||
             (e == JVMTI_ERROR_NONE && n == 0)) {
    out.absent = true;  // compiled without -g:lines, or -g:source; a native method's wrapper
  } else {
    out.error = true;
  }
  for (void* p : {static_cast<void*>(table), static_cast<void*>(src), static_cast<void*>(csig)})
    if (p != nullptr) jvmti->Deallocate(static_cast<unsigned char*>(p));
  return out;
}

// The first of the scan's entries on [start, ...): the one before start when its code
// reaches past it (entries never overlap: the publication that would make them retires
// the older). Agent::mu held.
std::map<uint64_t, Agent::Scanned>::iterator firstScannedFrom(Agent& a, uint64_t start) {
  auto it = a.scanned.lower_bound(start);
  if (it != a.scanned.begin() && std::prev(it)->second.nm.code_end > start) --it;
  return it;
}
// The scan's entries on [start, start + size): code published or unloaded there since
// the scan, which HotSpot's own events now account for. Agent::mu held.
void forgetScanned(Agent& a, uint64_t start, uint64_t size) {
  const uint64_t end = start + std::max<uint64_t>(size, 1);
  for (auto it = firstScannedFrom(a, start); it != a.scanned.end() && it->first < end;) it = a.scanned.erase(it);
}

// Retires a scanned nmethod's version (checkScanned, retireDeadScanned). Agent::mu held.
void retireScanned(Agent& a, std::map<uint64_t, Agent::Scanned>::iterator it) {
  jitprov_host_retired r{};
  r.sz = sizeof r;
  const int e = jitprov_code_retire_host(a.rt, it->first, it->second.jmid, &r);
  if (e == JITPROV_OK) {
    ++a.scan_retired;
    retiredFrom(a, r);
  } else if (e != JITPROV_E_UNKNOWN_VERSION) {
    noteError(a, std::string("retire scanned code: ") + jitprov_strerror(e));
  }
}

// The scan's entries from `it` to the first at or past `end` whose nmethod HotSpot has
// unloaded since (its state unloaded or zombie, or its memory another blob's): retired,
// as CompiledMethodUnload would have, and forgotten. How many. Agent::mu held.
size_t retireDead(Agent& a, std::map<uint64_t, Agent::Scanned>::iterator it, uint64_t end) {
  size_t n = 0;
  while (it != a.scanned.end() && it->first < end) {
    if (a.vm.stillAlive(it->second.nm)) {
      ++it;
      continue;
    }
    retireScanned(a, it);
    it = a.scanned.erase(it);
    ++n;
  }
  return n;
}

// The scan's nmethods on [start, start + size) that HotSpot freed: retired before code is
// published there, so that newer code of the same method at the same range is a new
// version, not taken for a replay of the old. Agent::mu held.
void retireDeadScanned(Agent& a, uint64_t start, uint64_t size) {
  a.scan_retired_on_publish += retireDead(a, firstScannedFrom(a, start), start + std::max<uint64_t>(size, 1));
}

// Agent::mu held. `lines`: the code's source lines (jitdump only).
// `jmid`: the jmethodID (0 for a stub). True when published (or replayed).
bool publish(Agent& a, uint64_t method_id, const void* addr, jint size, int tier, uint16_t host_tier, uint64_t jmid,
             const Lines* lines = nullptr) {
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  c.code_start = reinterpret_cast<uintptr_t>(addr);
  c.code_size = uint32_t(size);
  c.tier = uint32_t(tier);
  c.host_tier = host_tier;
  if (lines != nullptr && !lines->entries.empty()) {
    c.lines = lines->entries.data();
    c.n_lines = lines->entries.size();
  }
  retireDeadScanned(a, c.code_start, c.code_size);
  uint64_t vid = 0;
  int e = jitprov_code_publish(a.rt, method_id, &c, &vid);
  int retired = JITPROV_OK;
  while (e == JITPROV_E_RANGE_OVERLAP && (retired = retireOverlapping(a, c.code_start, c.code_size)) == JITPROV_OK)
    e = jitprov_code_publish(a.rt, method_id, &c, &vid);
  if (e != JITPROV_OK) {
    if (e == JITPROV_E_RANGE_OVERLAP) {
      ++a.refused;
      noteError(a, "code at " + std::to_string(c.code_start) + " overlaps live code that could not be retired (" +
                       jitprov_strerror(retired) + "): refused");
    } else {
      noteError(a, std::string("publish code: ") + jitprov_strerror(e));
    }
    // A method registered for it that has no version: unloaded with the batch too
    // (forgetDead asks jitprov whether it has live code).
    a.dead.emplace_back(method_id, jmid);
    return false;
  }
  forgetScanned(a, c.code_start, c.code_size);
  return true;
}

// The jitprov method of a queued load: registered with the names queued with it (the
// method's first load), or found by its key. Agent::mu held.
bool methodOf(Agent& a, const Queue& q, const Queued& ev, uint64_t* id) {
  if (!ev.named) {
    if (jitprov_method_find(a.rt, ev.jmid, id) == JITPROV_OK) return true;
    // Its first load's registration failed (counted then): the next load queues the
    // names again and registers, as each load did when the callbacks published.
    noteError(a, "a method's load after a first one that was not registered: not published");
    std::lock_guard<std::mutex> q(a.qmu);
    a.named.erase(ev.jmid);
    return false;
  }
  const char* cls = q.text.data() + ev.text;
  const char* mname = cls + ev.cls_len + 1;
  const char* msig = mname + ev.name_len + 1;
  jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
  d.host_key = ev.jmid;
  d.name_space = cls;
  d.name = mname;
  d.signature = msig;
  d.options = JITPROV_METHOD_SANITIZE_NAMES;  // JVM names are modified UTF-8
  const int e = jitprov_method_register(a.rt, a.java_module, &d, id);
  if (e != JITPROV_OK && e != JITPROV_E_EXISTS)
    noteError(a, std::string("register method ") + cls + "." + mname + ": " + jitprov_strerror(e));
  else if (e == JITPROV_OK)
    ++a.methods;
  return e == JITPROV_OK || e == JITPROV_E_EXISTS;
}

// A queued CompiledMethodLoad. Agent::mu held.
void publishLoad(Agent& a, Queue& q, const Queued& ev) {
  Lines* lines = ev.lines >= 0 ? &q.lines[size_t(ev.lines)] : nullptr;
  if (lines != nullptr) {
    a.line_map_skipped += lines->skipped;
    if (!lines->entries.empty()) {
      ++a.line_loads;
      a.line_entries += lines->entries.size();
      // The first entry names the file: pointed at here, where `lines` rests (a name
      // short enough for std::string's inline buffer moves with its characters).
      lines->entries.front().file = lines->file.c_str();
    } else if (lines->error) {
      ++a.line_errors;
    } else {
      ++a.lines_absent;
    }
  }
  uint64_t id = 0;
  if (methodOf(a, q, ev, &id) &&
      publish(a, id, reinterpret_cast<const void*>(ev.addr), jint(ev.size), tierOf(ev.level, ev.osr),
              ev.level >= 0 ? uint16_t(ev.level) : kUnknownLevel, ev.jmid, lines) &&
      ev.scan >= 0 && a.scan_checks)
    a.scanned[ev.addr] = Agent::Scanned{q.scans[size_t(ev.scan)], ev.jmid};
}

// Before every rundown, and at most every kScanCheckNs on the publisher thread (never on
// a callback's, which publish=inline makes publish): the attach's scanned nmethods that
// HotSpot has unloaded since are retired (retireDead). Agent::mu held.
constexpr uint64_t kScanCheckNs = 100'000'000;
void checkScanned(Agent& a, By by) {
  if (a.scanned.empty() || (by != By::kPrepare && by != By::kThread)) return;
  const uint64_t t0 = nowNs();
  if (by == By::kThread && t0 - a.scan_last_check_ns < kScanCheckNs) return;
  a.scan_last_check_ns = t0;
  ++a.scan_checked;
  retireDead(a, a.scanned.begin(), UINT64_MAX);
  a.scan_check_ns += nowNs() - t0;
}

// A queued CompiledMethodUnload. The class may be gone: the jmethodID is compared, never
// used. An unload matches the live code at its address only with the same jmethodID:
// one of earlier code there, delivered on the Service Thread after a GenerateEvents
// replay (another thread) of newer code at that address, must not retire the newer code
// (docs/attach.md). Agent::mu held.
void publishUnload(Agent& a, const Queued& ev) {
  if (ev.jmid == 0) {  // no method named: retire_host would take any method's code there
    ++a.unknown_unloads;
    return;
  }
  jitprov_host_retired r{};
  r.sz = sizeof r;
  const int e = jitprov_code_retire_host(a.rt, ev.addr, ev.jmid, &r);
  if (e == JITPROV_OK) {
    retiredFrom(a, r);
    forgetScanned(a, ev.addr, 1);
  } else if (e != JITPROV_E_UNKNOWN_VERSION) {
    noteError(a, std::string("retire code: ") + jitprov_strerror(e));
  } else if (r.method_id == 0 || r.module_id == a.stub_module) {
    ++a.unknown_unloads;  // loaded before the agent saw it (never replayed), or superseded
  } else {
    ++a.stale_unloads;  // another method's code is live there now
  }
}

// A queued DynamicCodeGenerated. Agent::mu held.
void publishStub(Agent& a, const Queue& q, const Queued& ev) {
  const std::string_view name(q.text.data() + ev.text, ev.name_len);
  // Keyed by address and name: HotSpot reuses a freed stub's address for other blobs
  // (which then supersede it: retireOverlapping).
  const uint64_t key = (ev.addr ^ (std::hash<std::string_view>{}(name) << 1)) | kStubKeyBit;
  uint64_t id = 0;
  if (jitprov_method_find(a.rt, key, &id) != JITPROV_OK) {
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    d.host_key = key;
    d.name_space = "hotspot";
    d.name = name.data();  // NUL-terminated in the queue's text
    d.options = JITPROV_METHOD_SANITIZE_NAMES;
    const int e = jitprov_method_register(a.rt, a.stub_module, &d, &id);
    if (e != JITPROV_OK && e != JITPROV_E_EXISTS)
      return noteError(a, std::string("register stub: ") + jitprov_strerror(e));
  }
  publish(a, id, reinterpret_cast<const void*>(ev.addr), jint(ev.size), JITPROV_TIER0, 0, 0);
}

// Publishes what the callbacks queued, in their order: the registry's work, the
// method_load events, the agent's address map. Takes Agent::mu (then qmu for the swap
// alone: the callbacks queue on while a batch is published).
void publishQueued(Agent& a, By by) {
  std::lock_guard<std::mutex> g(a.mu);
  hostagent::publishBatch(a.qmu, a.queued, a.publishing, a.batches, by, [&a](Queue& q, const Queued& ev) {
    switch (ev.kind) {
      case Queued::kLoad:
        publishLoad(a, q, ev);
        break;
      case Queued::kUnload:
        publishUnload(a, ev);
        break;
      case Queued::kStub:
        publishStub(a, q, ev);
        break;
    }
  });
  checkScanned(a, by);
  forgetDead(a);
}

// At the start of every rundown (jitprov_rundown_config.prepare), on its thread: what
// HotSpot reported before the rundown is in it.
void prepareRundown(void* agent) { publishQueued(*static_cast<Agent*>(agent), By::kPrepare); }

// The publisher thread's (hostagent::Publisher) view of the queue.
void publishByThread(void* agent) { publishQueued(*static_cast<Agent*>(agent), By::kThread); }
size_t queueCount(void* agent) { return static_cast<Agent*>(agent)->queued.events.size(); }

// Before the events are enabled: the publisher thread, unless the loads publish inline
// (publish=inline, or the jitdump: its records carry the time of their publication,
// which must be the load's for perf to name samples in the new code).
void startPublisher(Agent& a) {
  (void)a.publisher.start("jitprov-jvmti", &a.qmu, a.opt.jitdump.empty() ? a.jopt.publish_ms : 0, a.jopt.publish_batch,
                          &publishByThread, &queueCount, &a);
}

// From here each callback publishes its own; the publisher thread stopped (joined), and
// what is left published.
void stopPublisher(Agent& a) {
  a.publisher.stop();
  publishQueued(a, By::kInline);
}

// After a callback queued an event (`wake`: Publisher::mustWake() said so, under qmu):
// published now (inline), or the publisher woken.
void queued(Agent& a, bool inline_publish, bool wake) {
  if (inline_publish)
    publishQueued(a, By::kInline);
  else if (wake)
    a.publisher.wake();
}

// The code heaps' bounds (VmStructs::readHeaps), once: the first load, VMInit or the
// attach, whichever comes first. Agent::qmu held.
void heapsRead(Agent& a) {
  if (a.heaps_read) return;
  logf("code heaps: %s", a.vm.readHeaps().c_str());
  a.heaps_read = true;
}

// When a load or unload callback began, for its histogram in the stats file (which alone
// shows it): its own-CPU span's start, or 0 without stats (no clock read at all).
uint64_t callbackBegan(const Agent& a, const hostagent::OwnCpu::Span& cpu) {
  if (!a.own.on) return 0;
  const uint64_t t = cpu.beganNs();
  return t != 0 ? t : nowNs();
}

void JNICALL onCompiledMethodLoad(jvmtiEnv* jvmti, jmethodID method, jint code_size, const void* code_addr,
                                  jint map_length, const jvmtiAddrLocationMap* map, const void*) {
  Agent& a = *g_agent;
  const hostagent::OwnCpu::Span cpu(a.own, false);
  const uint64_t t0 = callbackBegan(a, cpu);
  // Before the lock: JVMTI calls only. lines_on is set before the events are enabled.
  Lines lines;
  if (a.lines_on && code_size > 0) lines = lineEntries(a, jvmti, method, code_addr, code_size, map_length, map);
  bool inline_publish = false, wake = false;
  {
    std::lock_guard<std::mutex> g(a.qmu);  // also keeps levelOf() off readHeaps() (VMInit)
    // A load may come before VMInit (HotSpot posts CompiledMethodLoad in the start phase):
    // the heaps, which the blob scan needs (OSR code), are there once code is.
    if (!a.heaps_read) heapsRead(a);
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
    if (lv.source == VmStructs::Source::kUnknown && a.tier_by[int(VmStructs::Source::kUnknown)] <= 5 && a.opt.verbose) {
      char* name = nullptr;
      (void)jvmti->GetMethodName(method, &name, nullptr, nullptr);
      logf("comp level unknown for %s at %p (%d bytes)", name != nullptr ? name : "?", code_addr, int(code_size));
      if (name != nullptr) jvmti->Deallocate(reinterpret_cast<unsigned char*>(name));
    }
    if (code_size > 0) {
      Queued ev{};
      ev.kind = Queued::kLoad;
      ev.jmid = reinterpret_cast<uintptr_t>(method);
      ev.addr = reinterpret_cast<uintptr_t>(code_addr);
      ev.size = uint32_t(code_size);
      ev.level = int16_t(lv.level >= 0 && lv.level < kUnknownLevel ? lv.level : -1);
      ev.osr = lv.osr;
      if (a.named.find(ev.jmid) == 0) {
        a.named.insert(ev.jmid, 1);
        queueNames(a, jvmti, method, &ev);
      }
      if (a.lines_on) {
        ev.lines = int32_t(a.queued.lines.size());
        a.queued.lines.push_back(std::move(lines));
      }
      a.queued.events.push_back(ev);
    }
    inline_publish = !a.publisher.deferred();
    wake = !inline_publish && code_size > 0 && a.publisher.mustWake(a.queued.events.size());
    if (!inline_publish && t0 != 0) a.load_ns.add(nowNs() - t0);
  }
  if (code_size <= 0) return;
  queued(a, inline_publish, wake);
  if (inline_publish) {
    std::lock_guard<std::mutex> g(a.qmu);
    if (t0 != 0) a.load_ns.add(nowNs() - t0);
  }
}

void JNICALL onCompiledMethodUnload(jvmtiEnv*, jmethodID method, const void* code_addr) {
  Agent& a = *g_agent;
  const hostagent::OwnCpu::Span cpu(a.own, false);
  const uint64_t t0 = callbackBegan(a, cpu);
  bool inline_publish = false, wake = false;
  {
    std::lock_guard<std::mutex> g(a.qmu);
    ++a.unloads;
    Queued ev{};
    ev.kind = Queued::kUnload;
    ev.jmid = reinterpret_cast<uintptr_t>(method);
    ev.addr = reinterpret_cast<uintptr_t>(code_addr);
    a.queued.events.push_back(ev);
    inline_publish = !a.publisher.deferred();
    wake = !inline_publish && a.publisher.mustWake(a.queued.events.size());
    if (!inline_publish && t0 != 0) a.unload_ns.add(nowNs() - t0);
  }
  queued(a, inline_publish, wake);
  if (inline_publish) {
    std::lock_guard<std::mutex> g(a.qmu);
    if (t0 != 0) a.unload_ns.add(nowNs() - t0);
  }
}

void JNICALL onDynamicCodeGenerated(jvmtiEnv*, const char* name, const void* address, jint length) {
  Agent& a = *g_agent;
  if (length <= 0 || address == nullptr) return;
  const hostagent::OwnCpu::Span cpu(a.own, false);
  bool inline_publish = false, wake = false;
  {
    std::lock_guard<std::mutex> g(a.qmu);
    ++a.stubs;
    Queued ev{};
    ev.kind = Queued::kStub;
    ev.named = true;
    ev.addr = reinterpret_cast<uintptr_t>(address);
    ev.size = uint32_t(length);
    const std::string_view n = name != nullptr ? name : "stub";
    ev.text = uint32_t(a.queued.text.size());
    ev.name_len = uint32_t(n.size());
    a.queued.text.append(n).append(1, '\0');
    a.queued.events.push_back(ev);
    inline_publish = !a.publisher.deferred();
    wake = !inline_publish && a.publisher.mustWake(a.queued.events.size());
  }
  queued(a, inline_publish, wake);
}

void JNICALL onVMInit(jvmtiEnv* jvmti, JNIEnv*, jthread) {
  Agent& a = *g_agent;
  {
    // The agent's own part of the start; the replays' callbacks count as callbacks, and
    // HotSpot's work to make them is the floor's (which replays too).
    const hostagent::OwnCpu::Span cpu(a.own, true);
    // CompiledMethodLoad events may already arrive (live phase): levelOf() runs under
    // the same mutex.
    std::lock_guard<std::mutex> g(a.qmu);
    heapsRead(a);
  }
  // Code compiled before the events were enabled: replayed (idempotent in jitprov).
  if (replayEvents(jvmti) != JVMTI_ERROR_NONE) {
    std::lock_guard<std::mutex> g(a.mu);
    noteError(a, "GenerateEvents failed: code compiled before VMInit is missing");
  }
}

void JNICALL onVMDeath(jvmtiEnv*, JNIEnv*) {
  Agent& a = *g_agent;
  // The rundown and publisher threads' CPU time while they live (an exit rundown is not
  // in it).
  if (a.own.on) a.own.snapshotThreads();
  if (a.rd != nullptr) jitprov_rundown_stop(a.rd);  // the exit rundown (the queue first), when asked for
  stopPublisher(a);
  writeStats(a);
  hostagent::closeJitdump("jitprov-jvmti", a.rt, a.opt);  // no loads after VMDeath
  if (a.perfmap.errors != 0)
    std::fprintf(stderr, "jitprov-jvmti: perf map: %" PRIu64 " errors, last: %s\n", a.perfmap.errors,
                 a.perfmap.last_error.c_str());
  jitprov_memory_stats ms{};
  ms.sz = sizeof ms;
  (void)jitprov_memory_stats_get(a.rt, &ms);
  logf("VMDeath: %" PRIu64 " loads (%" PRIu64 " replays), %" PRIu64 " unloads, %" PRIu64 " stubs, %" PRIu64
       " rundowns, perf map written %" PRIu64 " times",
       a.loads, ms.replayed, a.unloads, a.stubs, jitprov_rundown_completed(a.rd), a.perfmap.written);
}

// Attached (attach=scan): the nmethods compiled before the attach, found without
// CodeCache_lock (docs/attach.md, "The scan"). On the Attach Listener thread, the load
// events already enabled, before "attached":
//  1. every loaded class (GetLoadedClasses: local references, which keep each from
//     unloading until the scan ends) and its methods (GetClassMethods, which gives each
//     method its jmethodID): Method* -> jmethodID;
//  2. every used block of the code heaps (VmStructs::forEachUsedBlock) read as an
//     nmethod; one alive (in use, not used, not entrant) is queued as a load, its
//     jmethodID from step 1, or, for a method of a class listed that is not among its
//     methods (HotSpot's method handle intrinsics, a method's old version after a
//     redefinition), the one its class keeps for its idnum (what HotSpot's events give),
//     read safely. Code of a class not listed (loaded after step 1: its code comes by
//     events) is counted; code of a class listed but with no jmethodID is counted too,
//     and makes the caller replay as well (GenerateEvents), so that none is lost.
//     Each read and its queueing under qmu, as a callback queues: newer code at its
//     address, which HotSpot places only once this is freed, is queued after it.
// What this misses, HotSpot's events bring: code installed after the events were enabled.
// What it finds HotSpot reports no unload of: checkScanned() reads it again.
// Returns false when it could not list the classes (the caller replays instead).
bool scanCodeHeaps(Agent& a, JavaVM* vm, jvmtiEnv* jvmti) {
  const uint64_t t0 = nowNs();
  JNIEnv* jni = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&jni), JNI_VERSION_1_6) != JNI_OK || jni == nullptr) {
    a.scan_why_not = "no JNI environment on the attach thread";
    return false;
  }
  jint n_classes = 0;
  jclass* classes = nullptr;
  if (jvmti->GetLoadedClasses(&n_classes, &classes) != JVMTI_ERROR_NONE) {
    a.scan_why_not = "GetLoadedClasses failed";
    return false;
  }
  // The classes' local references live until the scan ends (-Xcheck:jni counts them).
  (void)jni->EnsureLocalCapacity(n_classes + 64);
  std::unordered_map<uintptr_t, uint64_t> jmids;  // Method* -> jmethodID
  std::unordered_set<uintptr_t> listed;           // the Klass* of each class listed
  for (jint i = 0; i < n_classes; ++i) {
    jint status = 0, n = 0;
    jmethodID* methods = nullptr;
    // A class not prepared has no method compiled; an array class has no methods.
    if (jvmti->GetClassStatus(classes[i], &status) != JVMTI_ERROR_NONE || (status & JVMTI_CLASS_STATUS_PREPARED) == 0 ||
        jvmti->GetClassMethods(classes[i], &n, &methods) != JVMTI_ERROR_NONE)
      continue;
    ++a.scan_classes;
    for (jint k = 0; k < n; ++k)
      if (methods[k] != nullptr) jmids.emplace(*reinterpret_cast<const uintptr_t*>(methods[k]), uintptr_t(methods[k]));
    a.scan_methods += uint64_t(n);
    if (n > 0 && methods[0] != nullptr)
      if (const uintptr_t k = a.vm.holderOf(*reinterpret_cast<const uintptr_t*>(methods[0])); k != 0) listed.insert(k);
    jvmti->Deallocate(reinterpret_cast<unsigned char*>(methods));
  }
  a.scan_blocks = a.vm.forEachUsedBlock([&](uintptr_t blob) {
    std::lock_guard<std::mutex> g(a.qmu);
    VmStructs::Nmethod nm;
    if (!a.vm.readNmethod(blob, &nm)) return;
    ++a.scan_nmethods;
    if (!VmStructs::alive(nm.state)) return;
    ++a.scan_alive;
    uint64_t jmid = 0;
    if (auto it = jmids.find(nm.method); it != jmids.end()) {
      jmid = it->second;
    } else {
      uintptr_t holder = 0, id = 0;
      const bool read = a.vm.safeJmethodId(nm.method, &holder, &id);
      if (!read || listed.count(holder) == 0) {
        ++a.scan_unmapped;  // a class loaded since the listing: its events bring it
        return;
      }
      if (id == 0) {
        ++a.scan_unnamed;  // a class listed, no jmethodID: the caller replays
        return;
      }
      jmid = id;
    }
    Queued ev{};
    ev.kind = Queued::kLoad;
    ev.jmid = jmid;
    ev.addr = nm.code_begin;
    ev.size = uint32_t(nm.code_end - nm.code_begin);
    ev.level = int16_t(nm.level.level);
    ev.osr = nm.level.osr;
    ev.scan = int32_t(a.queued.scans.size());
    a.queued.scans.push_back(nm);
    if (a.named.find(ev.jmid) == 0) {
      a.named.insert(ev.jmid, 1);
      // JVMTI's names (the first methods, checked) make local references: freed here.
      const bool frame = jni->PushLocalFrame(16) == JNI_OK;
      queueNames(a, jvmti, reinterpret_cast<jmethodID>(jmid), &ev);
      if (frame) jni->PopLocalFrame(nullptr);
    }
    a.queued.events.push_back(ev);
    ++a.scan_queued;
  });
  for (jint i = 0; i < n_classes; ++i) jni->DeleteLocalRef(classes[i]);
  jvmti->Deallocate(reinterpret_cast<unsigned char*>(classes));
  a.scan_ns = nowNs() - t0;
  return true;
}

// Why the attach cannot scan here (empty: it can). Java 17 alone: its nmethod states.
std::string scanRefusal(const Agent& a, int java) {
  if (a.jopt.attach == JvmOptions::Attach::kReplay) return "attach=replay";
  if (java != 17) return "Java " + std::to_string(java) + " (the scan knows Java 17's nmethod states)";
  if (!a.opt.jitdump.empty()) return "jitdump= (source lines need GenerateEvents' address maps)";
  if (const std::string m = a.vm.scanMissing(); !m.empty()) return "VMStructs lacks " + m;
  if (!VmStructs::safeReadsWork()) return "/proc/self/mem not readable in the JVM";
  return {};
}

// The jitprov runtime (host mode; modules "java" and "hotspot-stubs") and the jitdump
// when asked for. False on failure (said on stderr).
bool createJitprov(Agent& a) {
  hostagent::setLttngEnvironment();  // before the runtime loads lttng-ust
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.code_mode = JITPROV_CODE_HOST;
  // No in-process lock histograms: nothing here reads them (jitprov-lockwait times the
  // lock through its probes), and they cost clock reads and shared writes per acquisition.
  cfg.lock_stats = 0;
  int e = jitprov_runtime_create(&cfg, &a.rt);
  if (e == JITPROV_OK) e = jitprov_module_register(a.rt, "java", 0, &a.java_module);
  if (e == JITPROV_OK) e = jitprov_module_register(a.rt, "hotspot-stubs", 0, &a.stub_module);
  if (e != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-jvmti: create the jitprov runtime: %s\n", jitprov_strerror(e));
    return false;
  }
  logf("tracing provider: %s", jitprov_trace_provider_status());
  a.perfmap.bare_module = a.stub_module;  // stubs: their name alone
  // Before the first load: every one is in the file, with its time (docs/jvm-agent.md).
  if (const std::string why = hostagent::openJitdump(a.rt, a.opt); !why.empty()) {
    std::fprintf(stderr, "jitprov-jvmti: jitdump: %s\n", why.c_str());
    return false;
  }
  return true;
}

// jitprov's rundown engine, started, with the perf map as its sink when there is one.
// False on failure (said on stderr).
bool startRundownEngine(Agent& a) {
  // jitprov's rundown thread takes this thread's name when it is created: it goes by its
  // own in `top -H`, `perf report --comm` and tools/bench/jvm-apps' profile.
  int e;
  {
    const hostagent::RundownThreadName named;
    e = hostagent::startRundowns(a.rt, a.opt, &a.perfmap, &a.rd, &prepareRundown, &a);
  }
  if (e != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-jvmti: start the rundown engine: %s\n", jitprov_strerror(e));
    return false;
  }
  return true;
}

// The callbacks above set, and their events enabled (jvmti_requests.h). False on
// failure (said).
bool setUpEvents(jvmtiEnv* jvmti) {
  int failed = 0;
  if (enableEvents(
          jvmti,
          Callbacks{&onCompiledMethodLoad, &onCompiledMethodUnload, &onDynamicCodeGenerated, &onVMInit, &onVMDeath},
          &failed) == JVMTI_ERROR_NONE)
    return true;
  if (failed == 0)
    std::fprintf(stderr, "jitprov-jvmti: SetEventCallbacks failed\n");
  else
    std::fprintf(stderr, "jitprov-jvmti: enable JVMTI event %d failed\n", failed);
  return false;
}

// The agent started: at OnLoad (`live` false: the replays come at VMInit) or at
// OnAttach (`live`: the replays are made here, on the Attach Listener thread, before the
// attach is answered, so that "attached" means every nmethod and stub alive is in the
// registry). Returns an OnAttachCode (attach_codes.h). Until the rundown thread starts,
// a failure undoes everything (a later attach may try again); after, the agent stays.
// The JVM's java.vm.specification.version as a number ("1.8" is 8, "17" is 17), 0 when
// JVMTI does not say. (java.specification.version is not set yet at OnLoad: the class
// library sets it; the VM's own is.)
int javaSpecificationVersion(jvmtiEnv* jvmti) {
  char* v = nullptr;
  if (jvmti->GetSystemProperty("java.vm.specification.version", &v) != JVMTI_ERROR_NONE || v == nullptr) return 0;
  const char* digits = std::strncmp(v, "1.", 2) == 0 ? v + 2 : v;
  const int n = std::atoi(digits);
  jvmti->Deallocate(reinterpret_cast<unsigned char*>(v));
  return n;
}

jint start(JavaVM* vm, const char* options, bool live) {
  if (g_started.exchange(true)) {
    std::fprintf(stderr, "jitprov-jvmti: already loaded in this JVM (pid %d): nothing registered twice\n",
                 int(getpid()));
    // At OnLoad (-agentpath twice, JAVA_TOOL_OPTIONS and the command line) a non-zero
    // return ends the JVM: the first load runs, the second is a no-op.
    return live ? kOnAttachAlreadyLoaded : JNI_OK;
  }
  auto* a = new Agent();
  std::optional<hostagent::OwnCpu::Span> cpu;  // the start's CPU time, when stats are on
  auto undo = [a, &cpu](int code) {
    cpu.reset();
    if (a->jvmti != nullptr) a->jvmti->DisposeEnvironment();
    g_agent = nullptr;
    delete a;
    g_started = false;
    return code;
  };
  if (!parseOptions(options, &a->opt, &a->jopt)) return undo(kOnAttachBadOptions);
  g_agent = a;
  a->own.on = !a->opt.stats.empty();
  cpu.emplace(a->own, true);
  if (vm->GetEnv(reinterpret_cast<void**>(&a->jvmti), JVMTI_VERSION_1_2) != JNI_OK) {
    std::fprintf(stderr, "jitprov-jvmti: this JVM offers no JVMTI 1.2 environment\n");
    return undo(kOnAttachNoJvmti);
  }
  jvmtiEnv* jvmti = a->jvmti;
  if (const jvmtiCapabilities caps = requiredCapabilities(); jvmti->AddCapabilities(&caps) != JVMTI_ERROR_NONE) {
    std::fprintf(stderr, "jitprov-jvmti: JVMTI refuses can_generate_compiled_method_load_events\n");
    return undo(kOnAttachRefused);
  }
  if (!a->opt.jitdump.empty()) {
    // Source lines in the jitdump (JIT_CODE_DEBUG_INFO): without these, loads go without.
    const jvmtiCapabilities lc = lineCapabilities();
    a->lines_on = jvmti->AddCapabilities(&lc) == JVMTI_ERROR_NONE;
    if (!a->lines_on) std::fprintf(stderr, "jitprov-jvmti: jitdump: JVMTI refuses line numbers: no source lines\n");
  }
  logf("%s", a->vm.init(reinterpret_cast<const void*>(jvmti->functions->GetMethodName)).c_str());
  if (!a->vm.usable()) logf("comp levels will be unknown (host_tier 65535): VMStructs fields missing");
  if (a->jopt.names == JvmOptions::Names::kMutant) a->vm.corruptNamesForTest();
  // Before Java 17 a VM-anonymous class (Unsafe.defineAnonymousClass: every lambda's
  // class up to Java 14) has no suffix in Klass::_name where JVMTI's signature has one
  // ("/<hash>"), and its methods may come after the first ones checked: JVMTI's names
  // there. Java 17 removed such classes; a hidden class has '+' (methodOf).
  const int java = javaSpecificationVersion(jvmti);
  // Attached, the replays' correctness needs 17 (docs/attach.md); `jitprov attach` checks
  // the release file first, which may be unreadable: the JVM's own word, here.
  if (live && java != 0 && java < 17) {
    std::fprintf(stderr, "jitprov-jvmti: Java %d: attaching needs HotSpot 17 or later (docs/attach.md)\n", java);
    return undo(kOnAttachTooOld);
  }
  a->names_vm = a->jopt.names != JvmOptions::Names::kJvmti && a->vm.namesUsable() && java >= 17;
  a->files_vm.store(a->names_vm, std::memory_order_relaxed);  // before any event
  if (a->jopt.names != JvmOptions::Names::kJvmti && !a->names_vm)
    logf("names from JVMTI (Java %d, VMStructs names %s)", java, a->vm.namesUsable() ? "usable" : "missing");
  // Before any event: the runtime is left when this fails (nothing published in it), the
  // JVMTI environment disposed.
  if (!createJitprov(*a)) return undo(kOnAttachStartFailed);
  // At OnLoad the rundown engine starts now (no code exists yet). Attached, after the
  // replays: its first rundown (an lttng session recording already) then holds them.
  if (!live && !startRundownEngine(*a)) return undo(kOnAttachStartFailed);
  // From here the agent stays, even if HotSpot dlcloses the library after a non-zero
  // OnAttach (linked -z nodelete: nothing is unmapped): its publisher runs, callbacks may.
  startPublisher(*a);
  if (live) {  // the heaps before the events: a load's level may need their blob scan
    std::lock_guard<std::mutex> g(a->qmu);
    heapsRead(*a);
  }
  if (!setUpEvents(jvmti)) return kOnAttachEventsFailed;
  bool replay_failed = false;
  cpu.reset();  // the start's own part ends: the replays' callbacks count as callbacks
  if (live) {
    // No VMInit in the live phase: what onVMInit does, here. The events are enabled
    // first: GenerateEvents replays nothing for an event that is not (docs/attach.md).
    const uint64_t t0 = nowNs();
    a->scan_why_not = scanRefusal(*a, java);
    if (a->scan_why_not.empty()) {
      bool all = false;
      logf("code heaps for the scan: %s", a->vm.readScanHeaps(&all).c_str());
      if (!all) a->scan_why_not = "a code heap could not be read";
    }
    bool stubs_failed = false, methods_replay = false;
    if (a->scan_why_not.empty()) {
      a->scan_checks = a->jopt.attach != JvmOptions::Attach::kUnchecked;
      // The nmethods, then the stubs by GenerateEvents (their names are HotSpot's own):
      // its walk of every blob under CodeCache_lock, the attach's one hold, finds the
      // blocks' headers in the caches, read just before, and starts on a fresh share of
      // the CPU (after the scan's tens of ms of CPU the scheduler would preempt this
      // thread sooner, inside the hold: 3.9 ms instead of 0.5 in one bench round of 7).
      a->scan_used = scanCodeHeaps(*a, vm, jvmti);
      if (a->scan_used && a->scan_nmethods == 0 && a->scan_blocks > 0) {
        // Blocks but no nmethod among them: the names were not read; replay.
        a->scan_used = false;
        a->scan_why_not = "no nmethod recognised in " + std::to_string(a->scan_blocks) + " blocks";
      }
      if (a->scan_used) {
        const timespec nap{0, 1'000'000};
        nanosleep(&nap, nullptr);
        a->vm.touchBlocks();
        // A failure here is the replay's failure (said below): the scan stands.
        stubs_failed = jvmti->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED) != JVMTI_ERROR_NONE;
      }
      // Code of a class listed that the scan could not name: replayed as well.
      methods_replay = a->scan_used && a->scan_unnamed > 0;
    }
    if (!a->scan_used) logf("scan not used (%s): replaying", a->scan_why_not.c_str());
    if (methods_replay) logf("the scan found %" PRIu64 " nmethods it could not name: replaying too", a->scan_unnamed);
    const jvmtiError replayed = !a->scan_used    ? replayEvents(jvmti)
                                : methods_replay ? jvmti->GenerateEvents(JVMTI_EVENT_COMPILED_METHOD_LOAD)
                                                 : JVMTI_ERROR_NONE;
    if (replayed != JVMTI_ERROR_NONE || stubs_failed) {
      std::lock_guard<std::mutex> g(a->mu);
      noteError(*a, "GenerateEvents failed: code compiled before the attach is missing");
      replay_failed = true;
    }
    publishQueued(*a, By::kInline);  // every replay in the registry before "attached"
    std::lock_guard<std::mutex> g(a->mu);
    a->attached = true;
    a->attach_replay_ns = nowNs() - t0;
    jitprov_memory_stats ms{};
    ms.sz = sizeof ms;
    (void)jitprov_memory_stats_get(a->rt, &ms);
    logf("attached: %s took %.1f ms, %" PRIu64 " versions live", a->scan_used ? "the scan" : "replays",
         a->attach_replay_ns / 1e6, ms.live_host_code);
  }
  if (live) {
    const hostagent::OwnCpu::Span own(a->own, true);
    if (!startRundownEngine(*a)) return kOnAttachStartFailed;  // the code is mirrored, no rundowns
  }
  // The agent stays and runs (as after code 5), but "attached" would promise a complete
  // registry: the command exits 11 with this code's name.
  if (replay_failed) {
    std::fprintf(stderr, "jitprov-jvmti: GenerateEvents failed: code compiled before the attach is missing\n");
    return kOnAttachReplayFailed;
  }
  logf("loaded: trigger=%s perfmap=%s jitdump=%s rundown=%s", a->opt.trigger.c_str(),
       a->opt.perfmap.empty() ? "off" : a->perfmap.final_path.c_str(),
       a->opt.jitdump.empty() ? "off" : a->opt.jitdump.c_str(), jitprov_rundown_mode_name(a->opt.mode));
  return kOnAttachOk;
}

}  // namespace
}  // namespace jitprov::jvmti

extern "C" {
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  return jitprov::jvmti::start(vm, options, false);
}
// `jitprov attach PID` (options "" when none), or `jcmd PID JVMTI.agent_load PATH [OPTIONS]`
// (options NULL when none): on HotSpot's Attach Listener thread, in the live phase.
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void*) {
  return jitprov::jvmti::start(vm, options, true);
}
JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {
  // The JVM is going away; the rundown thread was stopped at VMDeath. The runtime is
  // left to the process exit (late callbacks may still be on their way).
  // Once: HotSpot calls it for each -agentpath that named the library (a second one
  // was a no-op at OnLoad).
  if (jitprov::jvmti::g_agent != nullptr)
    if (jitprov_rundown* rd = std::exchange(jitprov::jvmti::g_agent->rd, nullptr); rd != nullptr)
      jitprov_rundown_destroy(rd);
}
}
