/* SPDX-License-Identifier: MIT */
// One lttng session as jitprov-verify reads it: its traces, what the reading found
// (its name, losses, a live connection's end), and the checker its events go to.
// Traces are grouped by session (the directory above `ust/`).
#pragma once

#include "checker.h"
#include "inventory.h"
#include "lives.h"

#include <chrono>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

namespace jitprov::verify {

struct Session {
  explicit Session(const CheckerOptions& o) : live(o.live), checker(o) { checker.setLives(&lives); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  std::string root;  // the directory above ust/ (or the trace itself), or the live URL
  // Live (net://): read from lttng-relayd while the session records.
  bool live = false;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool timed_out = false;
  std::string connection_lost;  // why the live connection ended early, if it did
  std::string name;             // the trace's trace_name, when it has one
  std::vector<std::string> traces;
  uint64_t discarded_events = 0, discarded_packets = 0, discarded_unknown = 0;
  uint64_t packets_before_first = 0;  // lacking before the streams' first (trace_files.h)
  uint64_t unattributed = 0;          // jitprov events of no known process
  bool pidns_partial = false;         // the pid_ns context on some channels only: not read (decode.h)
  Lives lives;                        // its processes (the reader's; the report reads them)
  // The fields of G2 mismatches were read a second time (Reader::explain).
  bool explaining = false;
  // --top: the code the trace shows, fed by the reader on its first reading (null: not
  // asked for).
  std::unique_ptr<Inventory> inventory;
  size_t inventory_top = 0;  // --top N: the length of its lists
  // The reading side above is the reader's; the checker is the checking thread's while
  // the reader's pipe runs (reader.h), the reader's again once it is drained.
  Checker checker;
};

}  // namespace jitprov::verify
