// SPDX-License-Identifier: MIT
// jitprov: the command (docs/spec.md, "jitprov"). Its verbs, one CLI11 subcommand each:
//   jitprov attach PID [--options OPTS] [--agent PATH] [--timeout SECS]
// loads jitprov's agent into a running JVM (HotSpot's dynamic attach: hotspot_attach.cc)
// or .NET process (CoreCLR's diagnostics IPC: clr_attach.cc), after the
// checks of target.cc. One line on stdout when attached, one on stderr when not; the
// exit status says why (attach.h).
//   jitprov ps [--json]
// lists the processes running HotSpot or CoreCLR, from /proc alone (ps.cc).
#include "attach.h"
#include "cli.h"
#include "hotspot_attach.h"
#include "ps.h"
#include "target.h"
#include "clr_attach.h"

#include <chrono>
#include <cstdio>
#include <string>

namespace jitprov::cli {
namespace {

struct AttachArgs {
  long long pid = 0;
  std::string options;
  std::string agent;
  double timeout = 10;
};

int attach(const AttachArgs& a) {
  TargetInfo t;
  AttachOutcome o = findTarget(pid_t(a.pid), &t);
  // "Already loaded" is the agent's answer (HotSpot: 74) or the runtime's with the
  // client's ready mark (CoreCLR: ALREADY_ACTIVE), never the maps': they keep the agent's
  // library and libjitprov after a start that failed and was undone, and a retry must go
  // through.
  AttachRequest r;
  if (o.status == kAttached) o = findAgent(t, a.agent, &r.agent);
  if (o.status == kAttached) {
    r.target = t.target;
    r.options = a.options;
    r.timeout = std::chrono::milliseconds(static_cast<long long>(a.timeout * 1000));
    if (t.target.runtime == Runtime::kHotSpot) {
      o = attachHotSpot(t, r);
    } else {
      o = attachCoreClr(r);
    }
  }
  if (o.status != kAttached) {
    std::fprintf(stderr, "jitprov: %s\n", o.line.c_str());
    return o.status;
  }
  const char* rt = t.target.runtime == Runtime::kHotSpot ? "HotSpot" : "CoreCLR";
  std::printf("jitprov: attached to PID %d: %s %s, agent %s, options \"%s\"%s\n", int(t.target.pid), rt,
              o.version.empty() ? "(version unknown)" : o.version.c_str(), r.agent.c_str(), r.options.c_str(),
              r.options.empty() ? " (the agent's defaults)" : "");
  return kAttached;
}

}  // namespace
}  // namespace jitprov::cli

int main(int argc, char** argv) {
  using namespace jitprov;
  CLI::App cli{"jitprov: JIT-compiled code of running JVMs and .NET processes, in jitprov's rundowns"};
  cli.require_subcommand(1);
  cli::AttachArgs aa;
  CLI::App* attach = cli.add_subcommand(
      "attach",
      "load jitprov's agent into a running process (HotSpot 17+: its dynamic attach; CoreCLR: its diagnostics IPC). "
      "Exit: 0 attached, 1 error, 2 usage, 3 no such process, 4 not a runtime, 5 permission, 6 runtime too old, "
      "7 attach disabled, 8 another profiler, 9 already loaded, 10 timed out, 11 the agent failed, 12 no agent");
  attach->add_option("PID", aa.pid, "the process")->required()->check(tools::wholeIn(1, 4194304));
  attach->add_option("--options", aa.options,
                     "the agent's options, as after -agentpath:...= (default: none, the agent's defaults: "
                     "trigger=session,exit, perfmap=/tmp)");
  attach->add_option("--agent", aa.agent,
                     "the agent library (default: the one beside this jitprov in a build tree, else the installed "
                     "one); the target must see the same file at that path");
  attach->add_option("--timeout", aa.timeout, "give up after SECS seconds (default 10)")->check(tools::finiteIn(3600));
  bool ps_json = false;
  CLI::App* ps = cli.add_subcommand(
      "ps",
      "the processes running a runtime jitprov supports (HotSpot, CoreCLR): their runtime and version, and "
      "whether jitprov is loaded in them; read from /proc, nothing asked of them");
  ps->add_flag("--json", ps_json, "one JSON document instead of the table");
  if (const auto rc = tools::parseArgs(cli, "jitprov", argc, argv)) return *rc;
  if (attach->parsed()) return cli::attach(aa);
  if (ps->parsed()) return cli::ps(ps_json);
  return cli::kUsage;
}
