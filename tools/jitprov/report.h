/* SPDX-License-Identifier: MIT */
// `jitprov report DIR [--json] [--top N]` (report.cc; docs/spec.md, "jitprov report"):
// what a trace recorded by `jitprov record` shows, from the verifier (`jitprov-verify
// --json --top N`, no second trace parser) and the files record leaves beside the trace:
// its summary.json, lockwait.json (--lockwait) and perf.json (--perf).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace jitprov::cli {

// The exit statuses of `jitprov report`.
enum ReportStatus : int {
  kReportOk = 0,          // the report printed (whatever the trace's verdict: it says it)
  kReportError = 1,       // another error (a file record wrote that cannot be read)
  kReportUsage = 2,       // bad options
  kReportNotDir = 3,      // DIR does not exist or is not a directory
  kReportNoTrace = 4,     // no CTF trace in DIR (neither DIR/trace nor DIR itself)
  kReportUnreadable = 5,  // the trace cannot be read (jitprov-verify exit 2)
  kReportNoVerifier = 6,  // jitprov-verify not found, or it gave no report
};

struct ReportArgs {
  std::string dir;
  bool json = false;
  int top = 10;       // --top N: the length of each list
  std::string plots;  // --plots DIR2: where the plots go (default DIR/report)
  bool no_plots = false;
};

int report(const ReportArgs& a);

// jitprov-lockwait's final --json report (lockwait.json) in a few figures, for record's
// summary and the report: acquisitions, contended waits, their total and maximum, the
// JIT paths' waits blamed on a rundown, losses, and the sites with contended waits with
// whom they waited behind.
nlohmann::json lockwaitFigures(const nlohmann::json& lw);
// The lines the summary and the report print for them.
std::string lockwaitLine(const nlohmann::json& figures);

// A rundown's duration from the verifier's record of it: the runtime's own measure
// (rundown_end.duration_ns); null when the trace holds no end (the session stopped while
// it ran, or its end was lost).
nlohmann::json rundownDuration(const nlohmann::json& rundown);
// What the verifier's sessions say was lost, added up: events_lost (discarded events),
// packets_lost (discarded packets), packets_missing (before a stream's first or between
// chunks), discards_uncounted (discard records without a count), live_connection_lost
// (the live sessions whose relay connection was lost).
nlohmann::json lossFigures(const nlohmann::json& verifier_report);
// "0", or "N, packets lost: M, ..." naming every non-zero loss.
std::string lossLine(const nlohmann::json& losses);
// "12.3 ms", or "unfinished" for a null duration.
std::string durationText(const nlohmann::json& duration_ns);

}  // namespace jitprov::cli
