/* SPDX-License-Identifier: MIT */
// The rundown's triggers and their option parser (jitprov-sim --rundown-trigger, the JVM
// agent's trigger=, jitprov_rundown_triggers_check). Part of the common library.
#pragma once

#include <string>
#include <string_view>

namespace jitprov {

struct RundownTriggers {
  // Every lttng session that records the rundown events gets its own rundown when it
  // starts (and on `lttng regenerate statedump -s S`), sessions already recording none.
  bool session = false;
  bool signal = false;   // requestFromSignal() (the tools call it on SIGUSR2)
  bool exit = false;     // once more in stop()
  double at_sec = -1;    // once, this long after start() (< 0: off)
  double every_sec = 0;  // periodically (0: off)
};

// Longest at:/every: period (seconds): larger ones would overflow the engine's
// nanosecond arithmetic.
inline constexpr double kMaxTriggerSeconds = 1e9;

// Parses "session,signal,exit,at:SEC,every:SEC" (any combination, "none" for none).
// On error returns false and says why in *error.
bool parseTriggers(std::string_view list, RundownTriggers* out, std::string* error);

}  // namespace jitprov
