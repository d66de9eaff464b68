/* SPDX-License-Identifier: MIT */
// What every in-process host client of jitprov shares (the JVM agent, the .NET
// client): the options that configure the rundowns ("trigger=session,every:30,
// perfmap=/tmp,..."), the perf map written from each rundown's walk, and the start of
// the rundown engine. A client adds its own options through `extra`.
#pragma once

#include <jitprov/hist.h>
#include <jitprov/host_key_index.h>
#include <jitprov/jitprov.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "atomic_file.h"
#include "thread_names.h"

namespace jitprov::hostagent {

struct Options {
  std::string trigger = "session,exit";
  std::string perfmap = "/tmp";  // empty: off
  std::string jitdump;           // DIR of jit-PID.dump; empty: off
  int mode = JITPROV_RUNDOWN_LOCKFREE;
  uint64_t rate = 0;
  std::string stats;
  bool verbose = false;
};

// The options' help lines (the client prints its own header and extra options).
extern const char* const kCommonHelp;

// A count written in decimal digits only (strtoull alone takes "-1" as ULLONG_MAX, spaces
// and '+'): true and *out, or false.
bool parseCount(const std::string& v, uint64_t* out);

// publish=MS[/EVENTS]|inline, a client's (publisher.h): *ms the period (0: inline) and,
// when given, *events the count that ends a batch early (0: none). False: *why says
// what is accepted, and nothing is set.
bool parsePublish(const std::string& v, uint32_t* ms, size_t* events, std::string* why);

// Parses "k=v,k=v,...": a piece without '=' continues a trigger list
// (trigger=session,every:30). `extra(key, value, why)` takes the client's own keys: it
// returns 1 when it took the key, 0 when it does not know it, -1 (with `why`) when the
// value is bad. Returns "" or the message for the user ("help" returns "help").
std::string parseOptions(const std::string& text, Options* o,
                         const std::function<int(const std::string&, const std::string&, std::string*)>& extra,
                         const char* forbidden_trigger = nullptr, const char* forbidden_why = nullptr);

// "" when `v` is a perfmap= value the rundowns can write to ("off", or a writable
// directory), else why not.
std::string checkPerfMapDir(const std::string& v);

// The perf map sink: DIR/perf-PID.map rewritten whole at every rundown, one line per
// live version, "START SIZE NAME" (NAME is "namespace::name", or the bare name for
// versions of `bare_module`).
struct PerfMap {
  std::string final_path;
  uint64_t bare_module = 0;
  tools::AtomicFile file;  // open between a rundown's BEGIN and END
  bool open = false;
  uint64_t written = 0, lines = 0, errors = 0;
  std::string last_error;
};
void perfMapSink(void* ctx, const jitprov_sink_record* r);

// The environment lttng-ust's constructor reads, set before the runtime loads it (never
// over a value the user set):
//  - LTTNG_UST_ALLOW_BLOCKING=1: the rundown events go to a channel that may block
//    (docs/tracing.md); only jitprov's rundown thread emits there.
//  - LTTNG_UST_WITHOUT_BADDR_STATEDUMP=1, unless JITPROV_BADDR_STATEDUMP=1: lttng-ust's
//    base-address statedump parses the ELF headers of every library in the process when
//    it registers with a session and again at each session's start, whether or not a
//    session records those events (lttng_ust_statedump:bin_info, build_id, debug_link);
//    jitprov's traces do not use them, and it cost node 6-13 ms a start here
//    (docs/tracing.md, "lttng-ust's statedump in the agents' processes"). Children
//    inherit both, as the environment goes.
void setLttngEnvironment();

// Creates and starts the rundown engine from the options (with the perf map sink when
// perfmap is set; `pm` must outlive the engine), and `prepare` (optional) called at the
// start of every rundown (jitprov_rundown_config.prepare). Returns JITPROV_OK or an error.
int startRundowns(jitprov_runtime* rt, Options& o, PerfMap* pm, jitprov_rundown** out, void (*prepare)(void*) = nullptr,
                  void* prepare_ctx = nullptr);

// The jitdump sink (jitprov_jitdump_open) in o.jitdump, with the code copied (a host's
// published ranges are its live code): "" when off or opened, else why not. Call it
// before the first publication, so that every load is in the file with its time.
std::string openJitdump(jitprov_runtime* rt, const Options& o);
// Its counters as one JSON member, `"jitdump": {...},` and a newline (nothing when off).
void jitdumpStatsJson(FILE* f, jitprov_runtime* rt, const Options& o);
// Closes it (JIT_CODE_CLOSE) and says on stderr, after `who`, what it lost, if anything.
void closeJitdump(const char* who, jitprov_runtime* rt, const Options& o);

// CLOCK_MONOTONIC in ns.
uint64_t nowNs();

// Live versions per method (method id -> count), for a client that unloads a method with
// its last version: in one flat array (HostKeyIndex), not a node-based map (an
// allocation per method, frees and rehashes on the publisher's path). Its owner
// serialises the calls.
class LiveCounts {
 public:
  void add(uint64_t method) {
    const uint64_t n = index_.find(method);
    if (n != 0) index_.erase(method);
    index_.insert(method, n + 1);
  }
  // One fewer; true when that was its last (it is gone from here).
  bool drop(uint64_t method) {
    const uint64_t n = index_.find(method);
    if (n == 0) return false;
    index_.erase(method);
    if (n == 1) return true;
    index_.insert(method, n - 1);
    return false;
  }
  uint64_t count(uint64_t method) const { return index_.find(method); }

 private:
  HostKeyIndex index_;
};

// RAII: the calling thread goes by kRundownThread while it lives, so that the rundown
// engine's thread, which takes its creator's name, is named so; the old name after.
class RundownThreadName {
 public:
  RundownThreadName();
  ~RundownThreadName();
  RundownThreadName(const RundownThreadName&) = delete;
  RundownThreadName& operator=(const RundownThreadName&) = delete;

 private:
  char old_[16] = {};
  bool renamed_ = false;
};
// CLOCK_THREAD_CPUTIME_ID in ns: the calling thread's CPU time, user and system (a system
// call: the vDSO serves no CPU clock).
uint64_t threadCpuNs();

// The agent's own CPU time, for its stats file: what it spends on the runtime's threads
// (its callbacks and its start) and on the threads it brings (jitprov's rundown thread,
// lttng-ust's two "<comm>-ust" threads: /proc/self/task/*/schedstat). The runtime's own
// work to make the events the agent asks for is not in it: that is the floor's.
// The start is timed by the thread's CPU clock. The callbacks are timed by the monotonic
// clock (the vDSO's, ~25 ns): their wall time, an upper bound of their CPU time (it counts
// a preemption inside one). A thread's CPU clock is a system call (0.6 us on this
// paravirtualised machine, as much as a short callback), and a callback timed by it runs
// with the caches the call left: one in 16 timed that way and scaled gave node's client
// 98 ms of callbacks whose wall time was 30 ms.
struct OwnCpu {
  bool on = false;  // stats asked for: off, nothing is timed or counted
  std::atomic<uint64_t> start_ns{0};
  // The exit's work where an agent times it apart (the Node.js client's exit rundown and
  // last publication, on a thread of its own): its thread's CPU time.
  std::atomic<uint64_t> exit_ns{0};
  std::atomic<uint64_t> callbacks{0}, callbacks_wall_ns{0};
  // RAII: the outermost span on a thread times into start_ns (`start`: CPU time) or counts
  // one callback and its wall time; a span inside another counts nothing.
  class Span {
   public:
    Span(OwnCpu& own, bool start);
    ~Span();
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;
    // When it began (nowNs()), for a callback's outermost span; 0 for another (off, nested,
    // the start's), whose callback reads the clock itself if it times anything.
    uint64_t beganNs() const { return own_ != nullptr && !start_ ? t0_ : 0; }

   private:
    OwnCpu* own_ = nullptr;  // set: this span is the outermost one
    bool start_ = false, nested_ = false;
    uint64_t t0_ = 0;
  };
  // The agent's threads' CPU time now (jitprov's rundown thread, kRundownThread, the
  // publisher, kPublishThread, and lttng-ust's): before the rundown thread ends (jitprov_rundown_stop), as /proc
  // forgets it then.
  void snapshotThreads();
  // `  "own_cpu": {...},` and a newline: the callbacks' count and wall time, the start,
  // and the threads' CPU time (each thread's name and ns) of the snapshot, or of now when
  // none was taken; total_ns is their sum.
  void json(FILE* f);

 private:
  bool snapped_ = false;
  std::string threads_;  // JSON objects, comma separated
  uint64_t threads_ns_ = 0;
};

// A log2 histogram of callback durations, for the stats files (the trace ABI's buckets).
// Not synchronised: the agents record under their own mutex.
struct Hist {
  uint64_t count = 0, total_ns = 0, max_ns = 0;
  uint64_t buckets[kHistBuckets] = {};
  void add(uint64_t ns) {
    ++count;
    total_ns += ns;
    max_ns = std::max(max_ns, ns);
    ++buckets[log2Bucket(ns)];
  }
  uint64_t quantile(double q) const { return log2QuantileUpperBound(buckets, kHistBuckets, count, max_ns, q); }
};
// `  "NAME": {"count": ..., "total_ns": ..., "p50_ns": ..., "p99_ns": ..., "max_ns": ...},` and
// a newline (quantiles are their bucket's upper bound).
void histJson(FILE* f, const char* name, const Hist& h);

}  // namespace jitprov::hostagent
