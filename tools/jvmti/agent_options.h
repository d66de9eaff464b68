/* SPDX-License-Identifier: MIT */
// The JVM agent's options: -agentpath:/path/libjitprov-jvmti.so=OPTION,... (`help`
// lists them; docs/jvm-agent.md).
#pragma once

#include <jitprov/jitprov.h>

#include <cstdint>
#include <string>

namespace jitprov::jvmti {

struct Options {
  std::string trigger = "session,exit";
  std::string perfmap = "/tmp";  // empty: off
  int mode = JITPROV_RUNDOWN_LOCKFREE;
  uint64_t rate = 0;
  std::string stats;
  bool verbose = false;
};

// Parses "k=v,k=v,...": a piece without '=' continues the previous value
// (trigger=session,every:30). False when the JVM must not start: `help` (printed on
// stdout) or a bad option (one line on stderr).
bool parseOptions(const char* text, Options* o);

}  // namespace jitprov::jvmti
