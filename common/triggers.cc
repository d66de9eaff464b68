// SPDX-License-Identifier: MIT
// The rundown's option parser (triggers), in the common library: the runtime, the
// tools and the fuzz targets (tests/fuzz) link it.
#include <jitprov/split.h>
#include <jitprov/triggers.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

namespace jitprov {

bool parseTriggers(std::string_view list, RundownTriggers* out, std::string* error) {
  RundownTriggers t;
  for (const std::string_view item : splitList(list)) {
    if (item.empty() || item == "none") continue;
    auto seconds = [&](std::string_view v, double* dst) {
      std::string s(v);
      char* end = nullptr;
      errno = 0;
      const double d = std::strtod(s.c_str(), &end);
      if (s.empty() || end == nullptr || *end != '\0' || errno != 0 || !std::isfinite(d) || d < 0) {
        *error = "bad seconds in trigger '" + std::string(item) + "'";
        return false;
      }
      // The engine counts in uint64 nanoseconds: beyond this, seconds x 1e9 overflows.
      if (d > kMaxTriggerSeconds) {
        *error = "seconds in trigger '" + std::string(item) + "' exceed 1e9 (31 years)";
        return false;
      }
      *dst = d;
      return true;
    };
    if (item == "session") {
      t.session = true;
    } else if (item == "signal") {
      t.signal = true;
    } else if (item == "exit") {
      t.exit = true;
    } else if (item.rfind("at:", 0) == 0) {
      if (!seconds(item.substr(3), &t.at_sec)) return false;
    } else if (item.rfind("every:", 0) == 0) {
      if (!seconds(item.substr(6), &t.every_sec)) return false;
      if (t.every_sec <= 0) {
        *error = "every:SEC needs SEC > 0";
        return false;
      }
    } else {
      *error = "unknown trigger '" + std::string(item) + "' (session, signal, exit, at:SEC, every:SEC)";
      return false;
    }
  }
  *out = t;
  return true;
}

}  // namespace jitprov
