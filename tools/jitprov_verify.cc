// SPDX-License-Identifier: MIT
// jitprov-verify TRACE_DIR: reads CTF traces through libbabeltrace2 and checks every
// rundown in them against docs/spec.md, per lttng session and per process:
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
//   counts:        rundown_end's versions/modules/caught_up equal the records seen; a
//                  rundown without its begin or end is reported;
//   loss:          discarded events anywhere in the trace.
// Traces are grouped by session (the directory above `ust/`); events are keyed by the
// process that emitted them (the `vpid` context, or the trace of a per-process buffer)
// and the runtime instance in it (runtime_instance: ids are per runtime): processes and
// runtimes are never merged; where processes cannot be told apart, exit 2.
// Exit: 0 every check ran and holds; 1 a guarantee is violated; 2 usage, unreadable
// input, or processes that cannot be told apart; 3 events lost (violations are still
// printed); 4 nothing violated, but something could not be checked (no rundown, no
// runtime events, a trace without the sequence fields): the report says what.
#include <babeltrace2/babeltrace.h>
#include <jitprov/utf8.h>
#include <nlohmann/json.hpp>
#include "cli.h"
#include "verify_checks.h"
#include "verify_g2.h"
#include "verify_pipe.h"
#include "verify_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

constexpr int kExitHold = 0, kExitViolated = 1, kExitUnreadable = 2, kExitLost = 3, kExitNotChecked = 4;

using jitprov::verify::BatchPipe;
using jitprov::verify::Digest;
using jitprov::verify::MethodNumbers;
using jitprov::verify::MethodRecord;
using jitprov::verify::MethodRecordView;
using jitprov::verify::VersionEntry;

struct Rundown {
  uint64_t id = 0;
  uint64_t index = 0;  // order of first appearance in its process: its bit in VersionEntry::in_rundowns
  bool has_begin = false, has_end = false;
  int64_t begin_ts = 0, end_ts = 0, last_ts = 0;  // last_ts: its last event
  std::string mode, trigger;
  uint64_t module_records = 0, method_records = 0;
  uint64_t after_begin = 0;  // records published after B: the catch-up's
  uint64_t end_modules = 0, end_methods = 0, end_versions = 0, end_skipped = 0, end_retried = 0, end_duration = 0;
  // The publication sequence: B on rundown_begin; P, E and caught_up on rundown_end.
  bool has_begin_seq = false, has_end_seq = false;
  uint64_t begin_seq = 0, publish_seq = 0, end_seq = 0, caught_up = 0;
  bool cut_short = false;  // the application's shutdown ended it early
  // Checked as records arrive.
  uint64_t g2_checked = 0, g2_no_load = 0, g2_mismatch = 0, duplicates = 0;
  std::vector<uint64_t> mismatched, duplicated;  // version ids of the first few (--show)
  // The 64th and later rundowns of a process: their records' version ids (no bit left).
  std::vector<uint64_t> late;
  // Checked at the end (checkProcess).
  uint64_t g2_removed = 0, beyond_p = 0, checked3 = 0, missing = 0, undecidable = 0;
  std::vector<std::string> g2_messages, g3_messages;
};

// A rundown record waiting to be applied to its version's entry (applyRecords).
struct PendingRecord {
  uint64_t version_id, method_id, module_id, publish_seq;
  Digest digest;
  uint64_t rundown_index;
};

struct Process {
  int64_t pid = 0;
  uint32_t instance = 0;  // the runtime's (runtime_instance); 0: a trace from before the field
  jitprov::verify::VersionTable versions;
  jitprov::verify::G2Matcher g2;  // holds the records that came before their method_load
  // method_id -> unload_seq, only where it is not its module's (module_unload).
  jitprov::verify::IdMap method_unload;
  jitprov::verify::IdMap code_unload;  // version_id -> retire_seq (0: no field)
  // module_id -> its unload's number: one number removes every method of the module, so
  // a version of a method whose own method_unload is not in the trace is removed too.
  jitprov::verify::IdMap module_unload;
  int64_t last_ts = 0;                   // the process's last event
  std::map<uint64_t, Rundown> rundowns;  // rundown_id ->
  std::vector<Rundown*> by_index;        // Rundown::index ->
  jitprov::verify::SeqSet seen_seqs;     // every sequence number the trace shows
  // Rundown records not applied to their versions yet: a walk's records come in walk
  // order, scattered over the version table; applied in batches sorted by id, the
  // table is swept instead of probed at random (a miss each: most of the time at 10 M).
  std::vector<PendingRecord> pending;
  static constexpr size_t kPendingBatch = 1 << 16;
  uint64_t events = 0, method_loads = 0, method_unloads = 0, code_unloads = 0;
  bool seq_fields = true;  // every event carried the sequence fields
  // For a second reading that names the fields of G2 mismatches (explainMismatches).
  std::unordered_map<uint64_t, MethodRecord> explain_load;               // version_id ->
  std::map<std::pair<uint64_t, uint64_t>, MethodRecord> explain_record;  // (rundown_id, version_id) ->
};

// Where live progress lines go: stdout, or stderr when stdout carries the JSON report.
FILE* g_progress = stdout;
// Violations shown per check (--show).
uint64_t g_show = 5;

struct Batch;  // of events read, for the checking thread (below)

struct Session {
  std::string root;  // the directory above ust/ (or the trace itself), or the live URL
  // Live (net://): read from lttng-relayd while the session records.
  bool live = false;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool timed_out = false;
  std::string connection_lost;  // why the live connection ended early, if it did
  std::string name;             // the trace's trace_name, when it has one
  std::vector<std::string> traces;
  // By process and runtime instance: ids are per runtime, and a process may hold several.
  std::map<std::pair<int64_t, uint32_t>, Process> processes;
  uint64_t discarded_events = 0, discarded_packets = 0, discarded_unknown = 0;
  uint64_t unattributed = 0;  // jitprov events of no known process
  std::string error;          // fatal: a field missing or malformed
  // The process of each stream whose trace names one (per-process buffers); emptied
  // with each graph (streams die with it).
  std::unordered_map<const bt_stream*, int64_t> stream_pid;
  // Second reading (explainMismatches): only the fields of G2 mismatches are collected.
  bool explaining = false;
  // The first reading's pipe to the checking thread (readSession); null on the second.
  BatchPipe<Batch>* pipe = nullptr;
  Process* last_process = nullptr;  // of the last event (most events are of the one before's)
};

// --- field access -------------------------------------------------------------------
// A structure's member by name. Looked up by name once per (structure class, name) and
// then by index: babeltrace2's by-name lookup (a string hash and compare) cost more than
// decoding the event. A direct-mapped cache; `name` is one of this file's literals, so
// its address identifies it (two copies of a literal only take two entries). Field
// classes die with their graph, and another may be allocated at the same address: the
// cache is emptied whenever a graph is made (resetMemberCache()).
struct MemberCacheEntry {
  const bt_field_class* fc = nullptr;
  const char* name = nullptr;
  int64_t index = -1;  // -1: no such member
};
MemberCacheEntry g_member_cache[1024];
void resetMemberCache() {
  for (MemberCacheEntry& e : g_member_cache) e = MemberCacheEntry{};
}

const bt_field* member(const bt_field* s, const char* name) {
  if (s == nullptr) return nullptr;
  using Entry = MemberCacheEntry;
  Entry* cache = g_member_cache;
  const bt_field_class* fc = bt_field_borrow_class_const(s);
  const uintptr_t h = (reinterpret_cast<uintptr_t>(fc) >> 4) * 31 ^ (reinterpret_cast<uintptr_t>(name) >> 0);
  Entry& e = cache[(h ^ (h >> 10)) & 1023];
  if (e.fc != fc || e.name != name) {
    e = Entry{fc, name, -1};
    const uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n; ++i) {
      const bt_field_class_structure_member* m = bt_field_class_structure_borrow_member_by_index_const(fc, i);
      if (std::strcmp(bt_field_class_structure_member_get_name(m), name) == 0) {
        e.index = int64_t(i);
        break;
      }
    }
  }
  return e.index < 0 ? nullptr : bt_field_structure_borrow_member_field_by_index_const(s, uint64_t(e.index));
}

bool u64(const bt_field* s, const char* name, uint64_t* out) {
  const bt_field* f = member(s, name);
  if (f == nullptr) return false;
  const bt_field_class_type t = bt_field_get_class_type(f);
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
    *out = bt_field_integer_unsigned_get_value(f);
    return true;
  }
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
    *out = uint64_t(bt_field_integer_signed_get_value(f));
    return true;
  }
  return false;
}

// Whether the trace's metadata maps the value of enumeration field `f` to exactly one
// label (then *label is it).
bool oneLabel(const bt_field* f, const char** label) {
  bt_field_class_enumeration_mapping_label_array labels;
  uint64_t count = 0;
  if (bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &count) !=
          BT_FIELD_ENUMERATION_GET_MAPPING_LABELS_STATUS_OK ||
      count != 1)
    return false;
  *label = labels[0];
  return true;
}

// An enumeration field the trace's metadata maps to exactly one label, or nullptr.
const bt_field* enumField(const bt_field* s, const char* name, const char** label) {
  const bt_field* f = member(s, name);
  if (f == nullptr || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION) return nullptr;
  if (!oneLabel(f, label)) return nullptr;
  return f;
}

bool enumLabel(const bt_field* s, const char* name, std::string* out) {
  const char* label = nullptr;
  if (enumField(s, name, &label) == nullptr) return false;
  *out = label;
  return true;
}

// Where a method record's members are, per payload class: found by name once, then
// read by index with their types known (the records are nearly every event).
enum MethodMember {
  kMethodId,
  kVersionId,
  kCodeStart,
  kTier,
  kNamespace,
  kName,
  kSignature,
  kModuleId,
  kRejitId,
  kCodeSize,
  kToken,
  kFlags,
  kHostTier,
  kPublishSeq,
  kMethodMembers
};
constexpr const char* kMethodMemberNames[kMethodMembers] = {
    "method_id", "version_id", "code_start", "tier",         "namespace",    "name",      "signature",
    "module_id", "rejit_id",   "code_size",  "method_token", "method_flags", "host_tier", "publish_seq"};
struct MethodLayout {
  const bt_field_class* fc = nullptr;
  bool usable = false;  // every required member there, of a usable type
  int64_t index[kMethodMembers];
  bool is_signed[kMethodMembers];
  uint64_t tiers_labelled = 0;  // bit v: tier value v maps to exactly one label (checked once)
};
std::vector<MethodLayout> g_layouts;  // emptied with each graph (resetGraphCaches)

MethodLayout& layoutOf(const bt_field_class* fc) {
  for (MethodLayout& l : g_layouts)
    if (l.fc == fc) return l;
  MethodLayout l;
  l.fc = fc;
  l.usable = true;
  const uint64_t n = bt_field_class_structure_get_member_count(fc);
  for (int k = 0; k < kMethodMembers; ++k) {
    l.index[k] = -1;
    l.is_signed[k] = false;
    for (uint64_t i = 0; i < n; ++i) {
      const bt_field_class_structure_member* m = bt_field_class_structure_borrow_member_by_index_const(fc, i);
      if (std::strcmp(bt_field_class_structure_member_get_name(m), kMethodMemberNames[k]) != 0) continue;
      const bt_field_class_type t =
          bt_field_class_get_type(bt_field_class_structure_member_borrow_field_class_const(m));
      const bool text = k == kNamespace || k == kName || k == kSignature;
      const bool ok = text         ? t == BT_FIELD_CLASS_TYPE_STRING
                      : k == kTier ? t == BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION
                                   : bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_INTEGER);
      if (ok) {
        l.index[k] = int64_t(i);
        l.is_signed[k] = !text && bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
      }
      break;
    }
    if (l.index[k] < 0 && k != kHostTier && k != kPublishSeq) l.usable = false;  // those two are newer
  }
  g_layouts.push_back(l);
  return g_layouts.back();
}

// A method record's fields, of either event class (method_load, a rundown's method):
// one extraction for both, so that G2 compares like with like. Its names are views valid
// until the next message; *names_plain says whether all three are ASCII without NUL
// (then valid UTF-8).
bool methodFields(const bt_field* p, MethodRecordView* f, bool* names_plain) {
  const bt_field_class* fc = bt_field_borrow_class_const(p);
  MethodLayout* l = &layoutOf(fc);
  if (!l->usable) return false;
  auto at = [&](int k) { return bt_field_structure_borrow_member_field_by_index_const(p, uint64_t(l->index[k])); };
  auto num = [&](int k) {
    return l->is_signed[k] ? uint64_t(bt_field_integer_signed_get_value(at(k)))
                           : bt_field_integer_unsigned_get_value(at(k));
  };
  f->method_id = num(kMethodId);
  f->version_id = num(kVersionId);
  f->code_start = num(kCodeStart);
  f->module_id = num(kModuleId);
  f->rejit_id = uint32_t(num(kRejitId));
  f->code_size = uint32_t(num(kCodeSize));
  f->method_token = uint32_t(num(kToken));
  f->method_flags = uint32_t(num(kFlags));
  // The tier's label comes from the trace's own metadata (a value outside the mapping
  // has no label), not from a list kept here.
  const bt_field* tier = at(kTier);
  f->tier = bt_field_integer_unsigned_get_value(tier);
  if (f->tier >= 64 || (l->tiers_labelled >> f->tier & 1) == 0) {
    const char* label = nullptr;
    if (!oneLabel(tier, &label)) return false;
    if (f->tier < 64) l->tiers_labelled |= uint64_t{1} << f->tier;
  }
  if (l->index[kHostTier] >= 0) {
    const uint64_t v = num(kHostTier);
    if (v > UINT16_MAX) return false;
    f->host_tier = int64_t(v);
  }
  if (l->index[kPublishSeq] >= 0) {
    f->publish_seq = num(kPublishSeq);
    if (f->publish_seq == 0) return false;
  }
  // By their length, never strlen: babeltrace2 2.0.4 hands an empty string field the
  // previous event's value, with its length 0.
  auto text = [&](int k) {
    const bt_field* sf = at(k);
    return std::string_view(bt_field_string_get_value(sf), bt_field_string_get_length(sf));
  };
  f->name_space = text(kNamespace);
  f->name = text(kName);
  f->signature = text(kSignature);
  using jitprov::verify::plainAscii;
  *names_plain = plainAscii(f->name_space) && plainAscii(f->name) && plainAscii(f->signature);
  return true;
}

// Why a method record cannot be what jitprov emitted ("" when it can be). Names known
// to be plain ASCII are only measured.
std::string impossible(const MethodRecordView& f, bool names_plain) {
  if (names_plain && f.name_space.size() <= 4096 && f.name.size() <= 4096 && f.signature.size() <= 4096 &&
      f.method_id != 0 && f.version_id != 0 && f.module_id != 0 && f.code_start != 0 && f.code_size != 0 &&
      f.code_start <= UINT64_MAX - f.code_size)
    return "";
  return jitprov::verify::impossibleRecord(
      {f.method_id, f.version_id, f.module_id, f.code_start, f.code_size, f.name_space, f.name, f.signature});
}

// The process an event belongs to: its `vpid` context, else the vpid of its trace
// (per-process buffers); -1 when neither says.
int64_t processOf(Session* s, const bt_event* ev) {
  if (const bt_field* ctx = bt_event_borrow_common_context_field_const(ev)) {
    uint64_t pid;
    if (u64(ctx, "vpid", &pid)) return int64_t(pid);
  }
  const bt_stream* stream = bt_event_borrow_stream_const(ev);
  auto it = s->stream_pid.find(stream);
  if (it != s->stream_pid.end()) return it->second;
  int64_t pid = -1;
  const bt_value* v =
      bt_trace_borrow_environment_entry_value_by_name_const(bt_stream_borrow_trace_const(stream), "vpid");
  if (v != nullptr && bt_value_get_type(v) == BT_VALUE_TYPE_SIGNED_INTEGER) pid = bt_value_integer_signed_get(v);
  if (v != nullptr && bt_value_get_type(v) == BT_VALUE_TYPE_UNSIGNED_INTEGER)
    pid = int64_t(bt_value_integer_unsigned_get(v));
  s->stream_pid.emplace(stream, pid);
  return pid;
}

// The runtime instance an event is of: its runtime_instance field (every event of
// provider ABI 4 on), 0 in traces from before it. Ids are per runtime instance.
uint32_t instanceOf(const bt_field* payload) {
  uint64_t v = 0;
  return u64(payload, "runtime_instance", &v) && v <= UINT32_MAX ? uint32_t(v) : 0;
}

// A stream begins: note the session's name.
void onStreamBeginning(Session* s, const bt_message* msg) {
  const bt_stream* stream = bt_message_stream_beginning_borrow_stream_const(msg);
  if (s->name.empty()) {
    const bt_value* v =
        bt_trace_borrow_environment_entry_value_by_name_const(bt_stream_borrow_trace_const(stream), "trace_name");
    if (v != nullptr && bt_value_get_type(v) == BT_VALUE_TYPE_STRING) s->name = bt_value_string_get(v);
  }
}

// G2's verdict on one record of rundown `index`: counted, and the first few shown.
void g2Verdict(Process& p, uint64_t index, uint64_t version_id, bool equal) {
  Rundown& r = *p.by_index[index];
  ++r.g2_checked;
  if (!equal && r.g2_mismatch++ < g_show) r.mismatched.push_back(version_id);
}

// The pending rundown records, in order of version id: G4 (a bit per rundown, or the
// `late` list), G2 against the method_load (now, or when it arrives: Process::g2),
// and the versions known only from records.
void applyRecords(Process& p) {
  auto verdict = [&p](uint64_t index, uint64_t vid, bool equal) { g2Verdict(p, index, vid, equal); };
  std::sort(p.pending.begin(), p.pending.end(),
            [](const PendingRecord& a, const PendingRecord& b) { return a.version_id < b.version_id; });
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < p.pending.size(); ++i) {
    if (i + kAhead < p.pending.size()) p.versions.prefetch(p.pending[i + kAhead].version_id);
    const PendingRecord& rec = p.pending[i];
    Rundown& r = *p.by_index[rec.rundown_index];
    VersionEntry& v = p.versions.get(rec.version_id);
    if (v.method_id == 0) {  // known from rundowns only (so far)
      v.method_id = rec.method_id;
      v.module_id = rec.module_id;
      v.publish_seq = rec.publish_seq;
    }
    // G4 (G4 of the 64th and later rundowns: at the end, from `late`).
    if (r.index < VersionEntry::kRundownBits) {
      const uint64_t bit = uint64_t{1} << r.index;
      if ((v.in_rundowns & bit) != 0 && r.duplicates++ < g_show) r.duplicated.push_back(rec.version_id);
      v.in_rundowns |= bit;
    } else {
      r.late.push_back(rec.version_id);
    }
    p.g2.onRecord(r.index, rec.version_id, rec.digest, v.load, verdict);
  }
  p.pending.clear();
}

// What an event is, by its class: decided once per class (a name compare per event
// cost more than a flat lookup). Classes die with their graph: emptied with each one.
enum class Kind : uint8_t {
  kOther,
  kMethodLoad,
  kMethodUnload,
  kCodeUnload,
  kRundownBegin,
  kRundownModule,
  kRundownMethod,
  kRundownEnd,
  kRundownOther,
  kJitprovOther  // another jitprov event: counted as the process's
};
std::unordered_map<const bt_event_class*, Kind> g_kinds;

// The last classes seen, direct-mapped in front of g_kinds (a hash lookup per event).
struct KindCacheEntry {
  const bt_event_class* ec = nullptr;
  Kind kind = Kind::kOther;
};
KindCacheEntry g_kind_cache[64];

Kind kindOf(const bt_event_class* ec) {
  KindCacheEntry& c = g_kind_cache[(reinterpret_cast<uintptr_t>(ec) >> 4) & 63];
  if (c.ec == ec) return c.kind;
  auto it = g_kinds.find(ec);
  if (it != g_kinds.end()) {
    c = {ec, it->second};
    return it->second;
  }
  const char* name = bt_event_class_get_name(ec);
  const std::string_view n = name == nullptr ? "" : name;
  Kind k = Kind::kOther;
  if (n == "jitprov_runtime:method_load")
    k = Kind::kMethodLoad;
  else if (n == "jitprov_runtime:method_unload")
    k = Kind::kMethodUnload;
  else if (n == "jitprov_runtime:code_unload")
    k = Kind::kCodeUnload;
  else if (n == "jitprov_rundown:rundown_begin")
    k = Kind::kRundownBegin;
  else if (n == "jitprov_rundown:module")
    k = Kind::kRundownModule;
  else if (n == "jitprov_rundown:method")
    k = Kind::kRundownMethod;
  else if (n == "jitprov_rundown:rundown_end")
    k = Kind::kRundownEnd;
  else if (n.rfind("jitprov_rundown:", 0) == 0)
    k = Kind::kRundownOther;
  else if (n.rfind("jitprov_", 0) == 0)
    k = Kind::kJitprovOther;
  g_kinds.emplace(ec, k);
  c = {ec, k};
  return k;
}

void resetGraphCaches(Session* s) {
  resetMemberCache();
  g_kinds.clear();
  for (KindCacheEntry& e : g_kind_cache) e = KindCacheEntry{};
  g_layouts.clear();
  s->stream_pid.clear();
}

// The second reading: the fields of the versions whose records did not match.
void onExplainEvent(Session* s, const bt_event* ev, Kind kind) {
  if (kind != Kind::kMethodLoad && kind != Kind::kRundownMethod) return;
  const int64_t pid = processOf(s, ev);
  const bt_field* f = bt_event_borrow_payload_field_const(ev);
  auto pit = s->processes.find({pid, instanceOf(f)});
  if (pid < 0 || pit == s->processes.end()) return;
  Process& p = pit->second;
  MethodRecordView fl;
  uint64_t rid = 0;
  bool plain = false;
  if (!methodFields(f, &fl, &plain) || (kind == Kind::kRundownMethod && !u64(f, "rundown_id", &rid))) return;
  if (kind == Kind::kMethodLoad) {
    if (auto it = p.explain_load.find(fl.version_id); it != p.explain_load.end() && it->second.version_id == 0)
      it->second = jitprov::verify::own(fl);
  } else if (auto it = p.explain_record.find({rid, fl.version_id});
             it != p.explain_record.end() && it->second.version_id == 0) {
    it->second = jitprov::verify::own(fl);
  }
}

// --- reading (the graph's thread) and checking (the pipe's thread) -------------------
// The reading thread decodes each event through babeltrace2 and keeps what the checks
// need in an Item; the checking thread applies the items to the process's tables
// (applyItem). The two share nothing else: Session's reading side (stream_pid,
// unattributed, the discarded counts, name) is the reader's, its processes and `error`
// the checker's until the pipe is drained.
enum ItemFlags : uint8_t {
  kNoSeqField = 1,  // an unload without its sequence field (a trace from before it existed)
};
struct Item {
  Kind kind;
  uint8_t flags = 0;
  uint32_t rare = 0;  // rundown_begin / rundown_end: their index in Batch::rare
  int64_t pid = 0, ts = 0;
  uint32_t instance = 0;  // runtime_instance (0: a trace from before the field)
  uint64_t rid = 0;       // the rundown's id, for rundown events
  // method_load, a rundown's method: its fields, and the digest of them with its names
  // (read here: the names live only while the event is read). method_unload: method_id,
  // module_id and publish_seq = its unload_seq; code_unload: version_id and publish_seq
  // = its retire_seq (0: none).
  MethodNumbers fl;
  Digest digest{};
};
// A rundown_begin's or rundown_end's other fields.
struct RareItem {
  std::string mode, trigger;  // begin
  bool has_seq = false;       // begin: publish_seq; end: publish_seq, end_seq, caught_up
  uint64_t begin_seq = 0;
  uint64_t modules = 0, methods = 0, versions = 0, skipped = 0, retried = 0, duration = 0;
  uint64_t publish_seq = 0, end_seq = 0, caught_up = 0;
  bool cut_short = false;
};
struct Batch {
  std::vector<Item> items;
  std::vector<RareItem> rare;
  std::string error;  // the reader's: the event after the last item could not be read
  void clear() {
    items.clear();
    rare.clear();
    error.clear();
  }
};
constexpr size_t kBatchItems = 4096;

// The checking side of one event.
void applyItem(Session* s, const Item& it, const Batch& b) {
  if (s->last_process == nullptr || s->last_process->pid != it.pid ||
      s->last_process->instance != it.instance) {  // std::map nodes stay put
    s->last_process = &s->processes[{it.pid, it.instance}];
    s->last_process->pid = it.pid;
    s->last_process->instance = it.instance;
  }
  Process& p = *s->last_process;
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
      auto verdict = [&p](uint64_t index, uint64_t vid, bool equal) { g2Verdict(p, index, vid, equal); };
      if (!p.g2.onLoad(fl.version_id, it.digest, &v.load, verdict)) return;
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
      // One number removes every method of a module (registry.h P8): kept per module; a
      // method's own only where it differs from its module's (none in jitprov's traces).
      if (!p.module_unload.emplace(fl.module_id, seq) && *p.module_unload.find(fl.module_id) != seq)
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
    case Kind::kJitprovOther:
      return;
    default:
      break;
  }
  // A rundown's event.
  auto [rit, fresh] = p.rundowns.try_emplace(it.rid);
  Rundown& r = rit->second;
  if (fresh) {
    r.id = it.rid;
    r.index = p.by_index.size();
    p.by_index.push_back(&r);
  }
  r.last_ts = std::max(r.last_ts, it.ts);
  if (it.kind == Kind::kRundownBegin) {
    if (r.has_begin) {
      s->error =
          "event jitprov_rundown:rundown_begin: missing or malformed rundown_id (a second rundown_begin with "
          "the same id)";
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
    if (fl.publish_seq > r.begin_seq) ++r.after_begin;
    // A record's publish_seq is a publication's number: evidence like a method_load's.
    if (fl.publish_seq != 0) p.seen_seqs.add(fl.publish_seq);
    p.pending.push_back(PendingRecord{fl.version_id, fl.method_id, fl.module_id, fl.publish_seq, it.digest, r.index});
    if (p.pending.size() >= Process::kPendingBatch) applyRecords(p);
  } else if (it.kind == Kind::kRundownEnd) {
    const RareItem& x = b.rare[it.rare];
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
    if (s->live) {  // following a live session: say so as each rundown completes
      std::fprintf(g_progress,
                   "live: process %lld: rundown %llu ended: %llu method records received, %llu versions by its "
                   "count%s, %.1f ms after its begin\n",
                   (long long)p.pid, (unsigned long long)it.rid, (unsigned long long)r.method_records,
                   (unsigned long long)r.end_versions, r.cut_short ? ", cut short" : "",
                   r.has_begin ? double(it.ts - r.begin_ts) / 1e6 : 0.0);
      std::fflush(g_progress);
    }
  }
}

// The checking thread's work: a batch's items in order, then the reader's error if the
// batch ends with one. The first error stops the reading (BatchPipe::fail).
void applyBatch(Session* s, BatchPipe<Batch>* pipe, Batch& b) {
  for (const Item& it : b.items) {
    applyItem(s, it, b);
    if (!s->error.empty()) return pipe->fail();
  }
  if (!b.error.empty()) {
    s->error = b.error;
    pipe->fail();
  }
}

// The reading side of one event: decoded into an Item of the current batch (or, on the
// second reading, the fields of the mismatches to explain).
void readEvent(Session* s, const bt_message* msg) {
  const bt_event* ev = bt_message_event_borrow_event_const(msg);
  const bt_event_class* ec = bt_event_borrow_class_const(ev);
  const Kind kind = kindOf(ec);
  if (kind == Kind::kOther) return;
  if (s->explaining) return onExplainEvent(s, ev, kind);
  const int64_t pid = processOf(s, ev);
  if (pid < 0) {
    ++s->unattributed;
    return;
  }
  Batch& b = s->pipe->current();
  auto n = [&] { return std::string(bt_event_class_get_name(ec)); };
  auto bad = [&](const char* what) { b.error = "event " + n() + ": missing or malformed " + what; };
  auto damaged = [&](const std::string& why) {
    b.error = "event " + n() + " cannot be what jitprov emitted (" + why + "): damaged input";
  };
  Item it{kind};
  it.pid = pid;
  if (bt_clock_snapshot_get_ns_from_origin(bt_message_event_borrow_default_clock_snapshot_const(msg), &it.ts) !=
      BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
    b.error = "event " + n() + " has no usable timestamp";
    return;
  }
  const bt_field* f = bt_event_borrow_payload_field_const(ev);
  it.instance = instanceOf(f);
  // An optional sequence field: absent in traces of older versions (then the exact
  // checks are not possible), never 0 when present.
  auto seqField = [&](const char* field, uint64_t* out) {
    *out = 0;
    if (member(f, field) == nullptr) {
      it.flags |= kNoSeqField;
      return true;
    }
    return u64(f, field, out) && *out != 0;
  };
  auto record = [&] {
    MethodRecordView r;
    bool plain = false;
    if (!methodFields(f, &r, &plain)) {
      bad("method fields");
      return false;
    }
    if (const std::string why = impossible(r, plain); !why.empty()) {
      damaged(why);
      return false;
    }
    it.fl = r;
    it.digest = jitprov::verify::digestOf(r);
    return true;
  };
  switch (kind) {
    case Kind::kMethodLoad:
      if (!record()) return;
      break;
    case Kind::kMethodUnload:
      if (!u64(f, "method_id", &it.fl.method_id) || !u64(f, "module_id", &it.fl.module_id) ||
          !seqField("unload_seq", &it.fl.publish_seq))
        return bad("method_id/module_id/unload_seq");
      if (it.fl.method_id == 0 || it.fl.module_id == 0) return damaged("an id of 0");
      break;
    case Kind::kCodeUnload:
      if (!u64(f, "version_id", &it.fl.version_id) || !seqField("retire_seq", &it.fl.publish_seq))
        return bad("version_id/retire_seq");
      if (it.fl.version_id == 0) return damaged("an id of 0");
      break;
    case Kind::kJitprovOther:
      break;
    default: {  // a rundown's event
      if (!u64(f, "rundown_id", &it.rid)) return bad("rundown_id");
      if (kind == Kind::kRundownBegin) {
        RareItem x;
        if (!enumLabel(f, "mode", &x.mode) || !enumLabel(f, "trigger", &x.trigger)) return bad("mode/trigger");
        if (member(f, "publish_seq") != nullptr) {
          if (!u64(f, "publish_seq", &x.begin_seq)) return bad("publish_seq");
          x.has_seq = true;
        }
        it.rare = uint32_t(b.rare.size());
        b.rare.push_back(std::move(x));
      } else if (kind == Kind::kRundownMethod) {
        if (!record()) return;
      } else if (kind == Kind::kRundownEnd) {
        RareItem x;
        if (!u64(f, "modules", &x.modules) || !u64(f, "methods", &x.methods) || !u64(f, "versions", &x.versions) ||
            !u64(f, "skipped", &x.skipped) || !u64(f, "retried", &x.retried) || !u64(f, "duration_ns", &x.duration))
          return bad("counts");
        if (member(f, "publish_seq") != nullptr) {
          if (!u64(f, "publish_seq", &x.publish_seq) || !u64(f, "end_seq", &x.end_seq) ||
              !u64(f, "caught_up", &x.caught_up))
            return bad("publish_seq/end_seq/caught_up");
          x.has_seq = true;
        }
        uint64_t cut = 0;
        if (member(f, "cut_short") != nullptr && (!u64(f, "cut_short", &cut) || cut > 1)) return bad("cut_short");
        x.cut_short = cut == 1;
        it.rare = uint32_t(b.rare.size());
        b.rare.push_back(std::move(x));
      }
    }
  }
  b.items.push_back(it);
}

bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator* it, void* data) {
  auto* s = static_cast<Session*>(data);
  if (s->pipe != nullptr && s->pipe->failed()) return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  bt_message_array_const msgs;
  uint64_t count = 0;
  switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
      break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  }
  bool read_error = false;
  for (uint64_t i = 0; i < count; ++i) {
    const bt_message* m = msgs[i];
    if (!read_error) {
      switch (bt_message_get_type(m)) {
        case BT_MESSAGE_TYPE_EVENT:
          readEvent(s, m);
          read_error = s->pipe != nullptr && !s->pipe->current().error.empty();
          break;
        case BT_MESSAGE_TYPE_STREAM_BEGINNING:
          onStreamBeginning(s, m);
          break;
        case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
          if (s->explaining) break;  // counted by the first reading
          uint64_t c = 0;
          if (bt_message_discarded_events_get_count(m, &c) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
            s->discarded_events += c;
          else
            ++s->discarded_unknown;
          break;
        }
        case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
          if (s->explaining) break;
          uint64_t c = 0;
          if (bt_message_discarded_packets_get_count(m, &c) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
            s->discarded_packets += c;
          else
            ++s->discarded_unknown;
          break;
        }
        default:
          break;
      }
    }
    bt_message_put_ref(m);
  }
  if (s->pipe == nullptr) return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;  // the second reading
  // Live: every message array handed over at once (no thread), so that each rundown is
  // reported as it ends; from files, full batches to the checking thread.
  if (read_error || s->live || s->pipe->current().items.size() >= kBatchItems) s->pipe->push();
  return read_error || s->pipe->failed() ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
                                         : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

// The root cause babeltrace2 recorded, as one line.
std::string takeError() {
  const bt_error* err = bt_current_thread_take_error();
  if (err == nullptr) return "unknown error";
  std::string msg;
  const uint64_t n = bt_error_get_cause_count(err);
  if (n > 0) msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(err, 0));  // the root cause
  bt_error_release(err);
  for (char& c : msg)
    if (c == '\n') c = ' ';
  return msg.empty() ? "unknown error" : msg;
}

// Directories at or below `dir` that hold a CTF trace (an entry named `metadata`),
// sorted. A directory that cannot be read is an error (*why: which, and why), never
// skipped: the verdict would cover only the sessions that could be read.
std::vector<std::string> findTraces(const std::string& dir, std::string* why) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::vector<fs::path> todo{fs::path(dir)};
  while (!todo.empty()) {
    const fs::path d = std::move(todo.back());
    todo.pop_back();
    std::error_code ec;
    fs::directory_iterator it(d, ec);
    bool trace = false;
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      // Symbolic links to directories are not followed (no cycles).
      const bool subdir = it->symlink_status(ec).type() == fs::file_type::directory;
      if (subdir) todo.push_back(it->path());
      // Of any other type: checkMetadata refuses what is not a regular file, by name.
      if (!subdir && it->path().filename() == "metadata") trace = true;
    }
    if (ec) {
      *why = (d == fs::path(dir) ? "" : d.string() + ": ") + ec.message();
      return {};
    }
    if (trace) out.push_back(d.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The session a trace belongs to: the directory above its `ust` (or `kernel`) component
// (lttng's output layout SESSION/ust/uid/UID/64-bit or SESSION/ust/pid/NAME-PID-DATE),
// or the trace itself.
std::string sessionRoot(const std::string& trace) {
  const std::filesystem::path p(trace);
  std::filesystem::path root, acc;
  for (const auto& part : p) {
    if (part == "ust" || part == "kernel") root = acc;
    acc /= part;
  }
  return root.empty() ? trace : root.lexically_normal().string();
}

// What a file that is not a regular one is, for the message that refuses it.
const char* fileType(mode_t m) {
  return S_ISDIR(m)    ? "a directory"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "of another type";
}

// The largest metadata file read. lttng writes tens of KiB (the event classes of one
// trace); 256 MiB would describe millions of them. Beyond it the file is damaged or
// hostile (an 8 GiB sparse file, which babeltrace2 would read whole), refused unread.
constexpr uint64_t kMaxMetadataBytes = uint64_t{256} << 20;

// Checks a trace's metadata before libbabeltrace2 reads it: a regular file (a FIFO
// would hang the open, /dev/zero never ends), at most kMaxMetadataBytes, whole packets
// (babeltrace2 2.0 spins forever on a file cut in the middle of one). Reads only the
// packets' headers.
std::string checkMetadata(const std::string& trace) {
  const std::string path = trace + "/metadata";
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "metadata: " + std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return "metadata: not a regular file (" + std::string(fileType(st.st_mode)) + ")";
  // Non-blocking: should a FIFO take its place after stat(), open() does not wait.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "metadata: " + std::string(std::strerror(errno));
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = "metadata: " + std::string(std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    why = "metadata: not a regular file (" + std::string(fileType(st.st_mode)) + ")";
  } else if (uint64_t(st.st_size) > kMaxMetadataBytes) {
    why = "metadata: " + std::to_string(st.st_size) + " bytes, more than the " +
          std::to_string(kMaxMetadataBytes >> 20) +
          " MiB a trace's metadata can sensibly be (lttng writes tens "
          "of KiB): damaged input, not read";
  } else {
    std::string io;  // why a read failed
    why = jitprov::verify::checkMetadataPackets(uint64_t(st.st_size), [&](uint64_t off, char* buf, size_t n) {
      const ssize_t got = pread(fd, buf, n, off_t(off));
      if (got == ssize_t(n)) return true;
      io = got < 0 ? std::strerror(errno) : "shorter than its size (changed while read?)";
      return false;
    });
    if (!io.empty()) why += ": " + io;
  }
  close(fd);
  return why;
}

// Checks the files babeltrace2 opens in a trace (besides its metadata): its stream files
// and their indexes must be regular files; it opens a FIFO without O_NONBLOCK and waits
// for a writer forever. Hidden files it ignores, so does this.
std::string checkStreamFiles(const std::string& trace) {
  for (const std::string& dir : {trace, trace + "/index"}) {
    std::error_code ec;
    if (dir != trace && !std::filesystem::is_directory(dir, ec)) continue;  // no index (or the loop says)
    std::filesystem::directory_iterator it(dir, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.' || (dir == trace && name == "metadata")) continue;
      const std::string shown = dir == trace ? name : "index/" + name;
      struct stat st;
      if (stat(it->path().c_str(), &st) != 0) return shown + ": " + std::strerror(errno);
      if (S_ISDIR(st.st_mode)) continue;
      if (!S_ISREG(st.st_mode)) return shown + ": not a regular file (" + fileType(st.st_mode) + ")";
    }
    if (ec) return (dir == trace ? "" : "index: ") + ec.message();
  }
  return "";
}

// Reads the session's traces into `s`. Returns "" or why they could not be read.
std::string readSession(Session* s) {
  const bt_plugin* ctf = nullptr;
  const bt_plugin* utils = nullptr;
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) != BT_PLUGIN_FIND_STATUS_OK)
    return "babeltrace2's ctf plugin is not installed";
  if (bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) != BT_PLUGIN_FIND_STATUS_OK) {
    bt_plugin_put_ref(ctf);
    return "babeltrace2's utils plugin is not installed";
  }
  const bt_component_class_source* fs =
      bt_plugin_borrow_source_component_class_by_name_const(ctf, s->live ? "lttng-live" : "fs");
  const bt_component_class_filter* muxer = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
  std::string why;
  resetGraphCaches(s);  // the previous graph's classes and streams are gone
  // The first reading checks on a thread of its own (from files) or at once (live).
  std::optional<BatchPipe<Batch>> pipe;
  if (!s->explaining) {
    pipe.emplace(!s->live, 4, [s, &pipe](Batch& b) { applyBatch(s, &*pipe, b); });
    s->pipe = &*pipe;
  }
  bt_graph* graph = bt_graph_create(0);
  bt_value* params = bt_value_map_create();
  bt_value* inputs = nullptr;
  const bt_component_source* src = nullptr;
  const bt_component_filter* mux = nullptr;
  const bt_component_sink* sink = nullptr;
  if (graph == nullptr || params == nullptr || fs == nullptr || muxer == nullptr) {
    why = "cannot set up babeltrace2";
  } else if (bt_graph_add_filter_component(graph, muxer, "mux", nullptr, BT_LOGGING_LEVEL_NONE, &mux) !=
             BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    why = takeError();
  } else {
    // One ctf.fs source per trace of the session, all feeding one muxer (time order);
    // their files were checked before (checkMetadata, checkStreamFiles).
    const std::vector<std::string>& traces = s->traces;
    for (size_t t = 0; t < traces.size() && why.empty(); ++t) {
      bt_value_put_ref(params);
      params = bt_value_map_create();
      inputs = nullptr;
      if (params == nullptr ||
          bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
          bt_value_array_append_string_element(inputs, traces[t].c_str()) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
          // Live: end with the session (the default, "continue", never ends).
          (s->live && bt_value_map_insert_string_entry(params, "session-not-found-action", "end") !=
                          BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)) {
        why = "cannot set up babeltrace2";
        break;
      }
      if (bt_graph_add_source_component(graph, fs, ("src" + std::to_string(t)).c_str(), params, BT_LOGGING_LEVEL_NONE,
                                        &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        why = traces[t] + ": " + takeError();
        break;
      }
      const uint64_t outs = bt_component_source_get_output_port_count(src);
      for (uint64_t i = 0; i < outs && why.empty(); ++i) {
        // The muxer adds an input port each time one is connected: use the last.
        const uint64_t ins = bt_component_filter_get_input_port_count(mux);
        if (bt_graph_connect_ports(graph, bt_component_source_borrow_output_port_by_index_const(src, i),
                                   bt_component_filter_borrow_input_port_by_index_const(mux, ins - 1),
                                   nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
          why = takeError();
      }
    }
    if (why.empty() && bt_graph_add_simple_sink_component(graph, "verify", nullptr, consume, nullptr, s, &sink) !=
                           BT_GRAPH_ADD_COMPONENT_STATUS_OK)
      why = takeError();
    if (why.empty() && bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                                              bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                                              nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
      why = takeError();
    while (why.empty()) {
      const bt_graph_run_status rs = bt_graph_run(graph);
      if (rs != BT_GRAPH_RUN_STATUS_AGAIN && pipe) pipe->drain();  // s->error is the reader's now
      if (rs == BT_GRAPH_RUN_STATUS_OK) break;  // every sink consumed everything (live: the session ended)
      if (rs == BT_GRAPH_RUN_STATUS_AGAIN) {
        if (s->live) {
          if (std::chrono::steady_clock::now() >= s->deadline) {
            s->timed_out = true;
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(20));  // nothing new from the relay yet
        }
        continue;
      }
      if (s->live && s->error.empty()) {
        // The relay daemon went away (or refused us) after the session began: what was
        // received is still checked, and the loss is reported.
        s->connection_lost = takeError();
        break;
      }
      why = s->error.empty() ? takeError() : s->error;
    }
  }
  if (pipe) pipe->drain();  // everything read is checked (a timed-out live session, a set-up error)
  s->pipe = nullptr;
  // The checking thread's error in the last batches: handed over after the graph ended.
  if (why.empty() && !s->error.empty()) why = s->error;
  bt_value_put_ref(params);
  bt_graph_put_ref(graph);
  bt_plugin_put_ref(ctf);
  bt_plugin_put_ref(utils);
  return why;
}

// G2 compared digests: which fields differ is read from the trace again, for the
// mismatches shown (rare; a live session cannot be read twice: there the report says
// "fields (their digest)"). Sets s->explaining when it read again.
std::string explainMismatches(Session* s) {
  if (s->live) return "";
  bool any = false;
  for (auto& [pid, p] : s->processes)
    for (auto& [rid, r] : p.rundowns)
      for (const uint64_t vid : r.mismatched) {
        p.explain_load.try_emplace(vid);
        p.explain_record.try_emplace({rid, vid});
        any = true;
      }
  if (!any) return "";
  s->explaining = true;
  return readSession(s);
}

// The checks of one process, appended to `report`; violations and what could not be
// checked are returned through the two lists.
struct Outcome {
  uint64_t violations = 0;
  std::vector<std::string> not_checked;
};

// G2, G3+ and G4 of every rundown of a process, from what was kept while streaming.
// `explained`: the fields of G2 mismatches were read again (Process::explain_*).
nlohmann::json checkProcess(Process& p, bool explained, Outcome* out) {
  const uint64_t show = g_show;
  // Records whose method_load never came: nothing to compare them with.
  p.g2.forEachUndecided([&p](uint64_t index, uint64_t) { ++p.by_index[index]->g2_no_load; });
  // The 64th and later rundowns: G4 from their sorted records.
  for (Rundown* r : p.by_index) {
    if (r->index < VersionEntry::kRundownBits) continue;
    std::sort(r->late.begin(), r->late.end());
    for (size_t i = 1; i < r->late.size(); ++i)
      if (r->late[i] == r->late[i - 1] && r->duplicates++ < show) r->duplicated.push_back(r->late[i]);
  }
  auto inRundown = [](const VersionEntry& v, const Rundown& r) {
    return r.index < VersionEntry::kRundownBits ? (v.in_rundowns >> r.index & 1) != 0
                                                : std::binary_search(r.late.begin(), r.late.end(), v.version_id);
  };
  // The number of a version's removal the trace shows, or UINT64_MAX: its own retirement,
  // its method's unload, or its module's (one number for all of a module's methods).
  auto removal = [&](const VersionEntry& v) {
    uint64_t r = UINT64_MAX;
    const uint64_t vid = v.version_id, method_id = v.method_id, module_id = v.module_id;
    if (v.in_rundowns & VersionEntry::kRetired)
      if (const uint64_t* s = p.code_unload.find(vid); s != nullptr && *s != 0) r = *s;
    if (const uint64_t* s = p.method_unload.find(method_id); s != nullptr) r = std::min(r, *s);
    if (const uint64_t* s = p.module_unload.find(module_id); s != nullptr) r = std::min(r, *s);
    return r;
  };
  auto exactOf = [&](const Rundown& r) {
    return p.seq_fields && r.has_begin && r.has_end && r.has_begin_seq && r.has_end_seq;
  };
  auto vs = [](uint64_t vid) { return "version_id " + std::to_string(vid); };
  // One pass over the versions for every rundown: G2's "not removed before the walk
  // reached it", and G3+.
  p.versions.forEach([&](const VersionEntry& v) {
    if (v.publish_seq == 0) return;  // a trace without the sequence fields: nothing exact
    const uint64_t rm = removal(v);
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
      if (!exactOf(r)) continue;
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
        r.g3_messages.push_back("G3: " + vs(v.version_id) + " (method " + std::to_string(v.method_id) +
                                ", publish_seq " + std::to_string(v.publish_seq) +
                                ") was published before the rundown's end (publish_seq " +
                                std::to_string(r.publish_seq) + "), not removed, but is missing");
    }
  });

  nlohmann::json pj = {{"vpid", p.pid},
                       {"runtime_instance", p.instance},
                       {"events", p.events},
                       {"method_load", p.method_loads},
                       {"method_unload", p.method_unloads},
                       {"code_unload", p.code_unloads}};
  const std::string who =
      "process " + std::to_string(p.pid) + (p.instance != 0 ? " runtime " + std::to_string(p.instance) : "");
  if (p.rundowns.empty()) out->not_checked.push_back(who + ": no rundown in the trace");
  if (!p.seq_fields)
    out->not_checked.push_back(who +
                               ": events without the publication sequence fields (a trace of an older "
                               "jitprov): G3+ and removals are not checked");
  nlohmann::json rjs = nlohmann::json::array();
  for (auto& [rid, r] : p.rundowns) {
    nlohmann::json j = {{"rundown_id", rid},
                        {"mode", r.mode},
                        {"trigger", r.trigger},
                        {"begin_ns", r.begin_ts},
                        {"end_ns", r.end_ts},
                        {"method_records", r.method_records},
                        {"module_records", r.module_records}};
    std::vector<std::string> rv;
    auto violate = [&](const std::string& check, const std::string& what) {
      ++out->violations;
      rv.push_back(check + ": " + what);
    };
    const bool exact = exactOf(r);
    j["cut_short"] = r.cut_short;
    if (!r.has_begin) violate("begin", "no rundown_begin");
    // No end: a violation while the process's events go on after the rundown's last one;
    // when the trace itself ends first (the session stopped, the process died), the
    // rundown was not finished in it, which is no guarantee broken: not checked.
    const bool trace_ended_first = !r.has_end && p.last_ts <= r.last_ts;
    if (!r.has_end && !trace_ended_first)
      violate("end", "no rundown_end, although the process's events go on after the rundown's last one");
    if (trace_ended_first)
      out->not_checked.push_back(who + ", rundown " + std::to_string(rid) +
                                 ": the trace ends before its rundown_end (the session stopped or the process "
                                 "ended): not complete in this trace");
    if (r.has_end) {
      j["rundown_end"] = {{"modules", r.end_modules}, {"methods", r.end_methods}, {"versions", r.end_versions},
                          {"skipped", r.end_skipped}, {"retried", r.end_retried}, {"duration_ns", r.end_duration}};
      // Cut short because its session stopped and started again meanwhile, a rundown lost
      // the records emitted while the session was stopped: then only "not more".
      if (r.cut_short ? r.method_records > r.end_versions : r.end_versions != r.method_records)
        violate("counts", "rundown_end.versions = " + std::to_string(r.end_versions) + " but " +
                              std::to_string(r.method_records) + " method records");
      if (r.end_modules != r.module_records)
        violate("counts", "rundown_end.modules = " + std::to_string(r.end_modules) + " but " +
                              std::to_string(r.module_records) + " module records");
      if (exact) {
        j["rundown_end"]["publish_seq"] = r.publish_seq;
        j["rundown_end"]["end_seq"] = r.end_seq;
        j["rundown_end"]["caught_up"] = r.caught_up;
        j["begin_seq"] = r.begin_seq;
        if (!(r.begin_seq <= r.publish_seq && r.publish_seq <= r.end_seq))
          violate("counts", "sequence values out of order: begin " + std::to_string(r.begin_seq) + ", publish_seq " +
                                std::to_string(r.publish_seq) + ", end_seq " + std::to_string(r.end_seq));
        if (r.cut_short ? r.after_begin > r.caught_up : r.caught_up != r.after_begin)
          violate("counts", "rundown_end.caught_up = " + std::to_string(r.caught_up) + " but " +
                                std::to_string(r.after_begin) + " records published after rundown_begin");
      }
    }
    // Counted in full, shown up to --show each.
    out->violations += r.duplicates + r.g2_mismatch + r.g2_removed + r.beyond_p + r.missing;
    for (const uint64_t vid : r.duplicated) rv.push_back("G4: " + vs(vid) + " appears twice");
    j["G4"] = {{"status", r.duplicates ? "violated" : "pass"}, {"duplicates", r.duplicates}};
    for (const uint64_t vid : r.mismatched) {
      auto load = p.explain_load.find(vid);
      auto rec = p.explain_record.find({rid, vid});
      const bool named = explained && load != p.explain_load.end() && load->second.version_id != 0 &&
                         rec != p.explain_record.end() && rec->second.version_id != 0;
      const std::string d = named ? jitprov::verify::differingFields(rec->second, load->second) : "";
      rv.push_back("G2: " + vs(vid) + ": " + (!d.empty() ? d : std::string("fields (their digest)")) +
                   " differ from its method_load");
    }
    rv.insert(rv.end(), r.g2_messages.begin(), r.g2_messages.end());
    const uint64_t bad2 = r.g2_mismatch + r.g2_removed;
    // No record at all: nothing can be inconsistent.
    const char* status2 = bad2 ? "violated" : r.g2_checked || r.method_records == 0 ? "pass" : "not checked";
    j["G2"] = {{"status", status2},
               {"records_checked", r.g2_checked},
               {"records_without_method_load", r.g2_no_load},
               {"mismatches", bad2}};
    rv.insert(rv.end(), r.g3_messages.begin(), r.g3_messages.end());
    // Nothing to check, but the trace shows every publication and removal since the
    // process began: then there was nothing else to find.
    const bool whole_history = exact && !r.cut_short && p.seen_seqs.covered(1, r.end_seq);
    const char* status3 = r.missing || r.beyond_p       ? "violated"
                          : r.cut_short                 ? "cut short"
                          : r.checked3 || whole_history ? "pass"
                                                        : "not checked";
    j["G3"] = {
        {"status", status3}, {"versions_checked", r.checked3}, {"missing", r.missing}, {"undecidable", r.undecidable}};
    const std::string rname = who + ", rundown " + std::to_string(rid);
    if (std::string(status2) == "not checked")
      out->not_checked.push_back(rname +
                                 ": G2: no record had its method_load in the trace (enable "
                                 "jitprov_runtime:* before the code is published)");
    if (r.cut_short)
      out->not_checked.push_back(rname +
                                 ": G3+: cut short by the application's shutdown (rundown_end.cut_short): "
                                 "it is not complete");
    else if (std::string(status3) == "not checked")
      out->not_checked.push_back(rname + (exact ? ": G3+: the trace shows no version published before its end "
                                                  "other than its own records (nothing to check them against)"
                                                : ": G3+: the rundown lacks its begin, end or sequence fields"));
    j["violations"] = rv;
    rjs.push_back(j);
  }
  pj["rundowns"] = rjs;
  return pj;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  bool json = false;
  int show = 5;
  CLI::App cli{
      "jitprov-verify: check the jitprov rundowns of CTF traces, per lttng session and per process (G2 "
      "consistent, G3+ complete by the publication sequence, G4 once, rundown_end counts, lost events)"};
  cli.footer(
      "Exit status: 0 every check ran and holds, 1 a guarantee is violated, 2 usage or unreadable input "
      "(or processes that cannot be told apart), 3 events lost, 4 nothing violated but something was not "
      "checked (the report says what).");
  double timeout = 0;
  cli.add_option("TRACE", dir,
                 "trace directory (an lttng session's output, or any directory above sessions), or a live "
                 "session on a relay daemon: net://RELAY[:PORT]/host/HOSTNAME/SESSION (followed from its start, "
                 "each rundown reported as it ends, until the session is destroyed)")
      ->required();
  cli.add_flag("--json", json, "the report as one JSON object");
  cli.add_option("--timeout", timeout,
                 "live: stop following after this many seconds and check what was received (0: until the "
                 "session is destroyed)")
      ->check(jitprov::tools::finiteIn(1e9));
  cli.add_option("--show", show, "violations shown per check")->check(jitprov::tools::wholeIn(0, 1000000));
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-verify", argc, argv)) return *rc;
  g_show = uint64_t(show);
  const bool live = dir.rfind("net://", 0) == 0;
  if (json) g_progress = stderr;
  if (!live && timeout != 0) {
    std::fprintf(stderr, "jitprov-verify: --timeout is for live sessions (net://...)\n");
    return kExitUnreadable;
  }
  std::map<std::string, Session> sessions;
  struct stat sb;
  if (live) {
    // babeltrace2 checks the URL's form; a session name is required to follow one.
    if (dir.find("/host/") == std::string::npos || dir.back() == '/') {
      std::fprintf(stderr,
                   "jitprov-verify: %s: a live URL names one session: net://RELAY[:PORT]/host/HOSTNAME/SESSION\n",
                   dir.c_str());
      return kExitUnreadable;
    }
    Session& s = sessions[dir];
    s.root = dir;
    s.live = true;
    s.traces.push_back(dir);
    if (timeout > 0)
      s.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(timeout));
  } else if (stat(dir.c_str(), &sb) != 0) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", dir.c_str(), std::strerror(errno));
    return kExitUnreadable;
  }
  if (!live && !S_ISDIR(sb.st_mode)) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: not a directory\n", dir.c_str());
    return kExitUnreadable;
  }
  std::string unreadable;
  const std::vector<std::string> traces = live ? std::vector<std::string>{} : findTraces(dir, &unreadable);
  if (!unreadable.empty()) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", dir.c_str(), unreadable.c_str());
    return kExitUnreadable;
  }
  if (!live && traces.empty()) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: no CTF trace in it (no `metadata` file below it)\n",
                 dir.c_str());
    return kExitUnreadable;
  }
  // Every trace's files before any is read: a hostile one is refused at once.
  for (const std::string& t : traces) {
    std::string bad = checkMetadata(t);
    if (bad.empty()) bad = checkStreamFiles(t);
    if (!bad.empty()) {
      std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", t.c_str(), bad.c_str());
      return kExitUnreadable;
    }
  }
  for (const std::string& t : traces) {
    Session& s = sessions[sessionRoot(t)];
    s.root = sessionRoot(t);
    s.traces.push_back(t);
  }
  uint64_t jitprov_events = 0;
  for (auto& [root, s] : sessions) {
    if (const std::string why = readSession(&s); !why.empty()) {
      std::fprintf(stderr, "jitprov-verify: read trace %s: %s\n", root.c_str(), why.c_str());
      return kExitUnreadable;
    }
    if (s.unattributed > 0) {
      std::fprintf(stderr,
                   "jitprov-verify: read trace %s: %llu jitprov events carry no process id: cannot tell processes "
                   "apart (record the vpid context: lttng add-context -u -t vpid)\n",
                   root.c_str(), (unsigned long long)s.unattributed);
      return kExitUnreadable;
    }
    for (const auto& [pid, p] : s.processes) jitprov_events += p.events;
    if (s.live && s.processes.empty() && !s.timed_out) {
      std::fprintf(stderr, "jitprov-verify: live session %s: %s\n", root.c_str(),
                   !s.connection_lost.empty() ? s.connection_lost.c_str()
                                              : "the relay daemon has no such session (follow it once `lttng "
                                                "create --live` has run), or it ended without jitprov events");
      return kExitUnreadable;
    }
  }
  if (jitprov_events == 0) {
    std::fprintf(stderr, "jitprov-verify: read trace %s: no jitprov events in it\n", dir.c_str());
    return kExitUnreadable;
  }
  for (auto& [root, s] : sessions) {
    for (auto& [pid, p] : s.processes) applyRecords(p);
    if (const std::string why = explainMismatches(&s); !why.empty()) {
      std::fprintf(stderr, "jitprov-verify: read trace %s again: %s\n", root.c_str(), why.c_str());
      return kExitUnreadable;
    }
  }

  Outcome out;
  bool lost = false;
  nlohmann::json sjs = nlohmann::json::array();
  for (auto& [root, s] : sessions) {
    nlohmann::json sj = {{"session", root},
                         {"name", s.name},
                         {"traces", s.traces},
                         {"discarded_events", s.discarded_events},
                         {"discarded_packets", s.discarded_packets},
                         {"discard_messages_without_count", s.discarded_unknown}};
    lost = lost || s.discarded_events > 0 || s.discarded_packets > 0 || s.discarded_unknown > 0 ||
           !s.connection_lost.empty();
    if (!s.connection_lost.empty()) sj["live_connection_lost"] = s.connection_lost;
    if (s.timed_out)
      out.not_checked.push_back("live session " + root + ": still recording after --timeout " +
                                std::to_string(timeout) + " s (what was received is checked)");
    nlohmann::json pjs = nlohmann::json::array();
    const size_t before = out.not_checked.size();
    for (auto& [pid, p] : s.processes) pjs.push_back(checkProcess(p, s.explaining, &out));
    for (size_t i = before; i < out.not_checked.size(); ++i)
      out.not_checked[i] = "session " + (s.name.empty() ? root : s.name) + ", " + out.not_checked[i];
    sj["processes"] = pjs;
    sjs.push_back(sj);
  }
  const int rc = lost                       ? kExitLost
                 : out.violations           ? kExitViolated
                 : !out.not_checked.empty() ? kExitNotChecked
                                            : kExitHold;
  const char* verdict = rc == kExitHold       ? "every guarantee holds, everything checked"
                        : rc == kExitViolated ? "a guarantee is violated"
                        : rc == kExitLost     ? "events lost"
                                              : "no violation, but not everything could be checked";
  nlohmann::json report = {
      {"trace", dir},       {"sessions", sjs}, {"not_checked", out.not_checked}, {"violations", out.violations},
      {"verdict", verdict}, {"exit", rc}};
  if (json) {
    std::printf("%s\n", report.dump(1).c_str());
    return rc;
  }
  std::printf("jitprov-verify: %s: %zu session%s\n", dir.c_str(), sjs.size(), sjs.size() == 1 ? "" : "s");
  for (const auto& sj : sjs) {
    std::printf("session %s%s: %zu process%s, %llu events discarded%s\n", sj["session"].get<std::string>().c_str(),
                sj["name"].get<std::string>().empty() ? "" : (" (" + sj["name"].get<std::string>() + ")").c_str(),
                sj["processes"].size(), sj["processes"].size() == 1 ? "" : "es",
                (unsigned long long)sj["discarded_events"].get<uint64_t>(),
                sj["discarded_packets"].get<uint64_t>()
                    ? (", " + std::to_string(sj["discarded_packets"].get<uint64_t>()) + " packets discarded").c_str()
                    : "");
    for (const auto& pj : sj["processes"]) {
      const uint32_t inst = pj["runtime_instance"].get<uint32_t>();
      std::printf(" process %lld%s: %zu rundowns, %llu method_load, %llu method_unload, %llu code_unload\n",
                  (long long)pj["vpid"].get<int64_t>(), inst != 0 ? (" runtime " + std::to_string(inst)).c_str() : "",
                  pj["rundowns"].size(), (unsigned long long)pj["method_load"].get<uint64_t>(),
                  (unsigned long long)pj["method_unload"].get<uint64_t>(),
                  (unsigned long long)pj["code_unload"].get<uint64_t>());
      for (const auto& j : pj["rundowns"]) {
        std::string caught;
        if (j.contains("rundown_end") && j["rundown_end"].contains("caught_up"))
          caught = ", " + std::to_string(j["rundown_end"]["caught_up"].get<uint64_t>()) + " caught up";
        std::printf("  rundown %llu (%s, %s): %llu method records%s, %llu module records\n",
                    (unsigned long long)j["rundown_id"].get<uint64_t>(), j["mode"].get<std::string>().c_str(),
                    j["trigger"].get<std::string>().c_str(), (unsigned long long)j["method_records"].get<uint64_t>(),
                    caught.c_str(), (unsigned long long)j["module_records"].get<uint64_t>());
        std::printf("    G2 consistent: %-11s (%llu records checked against method_load, %llu without one)\n",
                    j["G2"]["status"].get<std::string>().c_str(),
                    (unsigned long long)j["G2"]["records_checked"].get<uint64_t>(),
                    (unsigned long long)j["G2"]["records_without_method_load"].get<uint64_t>());
        std::printf("    G3+ complete:  %-11s (%llu versions published up to its end checked, %llu undecidable)\n",
                    j["G3"]["status"].get<std::string>().c_str(),
                    (unsigned long long)j["G3"]["versions_checked"].get<uint64_t>(),
                    (unsigned long long)j["G3"]["undecidable"].get<uint64_t>());
        std::printf("    G4 once:       %-11s\n", j["G4"]["status"].get<std::string>().c_str());
        for (const auto& v : j["violations"]) std::printf("    VIOLATION %s\n", v.get<std::string>().c_str());
      }
    }
  }
  for (const std::string& n : out.not_checked) std::printf("not checked: %s\n", n.c_str());
  if (lost) {
    uint64_t ev = 0, pk = 0;
    for (const auto& [root, s] : sessions) {
      ev += s.discarded_events, pk += s.discarded_packets;
      if (!s.connection_lost.empty())
        std::printf("EVENTS LOST: the live connection to the relay daemon ended before the session did: %s\n",
                    s.connection_lost.c_str());
    }
    std::printf(
        "EVENTS LOST: %llu events and %llu packets discarded by the tracer: the checks above cannot be "
        "trusted\n",
        (unsigned long long)ev, (unsigned long long)pk);
  }
  std::printf("verdict: %s (exit %d)\n", verdict, rc);
  return rc;
}
