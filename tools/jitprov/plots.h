/* SPDX-License-Identifier: MIT */
// The plots of `jitprov report` (plots.cc; docs/spec.md, "jitprov report"): PNG files
// drawn by gnuplot, each from a CSV file written beside it (so that a plot's figures can
// be checked, and drawn again with its .gp script), only for what the trace and record's
// files hold:
//  - tiers:     code bodies by tier, per process (the verifier's `by_tier`);
//  - rundowns:  each rundown's duration and method records over the recording's time;
//  - lockwaits: with `record --lockwait`, every lock wait of the JIT paths on that
//               timeline (jitprov-lockwait --waits), the rundowns shaded;
//  - hottest:   with `record --perf`, the JIT methods with the most samples.
// Plots are optional: without gnuplot the report says so and writes none.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace jitprov::cli {

struct PlotInputs {
  const nlohmann::json* report = nullptr;  // the report's document (report.cc's build())
  std::string trace;                       // the trace, for its clock's offset (the rundowns' time)
  std::string waits_csv;                   // jitprov-lockwait --waits' file, "" when there is none
  std::string out_dir;                     // where the files go (made when missing)
};

// Writes the plots and their CSV files; returns {"dir", "files": [{"plot", "png", "csv",
// "gp", "what"}]}, or {"dir", "none": why} when no plot was written (no gnuplot, the
// directory cannot be written, gnuplot failed).
nlohmann::json writePlots(const PlotInputs& in);

// Field k of a JSON object as a count: 0 when the object lacks it or it is not a number
// (the report's documents, read by report.cc and here).
uint64_t jsonCount(const nlohmann::json& j, const char* k);

// The offset of the trace's clock "monotonic" from the Unix epoch in ns (lttng's
// metadata: `offset_s`, `offset` in cycles of `freq`), so that CLOCK_MONOTONIC = a
// timestamp less it; false when no metadata file says.
bool traceClockOffset(const std::string& trace, int64_t* offset_ns);

}  // namespace jitprov::cli
