// SPDX-License-Identifier: MIT
// jitprov: the command (docs/spec.md, "jitprov"). Its verbs, one CLI11 subcommand each:
//   jitprov attach PID [--options OPTS] [--agent PATH] [--timeout SECS]
// loads jitprov's agent into a running JVM (HotSpot's dynamic attach: hotspot_attach.cc)
// or .NET process (CoreCLR's diagnostics IPC: clr_attach.cc) or node (its inspector:
// node_attach.cc), after the
// checks of target.cc. One line on stdout when attached, one on stderr when not; the
// exit status says why (attach.h).
//   jitprov ps [--json]
// lists the processes running HotSpot, CoreCLR or node, from /proc alone (ps.cc).
//   jitprov record [-o DIR] [--rundown-every SECS] [--runtime java|dotnet|node] [--perf]
//                  [--lockwait] -- CMD ARGS...   (or -p PID [-d SECS] instead of CMD)
// runs CMD under jitprov's agent (or attaches it to PID) into a lossless lttng session,
// then verifies and summarizes the trace (record.cc).
//   jitprov report DIR [--json] [--top N] [--plots DIR2 | --no-plots]
// what a trace recorded by `jitprov record` shows: code by runtime, tier and module, the
// largest and most recompiled methods, rundowns, losses, lock waits, hot JIT methods
// (report.cc), and plots of them (plots.cc).
#include "attach.h"
#include "attach_process.h"
#include "cli.h"
#include "ps.h"
#include "record.h"
#include "report.h"
#include "target.h"

#include <cmath>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

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
  AttachRequest r;
  const AttachOutcome o =
      attachProcess(pid_t(a.pid), a.agent, a.options,
                    std::chrono::milliseconds(static_cast<long long>(std::ceil(a.timeout * 1000))), &t, &r);
  if (o.status != kAttached) {
    std::fprintf(stderr, "jitprov: %s\n", o.line.c_str());
    return o.status;
  }
  const char* rt = t.target.runtime == Runtime::kHotSpot ? "HotSpot"
                   : t.target.runtime == Runtime::kNode  ? "Node.js"
                                                         : "CoreCLR";
  // Node: the main isolate only, and the inspector's window (o.line).
  std::printf("jitprov: attached to PID %d: %s %s, agent %s, options \"%s\"%s%s%s\n", int(t.target.pid), rt,
              o.version.empty() ? "(version unknown)" : o.version.c_str(), r.agent.c_str(), r.options.c_str(),
              r.options.empty() ? " (the agent's defaults)" : "", o.line.empty() ? "" : "; ", o.line.c_str());
  return kAttached;
}

// `jitprov record ... [--] CMD ARGS...`: the number of words CLI11 parses, and CMD ARGS...
// into *cmd: after the first "--", or from the first word that is neither one of
// record's options nor an option's value. 0 words for CMD when the verb is not record.
int recordSplit(int argc, char** argv, std::vector<std::string>* cmd) {
  if (argc < 2 || std::string(argv[1]) != "record") return argc;
  for (int i = 2; i < argc; ++i) {
    const std::string w = argv[i];
    if (w == "--") {
      for (int j = i + 1; j < argc; ++j) cmd->push_back(argv[j]);
      return i;
    }
    if (w == "-o" || w == "--output" || w == "--rundown-every" || w == "--runtime" || w == "-p" || w == "--pid" ||
        w == "-d" || w == "--duration") {
      ++i;  // its value
      continue;
    }
    if (!w.empty() && w[0] == '-') continue;  // a flag, --opt=value, -oDIR, or an error CLI11 reports
    for (int j = i; j < argc; ++j) cmd->push_back(argv[j]);
    return i;
  }
  return argc;
}

}  // namespace
}  // namespace jitprov::cli

int main(int argc, char** argv) {
  using namespace jitprov;
  CLI::App cli{"jitprov: JIT-compiled code of running JVMs, .NET processes and Node.js, in jitprov's rundowns"};
  cli.require_subcommand(1);
  cli::AttachArgs aa;
  CLI::App* attach = cli.add_subcommand(
      "attach",
      "load jitprov's agent into a running process (HotSpot 17+: its dynamic attach; CoreCLR: its diagnostics IPC; "
      "Node.js: its inspector, opened by SIGUSR1 on 127.0.0.1 and closed again; the main thread, its worker "
      "threads running then and those started later; in another network namespace, root enters it). "
      "Exit: 0 attached, 1 error, 2 usage, 3 no such process, 4 not a runtime, 5 permission, 6 runtime too old, "
      "7 attach disabled, 8 another profiler, 9 already loaded, 10 timed out, 11 the agent failed, 12 no agent, "
      "13 node's inspector open already or its port taken");
  attach->add_option("PID", aa.pid, "the process")->required()->check(tools::wholeIn(1, 4194304));
  attach->add_option("--options", aa.options,
                     "the agent's options, as after -agentpath:...= (default: none, the agent's defaults: "
                     "trigger=session,exit, perfmap=/tmp)");
  attach->add_option("--agent", aa.agent,
                     "the agent library (default: the one beside this jitprov in a build tree, else the installed "
                     "one); the target must see the same file at that path");
  attach->add_option("--timeout", aa.timeout, "give up after SECS seconds (default 10)")
      ->check(tools::positiveUpTo(3600));
  bool ps_json = false;
  CLI::App* ps = cli.add_subcommand(
      "ps",
      "the processes running a runtime jitprov supports (HotSpot, CoreCLR, Node.js): their runtime and version, and "
      "whether jitprov is loaded in them; read from /proc, nothing asked of them");
  ps->add_flag("--json", ps_json, "one JSON document instead of the table");
  cli::RecordArgs ra;
  CLI::App* record = cli.add_subcommand(
      "record",
      "run CMD under jitprov's agent (java: JAVA_TOOL_OPTIONS; dotnet: CORECLR_*; node: NODE_OPTIONS; and "
      "libjitprov-preload.so in LD_PRELOAD), or attach it to "
      "the running "
      "process PID (-p), its rundowns (at start, every SECS, at CMD's exit) into a lossless lttng session (a private "
      "lttng-sessiond: root's always, a user's when none answers), with jitprov-lockwait (--lockwait) and perf record "
      "(--perf) beside it, then "
      "verify the trace (jitprov-verify) and print a summary, also in DIR/summary.json (jitprov report DIR says "
      "more). Exit: CMD's status when the trace verified (128+N: killed by signal N; -p: 0); jitprov's own: 116 the "
      "summary not written to stdout (it is in DIR/summary.json), 117 -p "
      "PID cannot be attached, 118 --perf/--lockwait: perf not installed, or a tool could not start, 119 the trace "
      "did not verify, 120 no jitprov-verify, 121 no agent, 122 lttng missing or failed, 123 DIR not new/empty or "
      "not writable, 124 CMD neither java, dotnet nor node (--runtime), 125 usage (no CMD), 126 CMD cannot be run, 127 "
      "CMD not found");
  record
      ->add_option("-o,--output", ra.out,
                   "the directory for the trace (DIR/trace), the verifier's report and summary.json; new or empty "
                   "(default: jitprov-record-YYYYmmdd-HHMMSS in the current directory)")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.empty() ? std::string("empty (leave -o out for the default)") : std::string();
          },
          "DIR"));
  record->add_option("--rundown-every", ra.rundown_every, "a rundown every SECS seconds too (the agent's every:SECS)")
      ->check(tools::positiveUpTo(1e6));
  record
      ->add_option("--runtime", ra.runtime,
                   "the runtime CMD starts when its name does not say (java: java, javac, jshell; dotnet: dotnet; "
                   "node: node)")
      ->check(CLI::IsMember({"java", "dotnet", "node"}));
  record->add_flag("--perf", ra.perf,
                   "perf record -k 1 beside CMD with the agent's jitdump, then perf inject --jit: DIR/perf.jit.data, "
                   "whose JIT frames perf report names; the hottest JIT methods in the summary (perf must be "
                   "installed: exit 118)");
  record->add_flag("--lockwait", ra.lockwait,
                   "jitprov-lockwait (eBPF, root) beside CMD for its whole life: lock waits and their blame in the "
                   "summary, its report in DIR/lockwait.json");
  record
      ->add_option("-p,--pid", ra.pid, "record a running JVM, .NET process or node instead of CMD (its agent attached)")
      ->check(tools::wholeIn(1, 4194304));
  CLI::Option* duration_opt = record->add_option(
      "-d,--duration", ra.duration, "with -p: stop after SECS seconds (default, or 0: at Ctrl-C or its exit)");
  duration_opt->check(tools::finiteIn(1e6));
  record->add_option("CMD", ra.cmd,
                     "the command and its arguments (after --, or from the first word that is not an option)");
  cli::ReportArgs rpa;
  CLI::App* rep = cli.add_subcommand(
      "report",
      "what a trace recorded by `jitprov record -o DIR` shows (read by jitprov-verify): code bodies and bytes by "
      "runtime, tier and module, the namespaces with the most code, the largest and the most recompiled methods, "
      "the rundowns and their durations, events lost, the verdict; lock waits with their blame (--lockwait) and the "
      "hottest JIT methods (--perf) when record ran them; plots of them (gnuplot, when installed: PNG with "
      "their CSV data in DIR/report). Exit: 0 reported, 1 error, 2 usage, 3 DIR not a "
      "directory, 4 no trace in DIR, 5 the trace cannot be read, 6 no jitprov-verify");
  rep->add_option("DIR", rpa.dir, "jitprov record's directory (or a trace directory)")->required();
  rep->add_flag("--json", rpa.json, "one JSON document instead of the text");
  rep->add_option("--top", rpa.top, "the length of each list (default 10)")->check(tools::wholeIn(1, 100000));
  CLI::Option* plots_opt =
      rep->add_option("--plots", rpa.plots,
                      "write the plots (PNG, gnuplot) and their CSV data into this directory (default: DIR/report)");
  rep->add_flag("--no-plots", rpa.no_plots, "write no plots")->excludes(plots_opt);
  // CMD ARGS... are not jitprov's: its options (java -Xmx1g, dotnet --roll-forward) must
  // never be parsed as ours. CLI11 sees the words before them only.
  const int cli_argc = cli::recordSplit(argc, argv, &ra.cmd);
  try {
    cli.parse(cli_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    // No subcommand parsed: name the first word instead of CLI11's "A subcommand is
    // required" (jitprov bogus, jitprov --bogus).
    if (!attach->parsed() && !ps->parsed() && !record->parsed() && !rep->parsed() && cli_argc > 1) {
      const std::string first = argv[1];
      if (first == "--")
        std::fprintf(stderr, "jitprov: a command first: attach, ps, record or report (see --help)\n");
      else
        std::fprintf(stderr, "jitprov: %s '%s': the commands are attach, ps, record and report (see --help)\n",
                     first.rfind('-', 0) == 0 ? "unknown option" : "unknown command", first.c_str());
      return 2;
    }
    std::fprintf(stderr, "jitprov%s: %s (see --help)\n",
                 record->parsed() ? " record"
                 : rep->parsed()  ? " report"
                                  : "",
                 e.what());
    return record->parsed() ? int(cli::kRecordUsage) : 2;
  }
  ra.duration_given = duration_opt->count() > 0;
  if (rep->parsed() && plots_opt->count() > 0 && rpa.plots.empty()) {
    std::fprintf(stderr, "jitprov report: --plots: an empty directory name (see --help)\n");
    return cli::kReportUsage;
  }
  // Every verb reports its own errors; one it did not foresee ends it with one line and
  // exit 1, not with std::terminate's abort.
  try {
    if (attach->parsed()) return cli::attach(aa);
    if (ps->parsed()) return cli::ps(ps_json);
    if (record->parsed()) return cli::record(ra);
    if (rep->parsed()) return cli::report(rpa);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jitprov: an unexpected error: %s\n", e.what());
    return 1;
  }
  return cli::kUsage;
}
