// SPDX-License-Identifier: MIT
// libFuzzer target: the rundown trigger parser (jitprov-sim --rundown-trigger, the JVM
// agent's trigger=, jitprov_rundown_triggers_check). Accepted periods are finite and
// within the engine's nanosecond arithmetic; refusals say why.
#include <jitprov/triggers.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  jitprov::RundownTriggers t;
  std::string error;
  if (jitprov::parseTriggers(in, &t, &error)) {
    if (!std::isfinite(t.at_sec) || t.at_sec > jitprov::kMaxTriggerSeconds) std::abort();
    if (!std::isfinite(t.every_sec) || t.every_sec < 0 || t.every_sec > jitprov::kMaxTriggerSeconds) std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  return 0;
}
