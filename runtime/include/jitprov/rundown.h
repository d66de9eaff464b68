/* SPDX-License-Identifier: MIT */
// RundownEngine: the rundown thread. Emits jitprov_rundown events, one `method` per
// published native code version, bracketed by rundown_begin and rundown_end, when a
// trigger fires (docs/spec.md "Rundown").
//
// In mode lockfree the rundown never takes the code-version-manager lock (G1); the walk
// it emits from gives G2-G4 (runtime.h). Modes locked and per-method hold the lock
// across the whole walk and emission, or around each method: kept to measure against.
//
// Threads: start()/stop()/request()/runNow()/results() from any thread;
// requestFromSignal() from a signal handler; the rundown runs on the engine's thread
// (runNow() runs one on the caller's thread instead). The destructor may run while
// runNow() runs on other threads: it cuts their rundowns short and waits for them to
// return; a call that begins after the destructor did is the caller's bug.
//
// fork(): the engine's locks are held across fork() (fork.cc), so that the child's copy
// is consistent; its thread, and any rundown other threads ran, are not in the child:
// there the engine can be destroyed, and runNow() works.
#pragma once

#include <jitprov/result.h>
#include <jitprov/runtime.h>
#include <jitprov/triggers.h>
#include <jitprov/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace jitprov {

// RundownTriggers, kMaxTriggerSeconds and parseTriggers(): jitprov/triggers.h.

// A duration in nanoseconds as a timespec (tv_nsec below 1e9, as nanosleep requires).
inline timespec toTimespec(uint64_t ns) noexcept {
  return timespec{time_t(ns / 1000000000ULL), long(ns % 1000000000ULL)};
}

struct RundownResult {
  uint64_t rundown_id = 0;
  RundownMode mode = RundownMode::kLockFree;
  RundownTrigger trigger = RundownTrigger::kApi;
  uint64_t method_count = 0;  // methods registered when it began (ever: unloaded ones too)
  uint64_t modules = 0;
  uint64_t methods = 0;   // methods with records in it (walked or caught up, each once)
  uint64_t versions = 0;  // its method records
  uint64_t skipped = 0;   // versions seen with code not yet published
  uint64_t retried = 0;   // emission stalls (see rundown.cc: waits for trace buffer space)
  uint64_t begin_ns = 0;  // CLOCK_MONOTONIC
  uint64_t duration_ns = 0;
  bool traced = false;    // recorded into at least one session
  uint64_t sessions = 0;  // lttng sessions it was recorded into
  // The publication sequence (docs/spec.md "The publication sequence", runtime.h CompleteWalk).
  uint64_t begin_seq = 0, publish_seq = 0, end_seq = 0;
  uint64_t caught_up = 0;          // versions added by the catch-up (included in `versions`)
  uint64_t caught_up_methods = 0;  // methods whose records the catch-up alone added (in `methods`)
  uint64_t catch_up_ns = 0;        // time the catch-up took
  bool cut_short = false;          // stop() ended it before its walk did: not complete
};

class RundownEmitter;  // internal (runtime/rundown_emitter.h)

class RundownEngine {
 public:
  RundownEngine(Runtime& rt, RundownMode mode, RundownTriggers triggers);
  // Triggered rundowns take their modes in turn from `modes` (to compare modes in one
  // process: tools/bench/rundown).
  RundownEngine(Runtime& rt, std::vector<RundownMode> modes, RundownTriggers triggers);
  ~RundownEngine();  // stop()
  RundownEngine(const RundownEngine&) = delete;
  RundownEngine& operator=(const RundownEngine&) = delete;

  Result<void> start();
  // Stops the thread and cuts short a rundown in progress, on the engine's thread or in
  // runNow() on another, and waits for it to end; then runs the exit rundown when that
  // trigger is set and the thread was running. runNow() works after it.
  void stop();
  // API trigger: queue a rundown (coalesced with one already queued).
  void request() noexcept;
  // Async-signal-safe: queue a signal-triggered rundown.
  void requestFromSignal() noexcept;
  // Runs one rundown now on the calling thread, into every session recording the
  // rundown events.
  RundownResult runNow(RundownMode mode, RundownTrigger trigger);

  // The results of the last kKeptResults rundowns, oldest first (older ones are
  // counted by completed() only, so that an engine on every:5 for months stays small).
  static constexpr size_t kKeptResults = 1024;
  std::vector<RundownResult> results() const;
  uint64_t completed() const noexcept { return completed_.load(std::memory_order_acquire); }
  // The mode the next triggered rundown will use.
  RundownMode mode() const noexcept { return modes_[mode_turn_.load(std::memory_order_relaxed) % modes_.size()]; }

  // Caps the rundown's emission rate (events per second; 0 = as fast as it can). A
  // lock-free rundown blocks nobody however long it takes, so it can afford to pace
  // itself to what a non-blocking (discard-mode) channel's consumer drains. Set before
  // start().
  void setMaxRate(uint64_t events_per_sec) noexcept { max_rate_ = events_per_sec; }
  // Internal (runtime/rundown_emitter.h): emit through `e` instead of the tracepoints.
  // Set before start().
  void setEmitter(std::unique_ptr<RundownEmitter> e) noexcept;

  // A second consumer of every rundown's walk, besides the LTTng events (the JVM
  // agent's perf map): called on the rundown's thread with the rundown's begin, each
  // module, each version, and its end. It must not call the runtime's mutating API.
  struct SinkEvent {
    enum Kind : uint8_t { kBegin, kModule, kVersion, kEnd } kind;
    uint64_t rundown_id;
    const VersionView* version;  // kVersion
    const ModuleView* module;    // kModule
  };
  using Sink = void (*)(void* ctx, const SinkEvent& e);
  // Set before start().
  void setSink(Sink sink, void* ctx) noexcept {
    sink_ = sink;
    sink_ctx_ = ctx;
  }
  // Called at the start of every rundown, before its rundown_begin, on the thread that
  // runs it, one rundown at a time (run_mu_ held: it must not call this engine's stop(),
  // runNow() or destructor, and a stop() waits for it), holding no lock of the
  // registry's: it may publish
  // (a host that queues its runtime's code events publishes them here, so that the
  // rundown holds everything its runtime reported before it began). Set before start().
  using Prepare = void (*)(void* ctx);
  void setPrepare(Prepare prepare, void* ctx) noexcept {
    prepare_ = prepare;
    prepare_ctx_ = ctx;
  }

  // How often the thread looks at the session state when lttng-ust's session starts
  // cannot be watched (then the trigger falls back to "rundown events became enabled").
  static constexpr int kPollMs = 20;

 private:
  void threadMain();
  void wake() noexcept;
  RundownResult run(RundownMode mode, RundownTrigger trigger, std::vector<void*> sessions);
  class Pass;  // one run()'s walk and emission (rundown.cc)
  // Cuts short the rundown in progress (any thread's) and waits until it has ended.
  void cancelRunning();
  static void onSessionStart(void* self, void* session);
  static void forkPrepare(void* self);
  static void forkParent(void* self);
  static void forkChild(void* self);

  Runtime& rt_;
  RundownMode nextMode() noexcept;
  const std::vector<RundownMode> modes_;
  std::atomic<uint64_t> mode_turn_{0};
  const RundownTriggers triggers_;
  // start() and stop() one at a time (thread_, watch_token_, wake_fd_'s creation): two
  // starts at once assigned thread_ twice (std::terminate), two stops joined it twice.
  std::mutex control_mu_;
  std::thread thread_;
  int owner_pid_ = 0;  // the process that started thread_ (a forked child has no thread)
  // eventfd: written by request*() (any thread, a signal handler), polled by the thread;
  // made by the first start(), which a request() may overlap.
  std::atomic<int> wake_fd_{-1};
  std::atomic<bool> stop_{false};
  std::atomic<bool> cancel_{false};  // stop(): cut the rundown in progress short
  // Set by request()/requestFromSignal(), consumed by the thread. lock-free atomics so
  // the signal handler may set them.
  std::atomic<bool> api_pending_{false};
  std::atomic<bool> signal_pending_{false};
  // Sessions that started and wait for their rundown (session trigger). Filled by
  // lttng-ust's thread through onSessionStart().
  std::mutex sessions_mu_;
  std::vector<void*> pending_sessions_;  // guarded by sessions_mu_
  uint64_t watch_token_ = 0;
  uint64_t max_rate_ = 0;
  std::unique_ptr<RundownEmitter> emitter_;  // null: the tracepoints
  Sink sink_ = nullptr;
  void* sink_ctx_ = nullptr;
  Prepare prepare_ = nullptr;
  void* prepare_ctx_ = nullptr;
  std::atomic<uint64_t> completed_{0};
  std::mutex run_mu_;     // one rundown at a time (the engine's thread and runNow callers)
  bool running_ = false;  // a rundown holds run_mu_ (guarded by it; read by forkChild)
  // runNow() callers inside the engine, and whether the destructor has begun: it waits
  // for the count to drop to 0, and calls that find it begun return at once.
  std::mutex life_mu_;
  std::condition_variable life_cv_;
  int calls_ = 0;         // guarded by life_mu_
  bool closing_ = false;  // guarded by life_mu_
  mutable std::mutex results_mu_;
  std::deque<RundownResult> results_;  // guarded by results_mu_; the last kKeptResults
};

}  // namespace jitprov
