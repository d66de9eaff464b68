/* SPDX-License-Identifier: MIT */
// jitprov-verify's decoding: a babeltrace2 event into the plain structs the checker
// consumes (events.h). What makes it fast are lookups done once per class and then
// cached: a structure's members by name, a method record's layout, an event class's
// kind, a stream's process. Classes and streams die with their graph (and another may be
// allocated at the same address): the Reader that owns the Decoder (reader.h) resets it
// with each graph it makes.
#pragma once

#include <babeltrace2/babeltrace.h>
#include "events.h"
#include "lives.h"
#include "verify_g2.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitprov::verify {

class Decoder {
 public:
  // Forgets every class and stream cached (a new graph).
  void reset();

  // What an event of class `ec` is.
  Kind kindOf(const bt_event_class* ec);
  // The process an event belongs to: its `vpid` context, else the vpid of its trace
  // (per-process buffers), -1 when neither says; with its `pid_ns` context (0: none).
  // A trace whose channels of jitprov events have the vpid context but the pid_ns
  // context only some of them is read without it (every pid_ns 0: one process's events
  // in two channels would read as two processes), and *pidns_partial is set.
  ProcessId processOf(const bt_event* ev, bool* pidns_partial);
  // A module_load's module_id or a rundown_begin's rundown_id, with its runtime
  // instance (lives.h); false: another event, or unreadable (the checker's to refuse).
  bool startId(const bt_event* ev, Kind kind, uint32_t* instance, uint64_t* id);
  // Event message `msg`, of kind `kind` (not kOther) and process `pid`, as an Item at the
  // end of `b`; or, when it cannot be read, b.error says why.
  void decode(const bt_message* msg, Kind kind, int64_t pid, Batch& b);
  // The fields of a method record (a method_load, or a rundown's method: then also its
  // rundown_id), with its runtime instance: false when they cannot be read.
  bool methodRecord(const bt_event* ev, Kind kind, MethodRecordView* r, uint64_t* rundown_id, uint32_t* instance);
  // A module_load's or a rundown `module`'s id and path (a view valid until the next
  // message), with its runtime instance; false when the event is neither or unreadable.
  bool moduleRecord(const bt_event* ev, Kind kind, uint64_t* module_id, std::string_view* path, uint32_t* instance);

 private:
  // Why an event cannot be used ("" when it can): a field missing or malformed
  // (`malformed`), or values jitprov cannot have emitted (damaged input).
  struct Refusal {
    std::string what;
    bool malformed = true;
  };
  const bt_field* member(const bt_field* s, const char* name);
  bool u64(const bt_field* s, const char* name, uint64_t* out);
  const bt_field* enumField(const bt_field* s, const char* name, const char** label);
  bool enumLabel(const bt_field* s, const char* name, std::string* out);
  uint32_t instanceOf(const bt_field* payload);
  bool seqField(const bt_field* f, const char* field, uint64_t* out, Item* it);
  int64_t streamPid(const bt_stream* stream);  // its trace's vpid (environment), -1: none
  // Whether the pid_ns context of `sc`'s events is read: false when the trace's stream
  // classes of jitprov events with a vpid context have it only some of them.
  bool pidnsUsable(const bt_stream_class* sc);
  // Where a method record's members are, per payload class: found by name once, then
  // read by index with their types known (the records are nearly every event).
  static constexpr int kMethodMembers = 15;
  struct MethodLayout {
    const bt_field_class* fc = nullptr;
    bool usable = false;  // every required member there, of a usable type
    int64_t index[kMethodMembers];
    bool is_signed[kMethodMembers];
    uint64_t tiers_labelled = 0;  // bit v: tier value v maps to exactly one label (checked once)
  };
  MethodLayout& layoutOf(const bt_field_class* fc);
  bool methodFields(const bt_field* p, MethodRecordView* f, bool* names_plain);
  Refusal decodeRecord(const bt_field* f, Item* it);
  Refusal decodeRuntime(const bt_field* f, Item* it);
  Refusal decodeRundown(const bt_field* f, Item* it, Batch& b);
  Refusal decodeBegin(const bt_field* f, RareItem* x);
  Refusal decodeEnd(const bt_field* f, RareItem* x);

  // A structure's member by name. Looked up by name once per (structure class, name) and
  // then by index: babeltrace2's by-name lookup (a string hash and compare) cost more
  // than decoding the event. Direct-mapped; `name` is one of decode.cc's literals, so its
  // address identifies it (two copies of a literal only take two entries).
  struct MemberCacheEntry {
    const bt_field_class* fc = nullptr;
    const char* name = nullptr;
    int64_t index = -1;  // -1: no such member
  };
  MemberCacheEntry member_cache_[1024];
  std::vector<MethodLayout> layouts_;
  // Event classes' kinds (a name compare per event cost more than a flat lookup), and
  // the last classes seen, direct-mapped in front of it (a hash lookup per event).
  std::unordered_map<const bt_event_class*, Kind> kinds_;
  struct KindCacheEntry {
    const bt_event_class* ec = nullptr;
    Kind kind = Kind::kOther;
  };
  KindCacheEntry kind_cache_[64];
  // The process of each stream whose trace names one (per-process buffers).
  std::unordered_map<const bt_stream*, int64_t> stream_pid_;
  // pidnsUsable(), per trace class, and the last stream class asked.
  std::unordered_map<const bt_trace_class*, bool> pidns_usable_;
  const bt_stream_class* pidns_sc_ = nullptr;
  bool pidns_sc_usable_ = true;
};

}  // namespace jitprov::verify
