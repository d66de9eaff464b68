/* SPDX-License-Identifier: MIT */
// The JVM agent's options: -agentpath:/path/libjitprov-jvmti.so=OPTION,... (`help`
// lists them; docs/jvm-agent.md). Those of every host client (tools/hostagent), no
// signal trigger (HotSpot owns SIGUSR2).
#pragma once

#include "host_agent.h"

namespace jitprov::jvmti {

// The agent's own options, beside every host client's.
struct JvmOptions {
  // names=: where a method's names come from. kVmStructs (the default): HotSpot's
  // VMStructs, checked against JVMTI for the first kNameChecks methods (any difference
  // turns them off for good); kJvmti: JVMTI for every method; kMutant: a test hook,
  // VMStructs read one byte off, which that check must catch.
  enum class Names { kVmStructs, kJvmti, kMutant } names = Names::kVmStructs;
  // publish=MS/EVENTS: the callbacks queue their events and the agent's publisher
  // thread publishes them every MS ms while they come, or as soon as EVENTS are queued
  // (0: the period alone); a rundown first publishes what is queued. MS 0
  // (publish=inline): each callback publishes its own. A jitdump publishes inline,
  // whatever this says (its records carry the loads' times). The defaults: a batch's
  // first events cost the most (docs/jvm-agent.md, "Publication off the Service Thread").
  uint32_t publish_ms = 250;
  // attach=: how an attach finds the code compiled before it (docs/attach.md). kScan
  // (the default): the code heaps read without a lock (VMStructs), each nmethod found
  // checked again before every rundown and retired once HotSpot unloads it; used on
  // Java 17 with every field there and no jitdump, else kReplay: GenerateEvents, which
  // holds CodeCache_lock while it queues every nmethod. kUnchecked: a test hook, the
  // scan without the checks (its code never retired), which the jvm-attach test must
  // catch.
  enum class Attach { kScan, kReplay, kUnchecked } attach = Attach::kScan;
  size_t publish_batch = 1024;
};

// False when the JVM must not start: `help` (printed on stdout) or a bad option (one
// line on stderr).
bool parseOptions(const char* text, hostagent::Options* o, JvmOptions* j);

}  // namespace jitprov::jvmti
