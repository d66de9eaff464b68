// SPDX-License-Identifier: MIT
#include <jitprov/rundown.h>

#include "cvm_lock.h"
#include "fork.h"
#include "jitprov_usdt.h"
#include "pacer.h"
#include "rundown_emitter.h"
#include "trace.h"
#include "version_record.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>
#include <system_error>
#include <utility>

namespace jitprov {

RundownEngine::RundownEngine(Runtime& rt, RundownMode mode, RundownTriggers triggers)
    : RundownEngine(rt, std::vector<RundownMode>{mode}, triggers) {}

RundownEngine::RundownEngine(Runtime& rt, std::vector<RundownMode> modes, RundownTriggers triggers)
    : rt_(rt),
      modes_(modes.empty() ? std::vector<RundownMode>{RundownMode::kLockFree} : std::move(modes)),
      triggers_(triggers) {
  fork::trackHooks({&RundownEngine::forkPrepare, &RundownEngine::forkParent, &RundownEngine::forkChild, this});
}

RundownMode RundownEngine::nextMode() noexcept {
  // Only the engine's thread (and stop(), after joining it) triggers: relaxed suffices.
  const uint64_t i = mode_turn_.fetch_add(1, std::memory_order_relaxed);
  return modes_[i % modes_.size()];
}

void RundownEngine::setEmitter(std::unique_ptr<RundownEmitter> e) noexcept { emitter_ = std::move(e); }

RundownEngine::~RundownEngine() {
  {
    std::lock_guard<std::mutex> g(life_mu_);
    closing_ = true;  // runNow() calls from now on return at once
  }
  stop();  // cuts short the rundown in progress, whoever runs it
  {
    // runNow() callers that were already inside: their rundowns were cut short (or had
    // not begun: they return without one); wait until they have left.
    std::unique_lock<std::mutex> g(life_mu_);
    life_cv_.wait(g, [this] { return calls_ == 0; });
  }
  fork::untrackHooks(this);
  if (const int fd = wake_fd_.load(); fd >= 0) close(fd);
}

// The child has only the thread that forked. A rundown another thread was running holds
// run_mu_ there for good, and its rundownActive(true) is never undone: make the copy
// usable again (re-creating a mutex that no thread in this process can unlock).
void RundownEngine::forkPrepare(void* self) {
  auto* e = static_cast<RundownEngine*>(self);
  e->life_mu_.lock();
  e->sessions_mu_.lock();
  e->results_mu_.lock();
}
void RundownEngine::forkParent(void* self) {
  auto* e = static_cast<RundownEngine*>(self);
  e->results_mu_.unlock();
  e->sessions_mu_.unlock();
  e->life_mu_.unlock();
}
void RundownEngine::forkChild(void* self) {
  auto* e = static_cast<RundownEngine*>(self);
  // Not taken by forkPrepare: a stop() holds it across the exit rundown, whose prepare
  // callback may wait for the CVM lock the fork's handlers hold. A start() or stop()
  // another thread was in has no thread here to finish it.
  if (e->control_mu_.try_lock())
    e->control_mu_.unlock();
  else
    new (&e->control_mu_) std::mutex();
  if (e->run_mu_.try_lock()) {
    e->run_mu_.unlock();
  } else {
    new (&e->run_mu_) std::mutex();
    if (e->running_) e->rt_.rundownActive(false);
    e->running_ = false;
  }
  e->calls_ = 0;                 // their threads are not here
  e->pending_sessions_.clear();  // the parent's sessions: the child's are its own
  // The eventfd is the parent's too: a start() here makes the child's own (sharing it,
  // the two processes' threads took each other's wake-ups, and a request was lost).
  if (const int fd = e->wake_fd_.exchange(-1); fd >= 0) close(fd);
  e->results_mu_.unlock();
  e->sessions_mu_.unlock();
  e->life_mu_.unlock();
}

Result<void> RundownEngine::start() {
  const std::lock_guard<std::mutex> control(control_mu_);
  if (thread_.joinable()) return Errc::kBusy;
  trace::loadProvider();
  // One eventfd for the engine's life, however often it is started and stopped.
  if (wake_fd_.load() < 0) wake_fd_.store(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (wake_fd_.load() < 0) return Errc::kCapacityExhausted;
  stop_.store(false);
  owner_pid_ = getpid();
  if (triggers_.session) {
    watch_token_ = trace::watchSessionStarts(&RundownEngine::onSessionStart, this);
    if (watch_token_ != 0) {
      // Sessions recording before the watch existed (the process started inside them, or
      // before this engine): they get their rundown as if they had just started. A
      // session starting meanwhile may be queued twice: pending_sessions_ dedups.
      for (void* s : trace::recordingSessions()) onSessionStart(this, s);
    }
  }
  try {
    thread_ = std::thread([this] { threadMain(); });
  } catch (const std::system_error&) {
    trace::unwatchSessionStarts(watch_token_);  // never leave a watch on an engine without a thread
    watch_token_ = 0;
    return Errc::kCapacityExhausted;
  }
  // A request() or signal before the eventfd existed wrote nothing: the thread, which
  // sleeps untimed when no trigger is timed, looks at them now.
  if (api_pending_.load(std::memory_order_acquire) || signal_pending_.load(std::memory_order_acquire)) wake();
  return {};
}

void RundownEngine::onSessionStart(void* self, void* session) {
  // lttng-ust's listener thread, its locks held: queue and wake, nothing else.
  auto* e = static_cast<RundownEngine*>(self);
  if (getpid() != e->owner_pid_) return;  // a forked child's copy: its thread is the parent's
  {
    std::lock_guard<std::mutex> g(e->sessions_mu_);
    if (std::find(e->pending_sessions_.begin(), e->pending_sessions_.end(), session) == e->pending_sessions_.end())
      e->pending_sessions_.push_back(session);
  }
  e->wake();
}

void RundownEngine::cancelRunning() {
  cancel_.store(true, std::memory_order_relaxed);  // a rundown in progress ends soon
  { std::lock_guard<std::mutex> wait_for_it(run_mu_); }
  cancel_.store(false, std::memory_order_relaxed);
}

void RundownEngine::stop() {
  const std::lock_guard<std::mutex> control(control_mu_);
  if (!thread_.joinable()) {
    cancelRunning();  // a runNow() on another thread
    return;
  }
  // No onSessionStart() into this engine after this (in a forked child too: lttng-ust
  // restarts its listener there, and the engine's memory goes away with it).
  trace::unwatchSessionStarts(watch_token_);
  watch_token_ = 0;
  if (getpid() != owner_pid_) {
    // A forked child: the thread exists only in the parent. Nothing to join or run.
    thread_.detach();
    cancelRunning();
    return;
  }
  stop_.store(true, std::memory_order_release);
  cancel_.store(true, std::memory_order_relaxed);
  wake();
  thread_.join();
  cancelRunning();  // and a runNow() on another thread; then the exit rundown runs whole
  // (run(), not runNow(): the destructor's stop() runs it too)
  if (triggers_.exit) run(nextMode(), RundownTrigger::kExit, trace::recordingSessions());
}

void RundownEngine::wake() noexcept {
  const int fd = wake_fd_.load(std::memory_order_acquire);  // lock-free: async-signal-safe
  if (fd < 0) return;
  const uint64_t one = 1;
  ssize_t r = write(fd, &one, sizeof one);  // async-signal-safe
  (void)r;
}

void RundownEngine::request() noexcept {
  api_pending_.store(true, std::memory_order_release);  // pairs with the exchange in threadMain
  wake();
}

void RundownEngine::requestFromSignal() noexcept {
  signal_pending_.store(true, std::memory_order_release);  // pairs with the exchange in threadMain
  wake();
}

void RundownEngine::threadMain() {
  const uint64_t start = monotonicNs();
  bool at_done = triggers_.at_sec < 0;
  uint64_t next_every = triggers_.every_sec > 0 ? start + uint64_t(triggers_.every_sec * 1e9) : 0;
  // Without the session watch: the rundown events going from disabled to enabled.
  const bool poll_enabled = triggers_.session && watch_token_ == 0;
  bool was_enabled = trace::rundownEventsEnabled();
  // A session that is already tracing when we start counts as "just started".
  if (poll_enabled && was_enabled) runNow(nextMode(), RundownTrigger::kSession);
  // How long to sleep: kPollMs while the session state is polled; otherwise until the
  // next timed trigger (rounded up: never awake before it), or until woken (-1: nothing
  // timed). Everything else (a session start, a request, a signal, stop) writes the
  // eventfd. A 20 ms tick costs a JVM under the agent ~550 wake-ups in an 11 s javac run
  // for nothing (docs/jvm-agent.md, "The agent against its floor").
  auto sleepMs = [&]() -> int {
    if (poll_enabled) return kPollMs;
    uint64_t due = UINT64_MAX;
    if (!at_done) due = start + uint64_t(triggers_.at_sec * 1e9);
    if (next_every != 0) due = std::min(due, next_every);
    if (due == UINT64_MAX) return -1;
    const uint64_t now = monotonicNs();
    if (due <= now) return 0;
    return int(std::min<uint64_t>((due - now + 999999) / 1000000, INT32_MAX));
  };
  while (!stop_.load(std::memory_order_acquire)) {
    const int fd = wake_fd_.load(std::memory_order_relaxed);  // start() made it before this thread
    pollfd p{fd, POLLIN, 0};
    (void)poll(&p, 1, sleepMs());
    uint64_t drain;
    while (read(fd, &drain, sizeof drain) > 0) {
    }
    if (stop_.load(std::memory_order_acquire)) break;
    if (poll_enabled) {
      const bool enabled = trace::rundownEventsEnabled();
      if (enabled && !was_enabled) runNow(nextMode(), RundownTrigger::kSession);
      was_enabled = enabled;
    }
    std::vector<void*> started;
    {
      std::lock_guard<std::mutex> g(sessions_mu_);
      started.swap(pending_sessions_);
    }
    if (!started.empty()) {
      // Only those that record our events (lttng-ust's statedump starts every session),
      // all in one walk.
      const std::vector<void*> recording = trace::recordingSessions();
      std::erase_if(started,
                    [&](void* s) { return std::find(recording.begin(), recording.end(), s) == recording.end(); });
      if (!started.empty()) run(nextMode(), RundownTrigger::kSession, std::move(started));
    }
    if (stop_.load(std::memory_order_acquire)) break;  // no new rundown once stop() began
    if (signal_pending_.exchange(false, std::memory_order_acq_rel)) {
      if (triggers_.signal) runNow(nextMode(), RundownTrigger::kSignal);
    }
    if (api_pending_.exchange(false, std::memory_order_acq_rel)) runNow(nextMode(), RundownTrigger::kApi);
    const uint64_t now = monotonicNs();
    if (!at_done && now >= start + uint64_t(triggers_.at_sec * 1e9)) {
      at_done = true;
      runNow(nextMode(), RundownTrigger::kAt);
    }
    if (next_every != 0 && now >= next_every) {
      runNow(nextMode(), RundownTrigger::kEvery);
      next_every = monotonicNs() + uint64_t(triggers_.every_sec * 1e9);
    }
  }
}

RundownResult RundownEngine::runNow(RundownMode mode, RundownTrigger trigger) {
  {
    std::lock_guard<std::mutex> g(life_mu_);
    if (closing_) {
      RundownResult none;
      none.mode = mode;
      none.trigger = trigger;
      none.cut_short = true;
      return none;
    }
    ++calls_;
  }
  RundownResult r = run(mode, trigger, trace::recordingSessions());
  std::lock_guard<std::mutex> g(life_mu_);
  --calls_;
  life_cv_.notify_all();  // under the lock: the destructor frees the engine once it has it
  return r;
}

// One rundown's walk and emission, for run(): its begin (rundown_begin, the modules),
// each version (the event, the sink, stall detection), the pacing between the walk's
// read sections, the walk's figures, and its end. On the rundown's thread, run_mu_ held.
class RundownEngine::Pass {
 public:
  Pass(RundownEngine& e, const trace::Rundown& ev, RundownMode mode, RundownTrigger trigger, RundownResult& r,
       std::unique_lock<std::mutex>& turn)
      : e_(e),
        turn_(turn),
        ev_(ev),
        mode_(mode),
        trigger_(trigger),
        r_(r),
        locking_(mode == RundownMode::kLocked      ? WalkLocking::kWholeWalk
                 : mode == RundownMode::kPerMethod ? WalkLocking::kPerMethod
                                                   : WalkLocking::kNone),
        pacer_(locking_ == WalkLocking::kNone && r.traced ? e.max_rate_ : 0, kBurst, monotonicNs()) {}

  WalkLocking locking() const noexcept { return locking_; }
  void begin(uint64_t begin_seq);
  // A rundown into lttng alone (no test emitter, no sink): the walk fills the event's
  // record in place (Runtime::walkCompleteRecords) and out() emits it.
  bool plain() const noexcept { return plain_; }
  // Its emission of the records (abandoned and emitted are counted there, in either path).
  trace::RecordEmitter& out() noexcept { return out_; }
  // Otherwise, from a view. Whether it was emitted: the counts are of those.
  bool version(const VersionView& v);
  void pace();
  void count(const CompleteWalk& cw);
  void end(const std::vector<void*>& sessions);

 private:
  // Stall detection without a clock read per event: lttng-ust's blocking writer sleeps
  // 100 ms each time it finds the sub-buffers full, so a window of events that took more
  // than 50 ms had to wait for space. Counted as `retried`. A window is 256 events in
  // the lock-free walk (a clock read every 256: 2.5 instructions a version), 64 when
  // the walk takes the lock per method or holds it, where waiting for the lock alone
  // must not look like a stall (64 waits of 780 us).
  static constexpr uint64_t kStallNs = 50'000'000;

  RundownEngine& e_;
  std::unique_lock<std::mutex>& turn_;  // the runtime's rundown turn, until the begin is emitted
  const trace::Rundown& ev_;
  const RundownMode mode_;
  const RundownTrigger trigger_;
  RundownResult& r_;
  const WalkLocking locking_;
  const bool plain_ = e_.emitter_ == nullptr && e_.sink_ == nullptr;
  const uint64_t window_mask_ = locking_ == WalkLocking::kNone ? 255 : 63;
  // Pacing (setMaxRate, pacer.h): between read sections, sleep until the schedule
  // catches up. Never while holding the lock (locked modes are not paced: they exist to
  // be measured). A rundown that fell behind resumes at most kBurst events ahead of the
  // rate: four walk batches, about 400 KB of records, a fifth of lttng's default
  // channel on one CPU.
  static constexpr uint64_t kBurst = 4096;
  Pacer pacer_;
  uint64_t window_start_ = monotonicNs();
  // The events emitted, and after stop() the versions abandoned: it cuts a rundown short,
  // the rest of the walk emits nothing (about 30 ns a version, so shutdown waits a
  // bounded time), and rundown_end says so. Both counted in out_, by either path.
  trace::RecordEmitter out_{ev_, e_.cancel_, window_mask_, [](void* p) { static_cast<Pass*>(p)->window(); }, this};

  void window();
};

void RundownEngine::Pass::begin(uint64_t begin_seq) {
  if (e_.emitter_ != nullptr)
    e_.emitter_->begin(ev_, mode_, trigger_, r_.method_count, begin_seq);
  else
    trace::rundownBegin(ev_, mode_, trigger_, r_.method_count, begin_seq);
  turn_.unlock();  // the next rundown of this runtime, by any engine, may begin
  if (e_.sink_ != nullptr) e_.sink_(e_.sink_ctx_, SinkEvent{SinkEvent::kBegin, r_.rundown_id, nullptr, nullptr});
  r_.modules = e_.rt_.walkModules([&](const ModuleView& m) {
    trace::rundownModule(ev_, m);
    if (e_.sink_ != nullptr) e_.sink_(e_.sink_ctx_, SinkEvent{SinkEvent::kModule, r_.rundown_id, nullptr, &m});
  });
}

bool RundownEngine::Pass::version(const VersionView& v) {
  if (e_.cancel_.load(std::memory_order_relaxed)) {
    ++out_.abandoned;
    return false;
  }
  if (e_.emitter_ == nullptr) {
    trace::rundownMethod(ev_, v);
  } else if (!e_.emitter_->method(ev_, v)) {
    return false;  // a test emitter's fault (rundown_emitter.h)
  }
  if (e_.sink_ != nullptr) e_.sink_(e_.sink_ctx_, SinkEvent{SinkEvent::kVersion, r_.rundown_id, &v, nullptr});
  if ((++out_.emitted & window_mask_) == 0) window();
  return true;
}

void RundownEngine::Pass::window() {
  const uint64_t now = monotonicNs();
  if (now - window_start_ > kStallNs) r_.retried += (now - window_start_ + kStallNs) / (2 * kStallNs);
  window_start_ = now;
}

void RundownEngine::Pass::pace() {
  // Pacing, between the walk's read sections (every 1024 methods): sleeping inside one
  // would hold up every grace period, and so reclamation and fork(). In slices of at
  // most 10 ms, so that stop() is not kept waiting.
  if (!pacer_.paced()) return;
  uint64_t now = monotonicNs();
  const uint64_t due = pacer_.dueNs(now, out_.emitted);
  while (due > now + 50000 && !e_.cancel_.load(std::memory_order_relaxed)) {
    const timespec ts = toTimespec(std::min<uint64_t>(due - now, 10'000'000));
    nanosleep(&ts, nullptr);
    now = monotonicNs();
  }
  window_start_ = now;  // a pacing sleep is not a stall
}

void RundownEngine::Pass::count(const CompleteWalk& cw) {
  // Of what was emitted (version() returned true): the records the trace holds.
  r_.methods = cw.methods();
  r_.caught_up_methods = cw.caught_up_methods;
  r_.versions = cw.walk.versions + cw.caught_up;
  r_.cut_short = out_.abandoned > 0;
  r_.skipped = cw.walk.skipped;
  r_.begin_seq = cw.begin_seq;
  r_.publish_seq = cw.publish_seq;
  r_.end_seq = cw.end_seq;
  r_.caught_up = cw.caught_up;
  r_.catch_up_ns = cw.catch_up_ns;
  r_.duration_ns = monotonicNs() - r_.begin_ns;
}

void RundownEngine::Pass::end(const std::vector<void*>& sessions) {
  // A session that stopped and started again while this rundown ran lost part of it
  // (and has its own rundown queued): its rundown_end says cut short.
  std::vector<void*> whole, restarted;
  {
    std::lock_guard<std::mutex> g(e_.sessions_mu_);
    for (void* sess : sessions) {
      const bool again =
          std::find(e_.pending_sessions_.begin(), e_.pending_sessions_.end(), sess) != e_.pending_sessions_.end();
      (again ? restarted : whole).push_back(sess);
    }
  }
  trace::RundownEnd end{r_.modules,     r_.methods, r_.versions,  r_.skipped,   r_.retried,          r_.duration_ns,
                        r_.publish_seq, r_.end_seq, r_.caught_up, r_.cut_short, r_.caught_up_methods};
  const trace::Rundown to_whole{trace::Sessions(whole), ev_.instance, ev_.id};
  const trace::Rundown to_restarted{trace::Sessions(restarted), ev_.instance, ev_.id};
  if (e_.emitter_ != nullptr) {
    e_.emitter_->end(to_whole, to_restarted, end);
  } else {
    trace::rundownEnd(to_whole, end);
    end.cut_short = true;
    trace::rundownEnd(to_restarted, end);
  }
  if (e_.sink_ != nullptr) e_.sink_(e_.sink_ctx_, SinkEvent{SinkEvent::kEnd, r_.rundown_id, nullptr, nullptr});
}

RundownResult RundownEngine::run(RundownMode mode, RundownTrigger trigger, std::vector<void*> sessions) {
  // Rundowns never overlap: the sink sees BEGIN ... END of one before the next.
  std::lock_guard<std::mutex> one_at_a_time(run_mu_);
  if (prepare_ != nullptr) prepare_(prepare_ctx_);  // the host's queued code, published
  running_ = true;
  const trace::Sessions to(sessions);
  RundownResult r;
  Runtime::RundownTurn turn = rt_.takeRundownTurn();  // released by the pass's begin
  r.rundown_id = turn.id;
  const trace::Rundown ev{to, rt_.instance(), r.rundown_id};
  r.mode = mode;
  r.trigger = trigger;
  r.sessions = sessions.size();
  r.traced = !sessions.empty();
  rt_.rundownActive(true);
  JITPROV_PROBE_RUNDOWN_BEGIN(r.rundown_id, static_cast<int>(mode), static_cast<int>(trigger));
  r.begin_ns = monotonicNs();
  r.method_count = rt_.registeredMethods();
  Pass pass(*this, ev, mode, trigger, r, turn.lock);
  const auto begin = [&](uint64_t begin_seq) { pass.begin(begin_seq); };
  const auto between = [&] { pass.pace(); };
  if (pass.plain()) {
    pass.count(rt_.walkCompleteRecords(pass.locking(), begin, pass.out(), between));
  } else {
    pass.count(rt_.walkComplete(
        pass.locking(), begin, [&](const VersionView& v) { return pass.version(v); }, between));
  }
  pass.end(sessions);
  JITPROV_PROBE_RUNDOWN_END(r.rundown_id, r.methods, r.versions, r.skipped);
  rt_.rundownActive(false);
  running_ = false;
  {
    std::lock_guard<std::mutex> g(results_mu_);
    if (results_.size() == kKeptResults) results_.pop_front();
    results_.push_back(r);
  }
  completed_.fetch_add(1, std::memory_order_release);  // pairs with completed()
  return r;
}

std::vector<RundownResult> RundownEngine::results() const {
  std::lock_guard<std::mutex> g(results_mu_);
  return {results_.begin(), results_.end()};
}

}  // namespace jitprov
