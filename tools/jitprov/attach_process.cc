// SPDX-License-Identifier: MIT
// jitprov's agent loaded into a running process (attach_process.h).
#include "attach_process.h"

#include "clr_attach.h"
#include "hotspot_attach.h"
#include "node_attach.h"

namespace jitprov::cli {

AttachOutcome attachProcess(pid_t pid, const std::string& agent, const std::string& options,
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

}  // namespace jitprov::cli
