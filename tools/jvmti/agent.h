/* SPDX-License-Identifier: MIT */
// The JVM agent's state: its options, the jitprov runtime and rundown engine, HotSpot's
// VMStructs, the perf map, and the bookkeeping of the JVMTI callbacks
// (jitprov_jvmti.cc) with their counters (agent_stats.h writes them).
#pragma once

#include <jitprov/host_key_index.h>
#include <jitprov/jitprov.h>

#include "agent_options.h"
#include "agent_stats.h"
#include "host_agent.h"
#include "publisher.h"
#include "vm_structs.h"

#include <jvmti.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitprov::jvmti {

// The source lines of one load for the jitdump (lineEntries() in jitprov_jvmti.cc): the
// entries in address order, the file "package/dir/Source.java" that the first names.
struct Lines {
  std::vector<jitprov_line_entry> entries;
  std::string file;
  bool absent = false, error = false;
  uint64_t skipped = 0;
};

// The JVMTI events the callbacks queue for publication (docs/jvm-agent.md, "Publication
// off the Service Thread"): what only the callback can read (the comp level, the names
// of a method's first load, the lines) is read there; the registry's work, the trace
// event and the agent's address map are the publisher's, in the queue's order.
struct Queued {
  enum Kind : uint8_t { kLoad, kUnload, kStub } kind;
  bool osr = false;
  bool named = false;  // kLoad: names queued (the method's first load); kStub: always
  int16_t level = -1;  // kLoad: HotSpot's comp level, -1 unknown
  int32_t lines = -1;  // kLoad: its Lines in Queue::lines (jitdump only)
  int32_t scan = -1;   // kLoad: found by the attach's scan, its nmethod in Queue::scans
  uint64_t jmid = 0;   // kLoad, kUnload: the jmethodID
  uint64_t addr = 0;
  uint32_t size = 0;
  uint32_t text = 0;  // names in Queue::text: class, name, signature (a stub's: name)
  uint32_t cls_len = 0, name_len = 0, sig_len = 0;
};
struct Queue {
  std::vector<Queued> events;
  std::string text;
  std::vector<Lines> lines;
  std::vector<VmStructs::Nmethod> scans;
  void clear() {
    events.clear();
    text.clear();
    lines.clear();
    scans.clear();
  }
};

struct Agent {
  hostagent::Options opt;
  JvmOptions jopt;
  jvmtiEnv* jvmti = nullptr;
  jitprov_runtime* rt = nullptr;
  jitprov_rundown* rd = nullptr;
  uint64_t java_module = 0, stub_module = 0;
  VmStructs vm;
  hostagent::PerfMap perfmap;

  // ---- The queue: the callbacks' side (any thread; qmu) ---------------------------------
  // Lock order: mu, then qmu. The callbacks take qmu alone.
  // HotSpot's Service Thread comes to these with the caches its compilers left cold, a
  // miss a line: what every callback touches is declared together, from here to load_ns.
  // Its own CPU time (stats= only): callbacks, start, its threads (agent_stats.cc).
  hostagent::OwnCpu own;
  std::mutex qmu;  // guards this part
  Queue queued;
  bool lines_on = false;    // jitdump on and the capabilities granted (set before the events)
  bool heaps_read = false;  // the code heaps' bounds read (VmStructs::readHeaps; qmu)
  uint64_t loads = 0, unloads = 0, stubs = 0, name_failures = 0;
  uint64_t tier_by[4] = {0, 0, 0, 0};         // VmStructs::Source
  uint64_t by_level[6] = {0, 0, 0, 0, 0, 0};  // 0-4, 5 = unknown
  uint64_t osr = 0;
  // jmethodIDs whose names were queued (-> 1): a later load of one goes without (the
  // publisher finds its method by key). A flat array, one line a lookup (a
  // std::unordered_set's division, bucket and node were a third of the agent's samples
  // on the Service Thread).
  HostKeyIndex named;
  // Its thread, its wake-up state (qmu): queued events are published by it (publish=MS
  // apart while they come) or a rundown's prepare() while publisher.deferred(); else by
  // the callback that queued them (publish=inline, the jitdump, the publisher stopped or
  // not started).
  hostagent::Publisher publisher;
  hostagent::Hist load_ns, unload_ns;  // the callbacks' wall time
  // Names (the first load of a method): from VMStructs while names_vm, each of the first
  // kNameChecks compared with JVMTI's (name_mismatches: the differences, which turn
  // names_vm off); the buffers they are converted in, reused.
  static constexpr uint64_t kNameChecks = 32;
  bool names_vm = false;
  uint64_t names_vmstructs = 0, names_jvmti = 0, names_checked = 0, name_mismatches = 0;
  uint64_t hidden_names_checked = 0;  // of hidden classes, after the first kNameChecks
  uint64_t names_ns = 0;              // the names' wall time (stats: names.ms)
  std::string cls_buf, name_buf, sig_buf;

  // ---- The publisher's side (mu) ------------------------------------------------------
  std::mutex mu;                  // guards everything below
  Queue publishing;               // the batch being published (swapped with `queued`)
  hostagent::BatchStats batches;  // the batches published (empty ones not counted)
  // No map of its own code: jitprov's registry is it (jitprov_code_retire_host retires
  // by address and jmethodID, jitprov_code_find_overlap finds what new code lands on,
  // jitprov_method_live_code counts a method's). The methods whose last code went in
  // this batch (-> their jmethodID, 0 for a stub): unloaded at the batch's end
  // (forgetDead), so that class churn does not fill the registry and `named` with
  // methods of no code.
  std::vector<std::pair<uint64_t, uint64_t>> dead;
  uint64_t methods_unloaded = 0, stubs_unloaded = 0;
  uint64_t unknown_unloads = 0, refused = 0, errors = 0;  // replays: jitprov's stats
  // Unloads of a range whose live code is another method's (a replay of newer code got
  // there first): nothing retired.
  uint64_t stale_unloads = 0;
  // The attach's scan (attach=scan; scanCodeHeaps in jitprov_jvmti.cc): the nmethods it
  // published that no later publication or unload at their address has touched, by
  // code address. HotSpot reports no unload of code whose load it did not report, so
  // each is read again before every rundown (checkScanned) and retired once HotSpot
  // has unloaded it.
  struct Scanned {
    VmStructs::Nmethod nm;
    uint64_t jmid;
  };
  std::map<uint64_t, Scanned> scanned;
  bool scan_used = false, scan_checks = true;
  std::string scan_why_not;  // why the attach replayed instead (attach=scan asked)
  uint64_t scan_classes = 0, scan_methods = 0, scan_blocks = 0, scan_nmethods = 0, scan_alive = 0;
  uint64_t scan_queued = 0, scan_unmapped = 0, scan_unnamed = 0, scan_retired = 0, scan_checked = 0;
  uint64_t scan_check_ns = 0, scan_retired_on_publish = 0;  // of scan_retired: before code published there
  uint64_t scan_ns = 0, scan_last_check_ns = 0;
  bool attached = false;          // started by Agent_OnAttach
  uint64_t attach_replay_ns = 0;  // its GenerateEvents replays, inside OnAttach
  // Live code that a newer load landed on: stubs (HotSpot posts no event when it frees
  // one) and, should HotSpot ever free an nmethod without CompiledMethodUnload, methods.
  uint64_t superseded_stubs = 0, superseded_methods = 0;
  uint64_t methods = 0;
  // The jitdump's source files (lineEntries, on any thread, before Agent::mu): the same
  // from VMStructs, checked against JVMTI's for the first kNameChecks loads with lines.
  std::atomic<bool> files_vm{false};
  std::atomic<uint64_t> files_verified{0}, files_vmstructs{0}, files_jvmti{0}, file_mismatches{0};
  // Source lines for the jitdump (jitdump= only; lineEntries() in jitprov_jvmti.cc):
  // loads published with lines, their entries, loads without (JVMTI has no line table
  // or source file: ABSENT_INFORMATION; or no address map), other JVMTI errors, and
  // address map entries left out (a bytecode index before the first line, outside the
  // code's range or out of address order).
  uint64_t line_loads = 0, line_entries = 0, lines_absent = 0, line_errors = 0, line_map_skipped = 0;
  std::string first_error;
};

}  // namespace jitprov::jvmti
