/* SPDX-License-Identifier: MIT */
// JSON text the tools print or write. nlohmann::json's dump() throws on a string that is
// not UTF-8, and the strings the tools put in JSON come from outside: a command line or
// a thread's name (any bytes; the kernel cuts a comm in the middle of a character), a
// path, a name in a trace another producer wrote. Each invalid sequence is written as
// U+FFFD instead, so that a run's summary is never lost to one odd byte.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace jitprov::tools {

// `indent` as for nlohmann::json::dump(): -1 for one line.
inline std::string jsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace jitprov::tools
