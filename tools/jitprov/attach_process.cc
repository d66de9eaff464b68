// SPDX-License-Identifier: MIT
// jitprov's agent loaded into a running process (attach_process.h).
#include "attach_process.h"

#include "clr_attach.h"
#include "hotspot_attach.h"
#include "node_attach.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace jitprov::cli {
namespace {

using Clock = std::chrono::steady_clock;

// How long a process is given from its start to load its runtime and bring up its attach
// mechanism, and the pause between tries meanwhile.
constexpr std::chrono::milliseconds kStartingGrace{5000}, kStartingRetry{50};

// Milliseconds since PID started (/proc/PID/stat's starttime against /proc/uptime); -1
// when unknown.
long long ageMs(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t paren = text.rfind(')');  // the command in parentheses may hold anything
  if (paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(paren + 2));
  std::string f;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && fields >> f; ++i)  // fields 3 (state) to 22 (starttime)
    if (i == 22) start_ticks = std::strtoull(f.c_str(), nullptr, 10);
  std::ifstream up("/proc/uptime");
  double uptime_s = -1;
  if (!(up >> uptime_s) || start_ticks == 0) return -1;
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? static_cast<long long>(uptime_s * 1000) - static_cast<long long>(start_ticks * 1000 / hz) : -1;
}

AttachOutcome attachOnce(pid_t pid, const std::string& agent, const std::string& options,
                         std::chrono::milliseconds timeout, TargetInfo* t, AttachRequest* r) {
  AttachOutcome o = findTarget(pid, t);
  // "Already loaded" is the agent's answer (HotSpot: 74) or the runtime's with the
  // client's ready mark (CoreCLR: ALREADY_ACTIVE), never the maps': they keep the agent's
  // library and libjitprov after a start that failed and was undone, and a retry must go
  // through.
  if (o.status == kAttached) o = findAgent(*t, agent, &r->agent);
  if (o.status != kAttached) return o;
  r->target = t->target;
  r->options = options;
  r->timeout = timeout;
  if (t->target.runtime == Runtime::kNode) return attachNode(*t, *r);
  return t->target.runtime == Runtime::kHotSpot ? attachHotSpot(*t, *r) : attachCoreClr(*r);
}

}  // namespace

AttachOutcome attachProcess(pid_t pid, const std::string& agent, const std::string& options,
                            std::chrono::milliseconds timeout, TargetInfo* t, AttachRequest* r) {
  // A process that is starting (`app & jitprov attach $!`): the .NET host has not loaded
  // CoreCLR yet, or the runtime has not brought up its attach mechanism (AttachOutcome's
  // not_yet). Nothing was sent, so it is asked again until it is kStartingGrace old or
  // the timeout ends; an older one is answered at once (DOTNET_EnableDiagnostics=0,
  // --disable-sigusr1). A JVM is not: attached early in its start-up, it refused the
  // agent (no JVMTI 1.2 environment), where "not started yet" (exit 7) lets the user
  // try again.
  const auto deadline = Clock::now() + timeout;
  int tries = 0;
  for (;;) {
    const auto left =
        tries == 0 ? timeout : std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    AttachOutcome o = attachOnce(pid, agent, options, std::max(left, std::chrono::milliseconds(1)), t, r);
    ++tries;
    const long long age = o.not_yet ? ageMs(pid) : -1;
    if (!o.not_yet || age < 0 || age >= kStartingGrace.count() || Clock::now() + kStartingRetry >= deadline) {
      if (tries > 1 && o.status == kAttached)
        o.line += std::string(o.line.empty() ? "" : "; ") + "it was starting: attached at try " + std::to_string(tries);
      else if (tries > 1 && o.not_yet)
        o.line += " (still, " + std::to_string(age < 0 ? 0 : age / 1000) + " s after its start, at try " +
                  std::to_string(tries) + ")";
      return o;
    }
    std::this_thread::sleep_for(kStartingRetry);
  }
}

}  // namespace jitprov::cli
