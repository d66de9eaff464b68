// SPDX-License-Identifier: MIT
#include "agent_options.h"

#include "atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace jitprov::jvmti {
namespace {

const char kHelp[] =
    "jitprov-jvmti: HotSpot's compiled code in jitprov's lock-free rundown and a perf map\n"
    "usage: java -agentpath:/path/libjitprov-jvmti.so[=OPTION,...] ...\n"
    "options (comma-separated; a trigger list continues after a comma):\n"
    "  help               print this and stop the JVM from starting\n"
    "  trigger=LIST       rundown triggers: session (an lttng session that records\n"
    "                     jitprov_rundown events starts), every:SEC, at:SEC, exit, none\n"
    "                     (default session,exit; no signal: HotSpot owns SIGUSR2)\n"
    "  perfmap=DIR|off    write DIR/perf-PID.map at every rundown (default /tmp)\n"
    "  rundown=MODE       lockfree (default), locked, per-method\n"
    "  rate=N             cap rundown events per second (default 0: unpaced)\n"
    "  stats=FILE         write the agent's counters as JSON at VM death\n"
    "  verbose            log to stderr what the agent found (VMStructs fields, ...)\n"
    "example: -agentpath:/usr/local/lib/x86_64-linux-gnu/libjitprov-jvmti.so=trigger=session,every:30,perfmap=/tmp\n";

// "" when `v` is a perfmap= value the rundowns can write to ("off", or a writable
// directory), else why not.
std::string checkPerfMapDir(const std::string& v) {
  if (v.empty()) return "empty (perfmap=off turns the perf map off)";
  if (v == "off") return "";
  struct stat st;
  if (stat(v.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory (the map is written as DIR/perf-PID.map)";
  if (access(v.c_str(), W_OK) != 0) return std::strerror(errno);
  return "";
}

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// The option text in pieces: `verbose` set, k=v pairs into *kv (a piece without '='
// continues a trigger list). False on `help` (printed) or an unknown piece (said).
bool splitPieces(const std::string& s, Options* o, KeyValues* kv) {
  size_t pos = 0;
  while (pos <= s.size() && !s.empty()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    const std::string piece = s.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t eq = piece.find('=');
    if (piece == "help") {
      std::fputs(kHelp, stdout);
      return false;
    }
    if (piece == "verbose") {
      o->verbose = true;
    } else if (eq != std::string::npos) {
      kv->emplace_back(piece.substr(0, eq), piece.substr(eq + 1));
    } else if (!kv->empty() && kv->back().first == "trigger" && !piece.empty()) {
      kv->back().second += "," + piece;
    } else if (!piece.empty()) {
      std::fprintf(stderr, "jitprov-jvmti: unknown option '%s' (-agentpath:...=help lists them)\n", piece.c_str());
      return false;
    }
    if (comma >= s.size()) break;
  }
  return true;
}

bool parseTrigger(const std::string& v, Options* o) {
  char why[256];
  if (v.find("signal") != std::string::npos) {
    std::fprintf(stderr,
                 "jitprov-jvmti: trigger=%s: no signal trigger, HotSpot owns SIGUSR2 (session, every:SEC, "
                 "at:SEC, exit)\n",
                 v.c_str());
    return false;
  }
  if (jitprov_rundown_triggers_check(v.c_str(), why, sizeof why) != JITPROV_OK) {
    std::fprintf(stderr, "jitprov-jvmti: trigger=%s: %s\n", v.c_str(), why);
    return false;
  }
  o->trigger = v;
  return true;
}

bool parseRate(const std::string& v, Options* o) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long r = std::strtoull(v.c_str(), &end, 10);
  // Digits only: strtoull takes "-1" (as ULLONG_MAX: unlimited), spaces and '+' too.
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || *end != '\0' || errno != 0) {
    std::fprintf(stderr, "jitprov-jvmti: rate=%s: not a number of events per second (0 to %llu)\n", v.c_str(),
                 ULLONG_MAX);
    return false;
  }
  o->rate = r;
  return true;
}

// One k=v option into *o; false (said on stderr) when it is bad or unknown.
bool applyOption(const std::string& k, const std::string& v, Options* o) {
  if (k == "trigger") return parseTrigger(v, o);
  if (k == "rate") return parseRate(v, o);
  if (k == "perfmap") {
    // Checked now: a bad one would fail every rundown's map, quietly, until VM death.
    if (const std::string why = checkPerfMapDir(v); !why.empty()) {
      std::fprintf(stderr, "jitprov-jvmti: perfmap=%s: %s\n", v.c_str(), why.c_str());
      return false;
    }
    o->perfmap = v == "off" ? "" : v;
  } else if (k == "rundown") {
    if (jitprov_rundown_mode_parse(v.c_str(), &o->mode) != JITPROV_OK) {
      std::fprintf(stderr, "jitprov-jvmti: rundown=%s: not one of lockfree, locked, per-method\n", v.c_str());
      return false;
    }
  } else if (k == "stats") {
    // Checked now, not at VM death: never a device, a directory or a symlink.
    if (const std::string why = jitprov::tools::checkOutputPath(v); !why.empty()) {
      std::fprintf(stderr, "jitprov-jvmti: stats=%s: %s\n", v.c_str(), why.c_str());
      return false;
    }
    o->stats = v;
  } else {
    std::fprintf(stderr, "jitprov-jvmti: unknown option '%s' (-agentpath:...=help lists them)\n", k.c_str());
    return false;
  }
  return true;
}

}  // namespace

bool parseOptions(const char* text, Options* o) {
  const std::string s = text != nullptr ? text : "";
  KeyValues kv;
  if (!splitPieces(s, o, &kv)) return false;
  for (const auto& [k, v] : kv)
    if (!applyOption(k, v, o)) return false;
  return true;
}

}  // namespace jitprov::jvmti
