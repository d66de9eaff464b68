/* SPDX-License-Identifier: MIT */
// jitprov-verify's verdict and its two forms: the text report and the JSON one (--json),
// which says the same as one object. The text is printed from the JSON, so that the two
// cannot disagree.
#pragma once

#include "checker.h"
#include "session.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace jitprov::verify {

// Exit: 0 every check ran and holds; 1 a guarantee is violated; 2 usage, unreadable
// input, or processes that cannot be told apart; 3 events lost (violations are still
// printed); 4 nothing violated, but something could not be checked.
constexpr int kExitHold = 0, kExitViolated = 1, kExitUnreadable = 2, kExitLost = 3, kExitNotChecked = 4;

struct SessionReport {
  const Session* session = nullptr;
  std::vector<ProcessVerdict> processes;
};

struct Report {
  std::string trace;  // as given
  std::vector<SessionReport> sessions;
  Outcome outcome;    // over every session
  bool lost = false;  // events lost, or a live connection that ended early
  int exit = kExitHold;
  const char* verdict = "";
};

// Every process of every session checked (Checker::check), once all were read; the exit
// status follows. `timeout`: --timeout, for the line of a live session still recording.
Report evaluate(const std::string& trace, std::map<std::string, Session>& sessions, double timeout);

nlohmann::json toJson(const Report& r);
// The text report, on stdout.
void printText(const Report& r);

}  // namespace jitprov::verify
