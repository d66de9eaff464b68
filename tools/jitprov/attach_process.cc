// SPDX-License-Identifier: MIT
// jitprov's agent loaded into a running process (attach_process.h).
#include "attach_process.h"

#include "clr_attach.h"
#include "hotspot_attach.h"
#include "node_attach.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <thread>

namespace jitprov::cli {
namespace {

using Clock = std::chrono::steady_clock;

// How long a process that maps no runtime (a shell before its exec, java's launcher
// before it maps libjvm.so) is given to map one (others: kStartingGrace, attach.h), and
// the pause between tries meanwhile.
constexpr std::chrono::milliseconds kNoRuntimeGrace{1000}, kStartingRetry{50};
constexpr std::chrono::milliseconds kTryRoom{2000};

AttachOutcome attachOnce(pid_t pid, unsigned long long born, const std::string& agent, const std::string& options,
                         std::chrono::milliseconds timeout, bool starting, TargetInfo* t, AttachRequest* r) {
  AttachOutcome o = findTarget(pid, t, born);
  // "Already loaded" is the agent's answer (HotSpot: 74) or the runtime's with the
  // client's ready mark (CoreCLR: ALREADY_ACTIVE), never the maps': they keep the agent's
  // library and libjitprov after a start that failed and was undone, and a retry must go
  // through.
  if (o.status == kAttached) o = findAgent(*t, agent, &r->agent);
  if (o.status != kAttached) return o;
  r->target = t->target;
  r->options = options;
  r->timeout = timeout;
  r->starting = starting;
  if (t->target.runtime == Runtime::kNode) return attachNode(*t, *r);
  return t->target.runtime == Runtime::kHotSpot ? attachHotSpot(*t, *r) : attachCoreClr(*r);
}

// Whether an outcome of a process `age_ms` old may change if asked again: nothing was
// loaded, and the process may be starting (AttachOutcome::not_yet; a process mapping no
// runtime in its first second, as a shell that has not run exec yet).
bool askAgain(const AttachOutcome& o, long long age_ms) {
  using NotYet = AttachOutcome::NotYet;
  if (o.not_yet == NotYet::kStarting) return true;  // until the deadline
  if (age_ms < 0) return false;
  if (o.not_yet == NotYet::kYoung) return age_ms < kStartingGrace.count();
  return o.status == kNotARuntime && age_ms < kNoRuntimeGrace.count();
}

// Asks `once` again every kStartingRetry while askAgain(), until `cancelled`, or until
// too little of `timeout` is left for a whole try: one begun with milliseconds left could
// send a node its SIGUSR1 and give up before its inspector opened, or leave CoreCLR an
// AttachProfiler to answer after the command gave up. A try is told whether the process
// may still be waited for (the age, when the try began, of the process first seen, which
// started at `born`: a JVM not initialized yet is answered "not yet" only then), and
// askAgain() judges by that same age, so that a try made as its grace ends is followed
// by one that attaches. The line says how it went.
AttachOutcome askUntilStarted(std::chrono::milliseconds timeout, const std::function<bool()>& cancelled,
                              unsigned long long born,
                              const std::function<AttachOutcome(std::chrono::milliseconds, bool)>& once) {
  const auto start = Clock::now(), deadline = start + timeout;
  const auto room = std::min(timeout / 2, kTryRoom);
  for (int tries = 1;; ++tries) {
    const auto left =
        tries == 1 ? timeout : std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const long long age = processAgeMs(born);
    AttachOutcome o = once(std::max(left, std::chrono::milliseconds(1)), age >= 0 && age < kStartingGrace.count());
    const bool checked = o.status != kAttached && o.status != kAlreadyLoaded;
    const bool again = checked && askAgain(o, age) && !(cancelled && cancelled());
    if (again && Clock::now() + kStartingRetry + room < deadline) {
      std::this_thread::sleep_for(kStartingRetry);
      continue;
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    const std::string how = std::to_string(tries) + " tries in " + std::to_string(ms) + " ms";
    if (tries > 1 && o.status == kAttached) {
      o.line += std::string(o.line.empty() ? "" : "; ") + "it was starting: attached after " + how;
    } else if (tries > 1 && o.not_yet == AttachOutcome::NotYet::kStarting) {
      o.line += " (still, after " + how + ": a runtime paused at its start waits for a diagnostics monitor)";
    } else if (again && o.not_yet == AttachOutcome::NotYet::kYoung) {
      // Young still, but no time left for another try: the timeout's, not the process's.
      o.status = kTimedOut;
      o.line += " (still starting when the timeout ran out, after " + how + ")";
    } else if (tries > 1 && o.not_yet == AttachOutcome::NotYet::kYoung) {
      o.line += " (still, " + std::to_string(age < 0 ? 0 : age / 1000) + " s after its start, after " + how + ")";
    } else if (tries > 1 && checked) {
      o.line += " (after " + how + ")";
    }
    return o;
  }
}

}  // namespace

AttachOutcome findStartedTarget(pid_t pid, TargetInfo* t, std::chrono::milliseconds timeout,
                                const std::function<bool()>& cancelled) {
  const unsigned long long born = processStartTicks(pid);
  return askUntilStarted(timeout, cancelled, born,
                         [&](std::chrono::milliseconds, bool) { return findTarget(pid, t, born); });
}

AttachOutcome attachProcess(pid_t pid, const std::string& agent, const std::string& options,
                            std::chrono::milliseconds timeout, TargetInfo* t, AttachRequest* r,
                            const std::function<bool()>& cancelled, unsigned long long born) {
  // A process that is starting (`app & jitprov attach $!`) is asked again (askAgain);
  // an older one is answered at once (DOTNET_EnableDiagnostics=0, --disable-sigusr1,
  // -Xrs).
  if (born == 0) born = processStartTicks(pid);
  return askUntilStarted(timeout, cancelled, born, [&](std::chrono::milliseconds left, bool starting) {
    return attachOnce(pid, born, agent, options, left, starting, t, r);
  });
}

}  // namespace jitprov::cli
