// SPDX-License-Identifier: MIT
#include "agent_options.h"

#include <cstdio>
#include <string>

namespace jitprov::jvmti {

bool parseOptions(const char* text, hostagent::Options* o) {
  const std::string err =
      hostagent::parseOptions(text != nullptr ? text : "", o, nullptr, "signal",
                              "no signal trigger, HotSpot owns SIGUSR2 (session, every:SEC, at:SEC, exit)");
  if (err == "help") {
    std::fputs(
        "jitprov-jvmti: HotSpot's compiled code in jitprov's lock-free rundown and a perf map\n"
        "usage: java -agentpath:/path/libjitprov-jvmti.so[=OPTION,...] ...\n"
        "options (comma-separated; a trigger list continues after a comma; no signal trigger:\n"
        "HotSpot owns SIGUSR2):\n"
        "  help               print this and stop the JVM from starting\n",
        stdout);
    std::fputs(hostagent::kCommonHelp, stdout);
    std::fputs(
        "example: -agentpath:/usr/lib/x86_64-linux-gnu/jitprov/libjitprov-jvmti.so=trigger=session,every:30,"
        "perfmap=/tmp\n",
        stdout);
    return false;
  }
  if (err.empty()) return true;
  const bool unknown = err.rfind("unknown option", 0) == 0;
  std::fprintf(stderr, "jitprov-jvmti: %s%s\n", err.c_str(), unknown ? " (-agentpath:...=help lists them)" : "");
  return false;
}

}  // namespace jitprov::jvmti
