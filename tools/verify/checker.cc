// SPDX-License-Identifier: MIT
// jitprov-verify's checks (checker.h): applying decoded events to a process's tables as
// they stream by, then the verdicts on each rundown from what was kept.
#include "checker.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace jitprov::verify {

// --- streaming (the checking thread) --------------------------------------------------

bool Checker::apply(const Batch& b) {
  for (const Item& it : b.items) {
    applyItem(it, b);
    if (!error_.empty()) return false;
  }
  if (!b.error.empty()) {
    error_ = b.error;
    return false;
  }
  return true;
}

Process& Checker::processFor(const Item& it) {
  if (last_process_ == nullptr || last_process_->pid != it.pid ||
      last_process_->instance != it.instance) {  // std::map nodes stay put
    last_process_ = &processes_[{it.pid, it.instance}];
    last_process_->pid = it.pid;
    last_process_->instance = it.instance;
  }
  return *last_process_;
}

// The checking side of one event.
void Checker::applyItem(const Item& it, const Batch& b) {
  Process& p = processFor(it);
  ++p.events;
  p.last_ts = std::max(p.last_ts, it.ts);
  const MethodNumbers& fl = it.fl;
  switch (it.kind) {
    case Kind::kMethodLoad: {
      if (fl.publish_seq == 0) p.seq_fields = false;
      ++p.method_loads;
      if (fl.publish_seq != 0) p.seen_seqs.add(fl.publish_seq);
      VersionEntry& v = p.versions.get(fl.version_id);
      // Records that arrived first are compared now; a second method_load of the version
      // is ignored (the first is its publication).
      auto verdict = [this, &p](uint64_t index, uint64_t vid, bool equal) { g2Verdict(p, index, vid, equal); };
      if (!p.g2.onLoad(fl.version_id, it.digest, &v.load, verdict)) return;
      if (v.method_id == 0) p.countBody(fl.tier);  // not seen before (nor in an applied record)
      v.method_id = fl.method_id;
      v.module_id = fl.module_id;
      v.publish_seq = fl.publish_seq;
      return;
    }
    case Kind::kMethodUnload: {
      if (it.flags & kNoSeqField) p.seq_fields = false;
      ++p.method_unloads;
      const uint64_t seq = fl.publish_seq;
      if (seq == 0) return;  // no number: nothing exact follows from it
      p.seen_seqs.add(seq);
      // Per method: a module's unload fires one for each of its methods (one number for
      // them all, registry.h P8), and a method unloaded alone its own, its module staying
      // (jitprov_method_unload): its number is no other method's removal.
      p.method_unload.emplace(fl.method_id, seq);  // keeps the first
      return;
    }
    case Kind::kCodeUnload: {
      if (it.flags & kNoSeqField) p.seq_fields = false;
      ++p.code_unloads;
      p.code_unload.emplace(fl.version_id, fl.publish_seq);
      // Marked, so that the end looks up only the versions some code_unload names.
      p.versions.get(fl.version_id).in_rundowns |= VersionEntry::kRetired;
      if (fl.publish_seq != 0) p.seen_seqs.add(fl.publish_seq);
      return;
    }
    case Kind::kModuleLoad:
    case Kind::kJitprovOther:
      return;
    default:
      applyRundownEvent(p, it, b);
  }
}

// A rundown's event.
void Checker::applyRundownEvent(Process& p, const Item& it, const Batch& b) {
  auto [rit, fresh] = p.rundowns.try_emplace(it.rid);
  Rundown& r = rit->second;
  if (fresh) {
    r.id = it.rid;
    r.index = p.by_index.size();
    p.by_index.push_back(&r);
  }
  r.last_ts = std::max(r.last_ts, it.ts);
  const MethodNumbers& fl = it.fl;
  if (it.kind == Kind::kRundownBegin) {
    if (r.has_begin) {
      error_ =
          "event jitprov_rundown:rundown_begin: missing or malformed rundown_id (a second rundown_begin with "
          "the same id; or a later process of this vpid, in a session without the runtime events that tell "
          "it apart)";
      return;
    }
    const RareItem& x = b.rare[it.rare];
    r.has_begin = true;
    r.begin_ts = it.ts;
    r.mode = x.mode;
    r.trigger = x.trigger;
    r.has_begin_seq = x.has_seq;
    r.begin_seq = x.begin_seq;
  } else if (it.kind == Kind::kRundownModule) {
    ++r.module_records;
  } else if (it.kind == Kind::kRundownMethod) {
    ++r.method_records;
    if (r.window_records == 0 || it.ts - r.window_ts >= Rundown::kPeakWindowNs) {
      r.window_ts = it.ts;
      r.window_records = 0;
    }
    r.peak_window_records = std::max(r.peak_window_records, ++r.window_records);
    std::vector<uint64_t>& ids = fl.publish_seq > r.begin_seq ? r.caught_up_methods : r.walked_methods;
    if (ids.empty() || ids.back() != fl.method_id) ids.push_back(fl.method_id);
    if (fl.publish_seq > r.begin_seq) ++r.after_begin;
    // A record's publish_seq is a publication's number: evidence like a method_load's.
    if (fl.publish_seq != 0) p.seen_seqs.add(fl.publish_seq);
    p.pending.push_back(PendingRecord{fl.version_id, fl.method_id, fl.module_id, fl.publish_seq, it.digest,
                                      uint32_t(r.index), uint32_t(std::min<uint64_t>(fl.tier, UINT32_MAX))});
    if (p.pending.size() >= Process::kPendingBatch) applyRecords(p);
  } else if (it.kind == Kind::kRundownEnd) {
    onRundownEnd(p, r, it, b.rare[it.rare]);
  }
}

void Checker::onRundownEnd(Process& p, Rundown& r, const Item& it, const RareItem& x) {
  if (r.has_end) {  // as a second begin: the second would overwrite the first's counts unseen
    error_ =
        "event jitprov_rundown:rundown_end: missing or malformed rundown_id (a second rundown_end with the same "
        "id)";
    return;
  }
  r.has_end = true;
  r.end_ts = it.ts;
  r.end_modules = x.modules;
  r.end_methods = x.methods;
  r.end_versions = x.versions;
  r.end_skipped = x.skipped;
  r.end_retried = x.retried;
  r.end_duration = x.duration;
  r.has_end_seq = x.has_seq;
  if (x.has_seq) {
    r.publish_seq = x.publish_seq;
    r.end_seq = x.end_seq;
    r.caught_up = x.caught_up;
  }
  r.cut_short = x.cut_short;
  r.has_method_counts = x.has_methods;
  r.end_caught_up_methods = x.caught_up_methods;
  if (options_.live) {  // following a live session: say so as each rundown completes
    FILE* out = options_.progress != nullptr ? options_.progress : stdout;
    std::fprintf(out,
                 "live: %s: rundown %llu ended: %llu method records received, %llu versions by its "
                 "count%s, %.1f ms after its begin\n",
                 who(p).c_str(), (unsigned long long)it.rid, (unsigned long long)r.method_records,
                 (unsigned long long)r.end_versions, r.cut_short ? ", cut short" : "",
                 r.has_begin ? double(it.ts - r.begin_ts) / 1e6 : 0.0);
    std::fflush(out);
  }
}

// G2's verdict on one record of rundown `index`: counted, and the first few shown.
void Checker::g2Verdict(Process& p, uint64_t index, uint64_t version_id, bool equal) {
  Rundown& r = *p.by_index[index];
  ++r.g2_checked;
  if (!equal && r.g2_mismatch++ < options_.show) r.mismatched.push_back(version_id);
}

// The pending rundown records, in order of version id: G4 (a bit per rundown, or the
// `late` list), G2 against the method_load (now, or when it arrives: Process::g2),
// and the versions known only from records.
void Checker::applyRecords(Process& p) {
  auto verdict = [this, &p](uint64_t index, uint64_t vid, bool equal) { g2Verdict(p, index, vid, equal); };
  std::sort(p.pending.begin(), p.pending.end(),
            [](const PendingRecord& a, const PendingRecord& b) { return a.version_id < b.version_id; });
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < p.pending.size(); ++i) {
    if (i + kAhead < p.pending.size()) p.versions.prefetch(p.pending[i + kAhead].version_id);
    const PendingRecord& rec = p.pending[i];
    Rundown& r = *p.by_index[rec.rundown_index];
    VersionEntry& v = p.versions.get(rec.version_id);
    if (v.method_id == 0) {  // known from rundowns only (so far)
      p.countBody(rec.tier);
      v.method_id = rec.method_id;
      v.module_id = rec.module_id;
      v.publish_seq = rec.publish_seq;
    }
    // G4 (G4 of the 64th and later rundowns: at the end, from `late`).
    if (r.index < VersionEntry::kRundownBits) {
      const uint64_t bit = uint64_t{1} << r.index;
      if ((v.in_rundowns & bit) != 0 && r.duplicates++ < options_.show) r.duplicated.push_back(rec.version_id);
      v.in_rundowns |= bit;
    } else {
      r.late.push_back(rec.version_id);
    }
    p.g2.onRecord(r.index, rec.version_id, rec.digest, v.load, verdict);
  }
  p.pending.clear();
}

void Checker::finishReading() {
  for (auto& [key, p] : processes_) applyRecords(p);
}

// --- the second reading: naming the fields of G2 mismatches ---------------------------

bool Checker::wantExplanations() {
  bool any = false;
  for (auto& [key, p] : processes_)
    for (auto& [rid, r] : p.rundowns)
      for (const uint64_t vid : r.mismatched) {
        p.explain_load.try_emplace(vid);
        p.explain_record.try_emplace({rid, vid});
        any = true;
      }
  return any;
}

void Checker::explainLoad(int64_t pid, uint32_t instance, const MethodRecordView& r) {
  auto pit = processes_.find({pid, instance});
  if (pid < 0 || pit == processes_.end()) return;
  Process& p = pit->second;
  if (auto it = p.explain_load.find(r.version_id); it != p.explain_load.end() && it->second.version_id == 0)
    it->second = own(r);
}

void Checker::explainRecord(int64_t pid, uint32_t instance, uint64_t rundown_id, const MethodRecordView& r) {
  auto pit = processes_.find({pid, instance});
  if (pid < 0 || pit == processes_.end()) return;
  Process& p = pit->second;
  if (auto it = p.explain_record.find({rundown_id, r.version_id});
      it != p.explain_record.end() && it->second.version_id == 0)
    it->second = own(r);
}

// --- the verdicts (once the reading has ended) ----------------------------------------

namespace {

bool inRundown(const VersionEntry& v, const Rundown& r) {
  return r.index < VersionEntry::kRundownBits ? (v.in_rundowns >> r.index & 1) != 0
                                              : std::binary_search(r.late.begin(), r.late.end(), v.version_id);
}

// The number of a version's removal the trace shows, or UINT64_MAX: its own retirement,
// or its method's unload (alone, or with its module).
uint64_t removalOf(const Process& p, const VersionEntry& v) {
  uint64_t r = UINT64_MAX;
  const uint64_t vid = v.version_id, method_id = v.method_id;
  if (v.in_rundowns & VersionEntry::kRetired)
    if (const uint64_t* s = p.code_unload.find(vid); s != nullptr && *s != 0) r = *s;
  if (const uint64_t* s = p.method_unload.find(method_id); s != nullptr) r = std::min(r, *s);
  return r;
}

// Whether the exact checks apply to a rundown: its begin, its end, the sequence fields.
bool exactOf(const Process& p, const Rundown& r) {
  return p.seq_fields && r.has_begin && r.has_end && r.has_begin_seq && r.has_end_seq;
}

std::string vs(uint64_t vid) { return "version_id " + std::to_string(vid); }

}  // namespace

// What streaming left to the end: the records whose method_load never came (nothing to
// compare them with), and G4 of the 64th and later rundowns, from their sorted records.
void Checker::settle(Process& p) {
  p.g2.forEachUndecided([&p](uint64_t index, uint64_t) { ++p.by_index[index]->g2_no_load; });
  for (Rundown* r : p.by_index) {
    if (r->index < VersionEntry::kRundownBits) continue;
    std::sort(r->late.begin(), r->late.end());
    for (size_t i = 1; i < r->late.size(); ++i)
      if (r->late[i] == r->late[i - 1] && r->duplicates++ < options_.show) r->duplicated.push_back(r->late[i]);
  }
}

// One version against every rundown of its process: G2's "not removed before the walk
// reached it", and G3+.
void Checker::checkVersion(Process& p, const VersionEntry& v) {
  const uint64_t show = options_.show;
  if (v.publish_seq == 0) return;  // a trace without the sequence fields: nothing exact
  const uint64_t rm = removalOf(p, v);
  // A lower bound of the number of its removal, from what the trace shows of it: a
  // method_load at s gives s + 1; a record of a rundown's first pass (publish_seq <= B)
  // gives B (a removal numbered below B was complete before that walk began); a record
  // of the catch-up gives P (it began after P was read).
  uint64_t removal_after = !v.load.empty() ? v.publish_seq + 1 : 0;
  uint32_t appearances = 0;
  for (const Rundown* r : p.by_index) {
    if (!inRundown(v, *r)) continue;
    ++appearances;
    if (r->has_begin_seq && r->has_end_seq)
      removal_after = std::max(removal_after, v.publish_seq <= r->begin_seq ? r->begin_seq : r->publish_seq);
  }
  for (Rundown* rp : p.by_index) {
    Rundown& r = *rp;
    if (!exactOf(p, r)) continue;
    const bool in_r = appearances != 0 && inRundown(v, r);
    if (in_r) {
      if (v.publish_seq > r.publish_seq && r.beyond_p++ < show)
        r.g2_messages.push_back("G3+: " + vs(v.version_id) + " has publish_seq " + std::to_string(v.publish_seq) +
                                " > rundown_end.publish_seq " + std::to_string(r.publish_seq));
      // The first pass began after B was read, the catch-up after P (docs/spec.md, P8).
      const bool first = v.publish_seq <= r.begin_seq;
      const uint64_t bound = first ? r.begin_seq : r.publish_seq;
      if (rm < bound && r.g2_removed++ < show)
        r.g2_messages.push_back("G2: " + vs(v.version_id) + " was removed (sequence " + std::to_string(rm) +
                                ") before the " + (first ? "walk began (" : "catch-up began (") +
                                std::to_string(bound) + ") but is reported");
    }
    // G3+: every version the trace knows, published up to P, not removed up to E.
    if (r.cut_short || v.publish_seq > r.publish_seq) continue;  // cut short: not complete, and says so
    // Known only from this rundown: nothing to check it against.
    if (v.load.empty() && appearances - (in_r ? 1 : 0) == 0) continue;
    if (rm <= r.end_seq) continue;  // removed: may be absent
    // Not removed up to E, for sure: a later walk saw it alive after E, or the trace
    // shows every number from its last sign of life to E (so no removal hides there).
    if (!(removal_after > r.end_seq || p.seen_seqs.covered(removal_after, r.end_seq))) {
      if (!in_r) ++r.undecidable;
      continue;
    }
    ++r.checked3;
    if (!in_r && r.missing++ < show)
      r.g3_messages.push_back("G3: " + vs(v.version_id) + " (method " + std::to_string(v.method_id) + ", publish_seq " +
                              std::to_string(v.publish_seq) + ") was published before the rundown's end (publish_seq " +
                              std::to_string(r.publish_seq) + "), not removed, but is missing");
  }
}

std::string Checker::who(const Process& p) const {
  return (lives_ != nullptr ? lives_->label(p.pid) : "process " + std::to_string(p.pid)) +
         (p.instance != 0 ? " runtime " + std::to_string(p.instance) : "");
}

ProcessVerdict Checker::check(Process& p, bool explained, Outcome* out) {
  settle(p);
  p.versions.forEach([&](const VersionEntry& v) { checkVersion(p, v); });
  const std::string who = this->who(p);
  if (p.rundowns.empty()) out->not_checked.push_back(who + ": no rundown in the trace");
  if (!p.seq_fields)
    out->not_checked.push_back(who +
                               ": events without the publication sequence fields (a trace of an older "
                               "jitprov): G3+ and removals are not checked");
  ProcessVerdict pv{&p, {}};
  for (auto& [rid, r] : p.rundowns) pv.rundowns.push_back(judge(p, r, who, explained, out));
  return pv;
}

namespace {

// The methods with records in `r`, and of them those with records only in its catch-up
// (published after B).
std::pair<uint64_t, uint64_t> distinctMethods(const Rundown& r) {
  std::vector<uint64_t> walked = r.walked_methods, later = r.caught_up_methods;
  std::sort(walked.begin(), walked.end());
  walked.erase(std::unique(walked.begin(), walked.end()), walked.end());
  std::sort(later.begin(), later.end());
  later.erase(std::unique(later.begin(), later.end()), later.end());
  uint64_t added = 0;
  for (uint64_t id : later) added += std::binary_search(walked.begin(), walked.end(), id) ? 0 : 1;
  return {walked.size() + added, added};
}

// The violations of a rundown's begin, end and counts, in the order shown.
void checkFrame(const Process& p, const Rundown& r, bool exact, std::vector<std::string>* rv, Outcome* out,
                bool* trace_ended_first) {
  auto violate = [&](const std::string& check, const std::string& what) {
    ++out->violations;
    rv->push_back(check + ": " + what);
  };
  if (!r.has_begin) violate("begin", "no rundown_begin");
  // No end: a violation while the process's events go on after the rundown's last one;
  // when the trace itself ends first (the session stopped, the process died), the
  // rundown was not finished in it, which is no guarantee broken: not checked.
  *trace_ended_first = !r.has_end && p.last_ts <= r.last_ts;
  if (!r.has_end && !*trace_ended_first)
    violate("end", "no rundown_end, although the process's events go on after the rundown's last one");
  if (!r.has_end) return;
  // Cut short because its session stopped and started again meanwhile, a rundown lost
  // the records emitted while the session was stopped: then only "not more".
  if (r.cut_short ? r.method_records > r.end_versions : r.end_versions != r.method_records)
    violate("counts", "rundown_end.versions = " + std::to_string(r.end_versions) + " but " +
                          std::to_string(r.method_records) + " method records");
  if (r.end_modules != r.module_records)
    violate("counts", "rundown_end.modules = " + std::to_string(r.end_modules) + " but " +
                          std::to_string(r.module_records) + " module records");
  if (r.has_method_counts) {
    const auto [methods, added] = distinctMethods(r);
    if (r.cut_short ? methods > r.end_methods : r.end_methods != methods)
      violate("counts", "rundown_end.methods = " + std::to_string(r.end_methods) + " but " + std::to_string(methods) +
                            " methods have method records");
    // Cut short: a method whose first-pass records were lost looks caught up only, so
    // its count bounds nothing.
    if (!r.cut_short && r.end_caught_up_methods != added)
      violate("counts", "rundown_end.caught_up_methods = " + std::to_string(r.end_caught_up_methods) + " but " +
                            std::to_string(added) + " methods have records only after rundown_begin's publish_seq");
  }
  if (!exact) return;
  if (!(r.begin_seq <= r.publish_seq && r.publish_seq <= r.end_seq))
    violate("counts", "sequence values out of order: begin " + std::to_string(r.begin_seq) + ", publish_seq " +
                          std::to_string(r.publish_seq) + ", end_seq " + std::to_string(r.end_seq));
  if (r.cut_short ? r.after_begin > r.caught_up : r.caught_up != r.after_begin)
    violate("counts", "rundown_end.caught_up = " + std::to_string(r.caught_up) + " but " +
                          std::to_string(r.after_begin) + " records published after rundown_begin");
}

// G2's mismatches as shown: the fields that differ when they were read again.
std::string mismatchMessage(const Process& p, uint64_t rid, uint64_t vid, bool explained) {
  auto load = p.explain_load.find(vid);
  auto rec = p.explain_record.find({rid, vid});
  const bool named = explained && load != p.explain_load.end() && load->second.version_id != 0 &&
                     rec != p.explain_record.end() && rec->second.version_id != 0;
  const std::string d = named ? differingFields(rec->second, load->second) : "";
  return "G2: " + vs(vid) + ": " + (!d.empty() ? d : std::string("fields (their digest)")) +
         " differ from its method_load";
}

}  // namespace

// The verdicts on one rundown; what could not be checked goes to out->not_checked.
RundownVerdict Checker::judge(Process& p, Rundown& r, const std::string& who, bool explained, Outcome* out) {
  RundownVerdict v;
  v.rundown = &r;
  v.exact = exactOf(p, r);
  std::vector<std::string>& rv = v.violations;
  bool trace_ended_first = false;
  checkFrame(p, r, v.exact, &rv, out, &trace_ended_first);
  const std::string rname = who + ", rundown " + std::to_string(r.id);
  if (trace_ended_first)
    out->not_checked.push_back(rname +
                               ": the trace ends before its rundown_end (the session stopped or the process "
                               "ended): not complete in this trace");
  // Counted in full, shown up to --show each.
  out->violations += r.duplicates + r.g2_mismatch + r.g2_removed + r.beyond_p + r.missing;
  for (const uint64_t vid : r.duplicated) rv.push_back("G4: " + vs(vid) + " appears twice");
  v.g4 = r.duplicates ? "violated" : "pass";
  for (const uint64_t vid : r.mismatched) rv.push_back(mismatchMessage(p, r.id, vid, explained));
  rv.insert(rv.end(), r.g2_messages.begin(), r.g2_messages.end());
  // No record at all: nothing can be inconsistent.
  v.g2 = r.g2_mismatch + r.g2_removed ? "violated" : r.g2_checked || r.method_records == 0 ? "pass" : "not checked";
  rv.insert(rv.end(), r.g3_messages.begin(), r.g3_messages.end());
  // Nothing to check, but the trace shows every publication and removal since the
  // process began: then there was nothing else to find.
  const bool whole_history = v.exact && !r.cut_short && p.seen_seqs.covered(1, r.end_seq);
  v.g3 = r.missing || r.beyond_p       ? "violated"
         : r.cut_short                 ? "cut short"
         : r.checked3 || whole_history ? "pass"
                                       : "not checked";
  if (std::string(v.g2) == "not checked")
    out->not_checked.push_back(rname +
                               ": G2: no record had its method_load in the trace (enable "
                               "jitprov_runtime:* before the code is published)");
  if (r.cut_short)
    out->not_checked.push_back(rname +
                               ": G3+: cut short by the application's shutdown (rundown_end.cut_short): "
                               "it is not complete");
  else if (std::string(v.g3) == "not checked")
    out->not_checked.push_back(rname + (v.exact ? ": G3+: the trace shows no version published before its end "
                                                  "other than its own records (nothing to check them against)"
                                                : ": G3+: the rundown lacks its begin, end or sequence fields"));
  // Versions it lacks that the trace cannot show were removed or alive at its end: a
  // stretch of the publication sequence is missing from the trace (the runtime events
  // not enabled throughout, a session stopped and started). The others passing does not
  // make the rundown complete.
  if (r.undecidable != 0 && !r.cut_short)
    out->not_checked.push_back(rname + ": G3+: " + std::to_string(r.undecidable) +
                               " version(s) published before its end are not in it, and the trace lacks part of the "
                               "publication sequence after they were last seen: whether they were removed cannot be "
                               "decided (enable jitprov_runtime:* for the whole session)");
  return v;
}

}  // namespace jitprov::verify
