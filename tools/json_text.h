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

// Text from outside (a trace's names, a file's fields, a process's command line) made
// safe for a terminal: every control character (an ESC sequence, a newline that would
// make a line of its own) shown as '?'.
inline std::string terminalText(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

// Every string of a document, keys included, through terminalText: what a text report
// prints from it.
inline nlohmann::json terminalJson(const nlohmann::json& j) {
  if (j.is_string()) return terminalText(j.get<std::string>());
  if (j.is_array()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : j) a.push_back(terminalJson(x));
    return a;
  }
  if (j.is_object()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) o[terminalText(k)] = terminalJson(v);
    return o;
  }
  return j;
}

}  // namespace jitprov::tools
