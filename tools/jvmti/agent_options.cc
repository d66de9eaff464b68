// SPDX-License-Identifier: MIT
#include "agent_options.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace jitprov::jvmti {

bool parseOptions(const char* text, hostagent::Options* o, JvmOptions* j) {
  const auto extra = [j](const std::string& k, const std::string& v, std::string* why) -> int {
    if (k == "publish") return hostagent::parsePublish(v, &j->publish_ms, &j->publish_batch, why) ? 1 : -1;
    if (k == "attach") {
      if (v == "scan")
        j->attach = JvmOptions::Attach::kScan;
      else if (v == "replay")
        j->attach = JvmOptions::Attach::kReplay;
      else if (v == "scan-unchecked")
        j->attach = JvmOptions::Attach::kUnchecked;
      else
        return *why = "scan or replay", -1;
      return 1;
    }
    if (k != "names") return 0;
    if (v == "vmstructs")
      j->names = JvmOptions::Names::kVmStructs;
    else if (v == "jvmti")
      j->names = JvmOptions::Names::kJvmti;
    else if (v == "mutant")
      j->names = JvmOptions::Names::kMutant;
    else
      return *why = "vmstructs or jvmti", -1;
    return 1;
  };
  const std::string err =
      hostagent::parseOptions(text != nullptr ? text : "", o, extra, "signal",
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
        "  names=vmstructs|jvmti  where compiled methods' names come from: HotSpot's VMStructs\n"
        "                     (default; checked against JVMTI for the first methods, JVMTI from\n"
        "                     the first difference on) or JVMTI alone\n"
        "  attach=scan|replay  how an attach finds the code compiled before it: its code heaps\n"
        "                     read without a lock, the code found checked again before each\n"
        "                     rundown (default; Java 17, no jitdump) or HotSpot's GenerateEvents,\n"
        "                     which holds CodeCache_lock while it lists every nmethod\n"
        "  publish=MS[/EVENTS]|inline  the load and unload callbacks queue what they saw and a\n"
        "                     thread of the agent publishes it every MS ms while events come,\n"
        "                     or once EVENTS are queued (0: the period alone), and before each\n"
        "                     rundown (default 250/1024); inline: each callback publishes its\n"
        "                     own (as with jitdump=, which publishes inline)\n",
        stdout);
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
