/* SPDX-License-Identifier: MIT */
// jitprov-verify's checks (docs/verifying.md), on decoded events (events.h), per process
// and runtime instance:
//   G2 consistent: each `method` record's fields equal its version's `method_load`, and
//                  no record is of a version whose removal was complete before the walk
//                  could reach it;
//   G3+ complete:  by the publication sequence (docs/spec.md "The publication sequence"), exactly:
//                  every version known from the trace (a method_load, or a record of any
//                  rundown) with publish_seq <= rundown_end.publish_seq (P) that was not
//                  removed (code_unload, method_unload) with a number <= end_seq (E) is
//                  in the rundown; nothing with publish_seq > P is. "Not removed" is
//                  decided only where the trace accounts for every sequence number in
//                  between (a session stopped for a while leaves gaps: those versions
//                  are counted as undecidable, never guessed);
//   G4 once:       no version_id twice in one rundown;
//   counts:        rundown_end's versions/modules/caught_up equal the records seen, and
//                  (since provider ABI 6) methods/caught_up_methods the distinct
//                  methods of its records and of those only its catch-up added; a
//                  rundown without its begin or end is reported.
// Pure C++ (no babeltrace2): apply() runs on the checking thread, the rest once the
// reading has ended. Unit-tested on synthetic streams in tests/unit/verify_checker_test.cc.
#pragma once

#include "events.h"
#include "lives.h"
#include "verify_g2.h"
#include "verify_state.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jitprov::verify {

struct Rundown {
  uint64_t id = 0;
  uint64_t index = 0;  // order of first appearance in its process: its bit in VersionEntry::in_rundowns
  bool has_begin = false, has_end = false;
  int64_t begin_ts = 0, end_ts = 0, last_ts = 0;  // last_ts: its last event
  std::string mode, trigger;
  uint64_t module_records = 0, method_records = 0;
  uint64_t after_begin = 0;  // records published after B: the catch-up's
  // The method ids of its records, the first pass's (publish_seq <= B) and the
  // catch-up's apart, each run of one method's records once (a pass emits a method's
  // versions one after another); made distinct at the end (Checker::check).
  std::vector<uint64_t> walked_methods, caught_up_methods;
  // The most method records in one window of kPeakWindowNs (windows open at a record):
  // what a paced rundown (setMaxRate) put into the channel at its fastest.
  static constexpr int64_t kPeakWindowNs = 100'000'000;
  int64_t window_ts = 0;
  uint64_t window_records = 0, peak_window_records = 0;
  uint64_t end_modules = 0, end_methods = 0, end_versions = 0, end_skipped = 0, end_retried = 0, end_duration = 0;
  // The publication sequence: B on rundown_begin; P, E and caught_up on rundown_end.
  bool has_begin_seq = false, has_end_seq = false;
  uint64_t begin_seq = 0, publish_seq = 0, end_seq = 0, caught_up = 0;
  bool cut_short = false;          // the application's shutdown ended it early
  bool has_method_counts = false;  // rundown_end has caught_up_methods (ABI 6)
  uint64_t end_caught_up_methods = 0;
  // Checked as records arrive.
  uint64_t g2_checked = 0, g2_no_load = 0, g2_mismatch = 0, duplicates = 0;
  std::vector<uint64_t> mismatched, duplicated;  // version ids of the first few (--show)
  // The 64th and later rundowns of a process: their records' version ids (no bit left).
  std::vector<uint64_t> late;
  // Checked at the end (Checker::check).
  uint64_t g2_removed = 0, beyond_p = 0, checked3 = 0, missing = 0, undecidable = 0;
  std::vector<std::string> g2_messages, g3_messages;
};

// A rundown record waiting to be applied to its version's entry (Checker::applyRecords).
struct PendingRecord {
  uint64_t version_id, method_id, module_id, publish_seq;
  Digest digest;
  uint32_t rundown_index;
  uint32_t tier;  // its jitprov tier (Process::bodies_by_tier)
};

struct Process {
  int64_t pid = 0;
  uint32_t instance = 0;  // the runtime's (runtime_instance); 0: a trace from before the field
  VersionTable versions;
  G2Matcher g2;  // holds the records that came before their method_load
  // method_id -> unload_seq: every method_unload (with its module, or alone).
  IdMap method_unload;
  IdMap code_unload;                     // version_id -> retire_seq (0: no field)
  int64_t last_ts = 0;                   // the process's last event
  std::map<uint64_t, Rundown> rundowns;  // rundown_id ->
  std::vector<Rundown*> by_index;        // Rundown::index ->
  SeqSet seen_seqs;                      // every sequence number the trace shows
  // Rundown records not applied to their versions yet: a walk's records come in walk
  // order, scattered over the version table; applied in batches sorted by id, the
  // table is swept instead of probed at random (a miss each: most of the time at 10 M).
  std::vector<PendingRecord> pending;
  static constexpr size_t kPendingBatch = 1 << 16;
  uint64_t events = 0, method_loads = 0, method_unloads = 0, code_unloads = 0;
  // The code bodies (distinct version ids) the trace shows, from a method_load or a
  // rundown record, by the jitprov tier of the first one seen (kTierSlots - 1: a tier
  // outside the ABI's): what `jitprov record` summarizes.
  static constexpr size_t kTierSlots = 6;
  uint64_t bodies_by_tier[kTierSlots] = {};
  void countBody(uint64_t tier) { ++bodies_by_tier[tier < kTierSlots - 1 ? tier : kTierSlots - 1]; }
  bool seq_fields = true;  // every event carried the sequence fields
  // For a second reading that names the fields of G2 mismatches (Checker::explain*).
  std::unordered_map<uint64_t, MethodRecord> explain_load;               // version_id ->
  std::map<std::pair<uint64_t, uint64_t>, MethodRecord> explain_record;  // (rundown_id, version_id) ->
};

// Over every process checked: the violations, and what could not be checked (each line
// as the report prints it).
struct Outcome {
  uint64_t violations = 0;
  std::vector<std::string> not_checked;
};

// One rundown's verdicts: each check's status ("pass", "violated", "not checked", or
// G3's "cut short") and the violations shown, as the report prints them.
struct RundownVerdict {
  const Rundown* rundown = nullptr;
  bool exact = false;  // its begin, end and sequence fields are there: the exact checks ran
  const char* g2 = "";
  const char* g3 = "";
  const char* g4 = "";
  std::vector<std::string> violations;
};

struct ProcessVerdict {
  const Process* process = nullptr;
  std::vector<RundownVerdict> rundowns;  // by rundown_id
};

struct CheckerOptions {
  bool live = false;         // following a live session: say so as each rundown ends
  uint64_t show = 5;         // violations shown per check (--show)
  FILE* progress = nullptr;  // where the live lines go (stdout when null)
};

class Checker {
 public:
  explicit Checker(const CheckerOptions& o = {}) : options_(o) {}
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;
  // The session's processes (their keys are Item::pid): names them in messages.
  void setLives(const Lives* lives) { lives_ = lives; }
  // "process 1234" (Lives::label), " runtime N" when the process has an instance number.
  std::string who(const Process& p) const;

  // The checking side of a batch of events, in order: false at the first error (a field
  // missing or malformed, or the batch's own error), then error() says which.
  bool apply(const Batch& b);
  const std::string& error() const { return error_; }

  // Once the reading has ended: the rundown records still pending, applied.
  void finishReading();
  // Asks for the fields of the G2 mismatches shown (a second reading of the trace, with
  // explainLoad/explainRecord); false when there are none.
  bool wantExplanations();
  void explainLoad(int64_t pid, uint32_t instance, const MethodRecordView& r);
  void explainRecord(int64_t pid, uint32_t instance, uint64_t rundown_id, const MethodRecordView& r);

  // G2, G3+, G4 and the counts of every rundown of a process, from what was kept while
  // streaming; appends to *out. Once per process. `explained`: the fields of G2
  // mismatches were read again (explainLoad, explainRecord).
  ProcessVerdict check(Process& p, bool explained, Outcome* out);

  // By process and runtime instance: ids are per runtime, and a process may hold several.
  std::map<std::pair<int64_t, uint32_t>, Process>& processes() { return processes_; }

 private:
  Process& processFor(const Item& it);
  void applyItem(const Item& it, const Batch& b);
  void applyRundownEvent(Process& p, const Item& it, const Batch& b);
  void onRundownEnd(Process& p, Rundown& r, const Item& it, const RareItem& x);
  void g2Verdict(Process& p, uint64_t index, uint64_t version_id, bool equal);
  void applyRecords(Process& p);
  void settle(Process& p);
  void checkVersion(Process& p, const VersionEntry& v);
  RundownVerdict judge(Process& p, Rundown& r, const std::string& who, bool explained, Outcome* out);

  CheckerOptions options_;
  const Lives* lives_ = nullptr;
  std::map<std::pair<int64_t, uint32_t>, Process> processes_;
  std::string error_;                // fatal: a field missing or malformed
  Process* last_process_ = nullptr;  // of the last event (most events are of the one before's)
};

}  // namespace jitprov::verify
