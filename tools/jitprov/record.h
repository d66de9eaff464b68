/* SPDX-License-Identifier: MIT */
// `jitprov record [-o DIR] [--rundown-every SECS] [--runtime java|dotnet] [--perf]
// [--lockwait] -- CMD ARGS...` and `jitprov record -p PID [-d SECS] ...` (record.cc;
// docs/spec.md, "jitprov record"): CMD run under jitprov's agent, loaded from the
// environment alone (or the agent attached to PID), into a lossless lttng session of its
// own (a private lttng-sessiond when none answers), with jitprov-lockwait and perf
// beside it when asked, then the trace verified and summarized.
#pragma once

#include <string>
#include <vector>

namespace jitprov::cli {

// The exit statuses of `jitprov record` itself, from 116 to 127: below the 128 + N of a
// command killed by signal N, and 125-127 as timeout(1) and env(1) use them. Any other
// status is CMD's own (the trace verified).
enum RecordStatus : int {
  kRecordNoStdout = 116,        // the summary could not be written to stdout (it is in DIR/summary.json)
  kRecordAttach = 117,          // -p PID: the process cannot be attached (the line says why)
  kRecordExtra = 118,           // --perf, --lockwait: their tool missing, or it could not start
  kRecordNotVerified = 119,     // the trace did not verify: a violation, events lost, unreadable
  kRecordNoVerifier = 120,      // jitprov-verify not found, or it failed to run
  kRecordNoAgent = 121,         // the agent library for the runtime is not found
  kRecordLttng = 122,           // lttng or lttng-sessiond missing, or the session could not be set up
  kRecordBadDir = 123,          // DIR exists and is not empty, or cannot be written
  kRecordUnknownRuntime = 124,  // CMD is neither java nor dotnet, and no --runtime
  kRecordUsage = 125,           // bad options, no CMD
  kRecordCannotRun = 126,       // CMD found but could not be run (not executable, ...)
  kRecordNotFound = 127,        // CMD not found
};

struct RecordArgs {
  std::string out;           // -o DIR ("": jitprov-record-YYYYmmdd-HHMMSS in the cwd)
  double rundown_every = 0;  // --rundown-every SECS (0: none but at start and exit)
  std::string runtime;       // --runtime java|dotnet ("": from CMD's name)
  bool perf = false, lockwait = false;
  long long pid = 0;             // -p PID: a running process instead of CMD
  double duration = 0;           // -d SECS with -p (0: until Ctrl-C or its exit)
  bool duration_given = false;   // -d given (with CMD: a usage error, -d 0 too)
  std::vector<std::string> cmd;  // CMD ARGS...
};

// Runs the whole recording; returns the exit status of `jitprov record`.
int record(const RecordArgs& a);

}  // namespace jitprov::cli
