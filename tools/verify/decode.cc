// SPDX-License-Identifier: MIT
// jitprov-verify's decoding of babeltrace2 events (decode.h).
#include "decode.h"

#include <babeltrace2/babeltrace.h>
#include "verify_checks.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace jitprov::verify {

namespace {

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

// A method record's members, in Decoder::MethodLayout's arrays.
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
  kHostVersion,
  kMemberCount  // Decoder::kMethodMembers
};
constexpr const char* kMethodMemberNames[kMemberCount] = {
    "method_id", "version_id", "code_start",   "tier",         "namespace", "name",        "signature",   "module_id",
    "rejit_id",  "code_size",  "method_token", "method_flags", "host_tier", "publish_seq", "host_version"};

// Why a method record cannot be what jitprov emitted ("" when it can be). Names known
// to be plain ASCII are only measured.
std::string impossible(const MethodRecordView& f, bool names_plain) {
  if (names_plain && f.name_space.size() <= JITPROV_MAX_TRACE_STRING && f.name.size() <= JITPROV_MAX_TRACE_STRING &&
      f.signature.size() <= JITPROV_MAX_TRACE_STRING && f.method_id != 0 && f.version_id != 0 && f.module_id != 0 &&
      f.code_start != 0 && f.code_size != 0 && f.code_start <= UINT64_MAX - f.code_size)
    return "";
  return impossibleRecord(
      {f.method_id, f.version_id, f.module_id, f.code_start, f.code_size, f.name_space, f.name, f.signature});
}

}  // namespace

void Decoder::reset() {
  for (MemberCacheEntry& e : member_cache_) e = MemberCacheEntry{};
  kinds_.clear();
  for (KindCacheEntry& e : kind_cache_) e = KindCacheEntry{};
  layouts_.clear();
  stream_pid_.clear();
  pidns_usable_.clear();
  pidns_sc_ = nullptr;
}

// --- field access -------------------------------------------------------------------

const bt_field* Decoder::member(const bt_field* s, const char* name) {
  if (s == nullptr) return nullptr;
  const bt_field_class* fc = bt_field_borrow_class_const(s);
  const uintptr_t h = (reinterpret_cast<uintptr_t>(fc) >> 4) * 31 ^ (reinterpret_cast<uintptr_t>(name) >> 0);
  MemberCacheEntry& e = member_cache_[(h ^ (h >> 10)) & 1023];
  if (e.fc != fc || e.name != name) {
    e = MemberCacheEntry{fc, name, -1};
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

bool Decoder::u64(const bt_field* s, const char* name, uint64_t* out) {
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

// An enumeration field the trace's metadata maps to exactly one label, or nullptr.
const bt_field* Decoder::enumField(const bt_field* s, const char* name, const char** label) {
  const bt_field* f = member(s, name);
  if (f == nullptr || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION) return nullptr;
  if (!oneLabel(f, label)) return nullptr;
  return f;
}

bool Decoder::enumLabel(const bt_field* s, const char* name, std::string* out) {
  const char* label = nullptr;
  if (enumField(s, name, &label) == nullptr) return false;
  *out = label;
  return true;
}

// The runtime instance an event is of: its runtime_instance field (every event of
// provider ABI 4 on), 0 in traces from before it. Ids are per runtime instance.
uint32_t Decoder::instanceOf(const bt_field* payload) {
  uint64_t v = 0;
  return u64(payload, "runtime_instance", &v) && v <= UINT32_MAX ? uint32_t(v) : 0;
}

// An optional sequence field: absent in traces of older versions (then the exact
// checks are not possible: it->flags says so), never 0 when present.
bool Decoder::seqField(const bt_field* f, const char* field, uint64_t* out, Item* it) {
  *out = 0;
  if (member(f, field) == nullptr) {
    it->flags |= kNoSeqField;
    return true;
  }
  return u64(f, field, out) && *out != 0;
}

// --- method records -----------------------------------------------------------------

Decoder::MethodLayout& Decoder::layoutOf(const bt_field_class* fc) {
  static_assert(kMemberCount == kMethodMembers);
  for (MethodLayout& l : layouts_)
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
    if (l.index[k] < 0 && k != kHostTier && k != kPublishSeq && k != kHostVersion) l.usable = false;  // newer
  }
  layouts_.push_back(l);
  return layouts_.back();
}

// A method record's fields, of either event class (method_load, a rundown's method):
// one extraction for both, so that G2 compares like with like. Its names are views valid
// until the next message; *names_plain says whether all three are ASCII without NUL
// (then valid UTF-8).
bool Decoder::methodFields(const bt_field* p, MethodRecordView* f, bool* names_plain) {
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
  if (l->index[kHostVersion] >= 0) {
    const uint64_t v = num(kHostVersion);
    if (v > UINT32_MAX) return false;
    f->host_version = int64_t(v);
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
  *names_plain = plainAscii(f->name_space) && plainAscii(f->name) && plainAscii(f->signature);
  return true;
}

bool Decoder::methodRecord(const bt_event* ev, Kind kind, MethodRecordView* r, uint64_t* rundown_id,
                           uint32_t* instance) {
  const bt_field* f = bt_event_borrow_payload_field_const(ev);
  *instance = instanceOf(f);
  bool plain = false;
  return methodFields(f, r, &plain) && (kind != Kind::kRundownMethod || u64(f, "rundown_id", rundown_id));
}

bool Decoder::moduleRecord(const bt_event* ev, Kind kind, uint64_t* module_id, std::string_view* path,
                           uint32_t* instance) {
  if (kind != Kind::kRundownModule && kind != Kind::kModuleLoad) return false;
  const bt_field* f = bt_event_borrow_payload_field_const(ev);
  *instance = instanceOf(f);
  const bt_field* p = member(f, "path");
  if (!u64(f, "module_id", module_id) || p == nullptr || bt_field_get_class_type(p) != BT_FIELD_CLASS_TYPE_STRING)
    return false;
  *path = std::string_view(bt_field_string_get_value(p), bt_field_string_get_length(p));
  return true;
}

// --- events -------------------------------------------------------------------------

Kind Decoder::kindOf(const bt_event_class* ec) {
  KindCacheEntry& c = kind_cache_[(reinterpret_cast<uintptr_t>(ec) >> 4) & 63];
  if (c.ec == ec) return c.kind;
  auto it = kinds_.find(ec);
  if (it != kinds_.end()) {
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
  else if (n == "jitprov_runtime:module_load")
    k = Kind::kModuleLoad;
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
  kinds_.emplace(ec, k);
  c = {ec, k};
  return k;
}

bool Decoder::startId(const bt_event* ev, Kind kind, uint32_t* instance, uint64_t* id) {
  if (kind != Kind::kRundownBegin && kind != Kind::kModuleLoad) return false;
  const bt_field* f = bt_event_borrow_payload_field_const(ev);
  *instance = instanceOf(f);
  return u64(f, kind == Kind::kRundownBegin ? "rundown_id" : "module_id", id);
}

bool Decoder::pidnsUsable(const bt_stream_class* sc) {
  if (sc == pidns_sc_) return pidns_sc_usable_;
  const bt_trace_class* tc = bt_stream_class_borrow_trace_class_const(sc);
  auto it = pidns_usable_.find(tc);
  if (it == pidns_usable_.end()) {
    const auto has = [](const bt_field_class* s, const char* name) {
      return s != nullptr && bt_field_class_get_type(s) == BT_FIELD_CLASS_TYPE_STRUCTURE &&
             bt_field_class_structure_borrow_member_by_name_const(s, name) != nullptr;
    };
    bool with = false, without = false;
    for (uint64_t i = 0, n = bt_trace_class_get_stream_class_count(tc); i < n; ++i) {
      const bt_stream_class* c = bt_trace_class_borrow_stream_class_by_index_const(tc, i);
      bool jitprov = false;
      for (uint64_t e = 0, m = bt_stream_class_get_event_class_count(c); e < m && !jitprov; ++e) {
        const char* name = bt_event_class_get_name(bt_stream_class_borrow_event_class_by_index_const(c, e));
        jitprov = name != nullptr && std::strncmp(name, "jitprov_", 8) == 0;
      }
      const bt_field_class* ctx = bt_stream_class_borrow_event_common_context_field_class_const(c);
      if (!jitprov || !has(ctx, "vpid")) continue;
      (has(ctx, "pid_ns") ? with : without) = true;
    }
    it = pidns_usable_.emplace(tc, !(with && without)).first;
  }
  pidns_sc_ = sc;
  pidns_sc_usable_ = it->second;
  return it->second;
}

ProcessId Decoder::processOf(const bt_event* ev, bool* pidns_partial) {
  ProcessId id;
  if (const bt_field* ctx = bt_event_borrow_common_context_field_const(ev)) {
    uint64_t v;
    if (u64(ctx, "pid_ns", &v)) {
      if (pidnsUsable(bt_stream_borrow_class_const(bt_event_borrow_stream_const(ev))))
        id.pidns = v;
      else
        *pidns_partial = true;
    }
    if (u64(ctx, "vpid", &v)) {
      id.vpid = int64_t(v);
      return id;
    }
  }
  id.vpid = streamPid(bt_event_borrow_stream_const(ev));
  return id;
}

int64_t Decoder::streamPid(const bt_stream* stream) {
  auto it = stream_pid_.find(stream);
  if (it != stream_pid_.end()) return it->second;
  int64_t pid = -1;
  const bt_value* v =
      bt_trace_borrow_environment_entry_value_by_name_const(bt_stream_borrow_trace_const(stream), "vpid");
  if (v != nullptr && bt_value_get_type(v) == BT_VALUE_TYPE_SIGNED_INTEGER) pid = bt_value_integer_signed_get(v);
  if (v != nullptr && bt_value_get_type(v) == BT_VALUE_TYPE_UNSIGNED_INTEGER)
    pid = int64_t(bt_value_integer_unsigned_get(v));
  stream_pid_.emplace(stream, pid);
  return pid;
}

void Decoder::decode(const bt_message* msg, Kind kind, int64_t pid, Batch& b) {
  const bt_event* ev = bt_message_event_borrow_event_const(msg);
  auto n = [&] { return std::string(bt_event_class_get_name(bt_event_borrow_class_const(ev))); };
  Item it{kind};
  it.pid = pid;
  if (bt_clock_snapshot_get_ns_from_origin(bt_message_event_borrow_default_clock_snapshot_const(msg), &it.ts) !=
      BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
    b.error = "event " + n() + " has no usable timestamp";
    return;
  }
  const bt_field* f = bt_event_borrow_payload_field_const(ev);
  it.instance = instanceOf(f);
  Refusal no;
  switch (kind) {
    case Kind::kMethodLoad:
      no = decodeRecord(f, &it);
      break;
    case Kind::kMethodUnload:
    case Kind::kCodeUnload:
      no = decodeRuntime(f, &it);
      break;
    case Kind::kModuleLoad:
    case Kind::kJitprovOther:
      break;
    default:  // a rundown's event
      no = decodeRundown(f, &it, b);
  }
  if (no.what.empty())
    b.items.push_back(it);
  else if (no.malformed)
    b.error = "event " + n() + ": missing or malformed " + no.what;
  else
    b.error = "event " + n() + " cannot be what jitprov emitted (" + no.what + "): damaged input";
}

// A method_load, or a rundown's method.
Decoder::Refusal Decoder::decodeRecord(const bt_field* f, Item* it) {
  MethodRecordView r;
  bool plain = false;
  if (!methodFields(f, &r, &plain)) return {"method fields"};
  if (std::string why = impossible(r, plain); !why.empty()) return {std::move(why), false};
  setRecord(*it, r);
  return {};
}

// A method_unload or a code_unload.
Decoder::Refusal Decoder::decodeRuntime(const bt_field* f, Item* it) {
  if (it->kind == Kind::kMethodUnload) {
    if (!u64(f, "method_id", &it->fl.method_id) || !u64(f, "module_id", &it->fl.module_id) ||
        !seqField(f, "unload_seq", &it->fl.publish_seq, it))
      return {"method_id/module_id/unload_seq"};
    if (it->fl.method_id == 0 || it->fl.module_id == 0) return {"an id of 0", false};
    return {};
  }
  if (!u64(f, "version_id", &it->fl.version_id) || !seqField(f, "retire_seq", &it->fl.publish_seq, it))
    return {"version_id/retire_seq"};
  if (it->fl.version_id == 0) return {"an id of 0", false};
  return {};
}

// A rundown's event: its rundown_id, and the rest of a method record, a rundown_begin or
// a rundown_end (those two in b.rare).
Decoder::Refusal Decoder::decodeRundown(const bt_field* f, Item* it, Batch& b) {
  if (!u64(f, "rundown_id", &it->rid)) return {"rundown_id"};
  if (it->kind == Kind::kRundownMethod) return decodeRecord(f, it);
  if (it->kind != Kind::kRundownBegin && it->kind != Kind::kRundownEnd) return {};
  RareItem x;
  Refusal no = it->kind == Kind::kRundownBegin ? decodeBegin(f, &x) : decodeEnd(f, &x);
  if (!no.what.empty()) return no;
  it->rare = uint32_t(b.rare.size());
  b.rare.push_back(std::move(x));
  return {};
}

Decoder::Refusal Decoder::decodeBegin(const bt_field* f, RareItem* x) {
  if (!enumLabel(f, "mode", &x->mode) || !enumLabel(f, "trigger", &x->trigger)) return {"mode/trigger"};
  if (member(f, "publish_seq") != nullptr) {
    if (!u64(f, "publish_seq", &x->begin_seq)) return {"publish_seq"};
    x->has_seq = true;
  }
  return {};
}

Decoder::Refusal Decoder::decodeEnd(const bt_field* f, RareItem* x) {
  if (!u64(f, "modules", &x->modules) || !u64(f, "methods", &x->methods) || !u64(f, "versions", &x->versions) ||
      !u64(f, "skipped", &x->skipped) || !u64(f, "retried", &x->retried) || !u64(f, "duration_ns", &x->duration))
    return {"counts"};
  if (member(f, "publish_seq") != nullptr) {
    if (!u64(f, "publish_seq", &x->publish_seq) || !u64(f, "end_seq", &x->end_seq) ||
        !u64(f, "caught_up", &x->caught_up))
      return {"publish_seq/end_seq/caught_up"};
    x->has_seq = true;
  }
  uint64_t cut = 0;
  if (member(f, "cut_short") != nullptr && (!u64(f, "cut_short", &cut) || cut > 1)) return {"cut_short"};
  x->cut_short = cut == 1;
  // Since provider ABI 6: `methods` counts the methods with records, and this those of
  // them only the catch-up added (older traces: `methods` counted the walk's methods,
  // with records or not, and is not checked).
  if (member(f, "caught_up_methods") != nullptr) {
    if (!u64(f, "caught_up_methods", &x->caught_up_methods)) return {"caught_up_methods"};
    x->has_methods = true;
  }
  return {};
}

}  // namespace jitprov::verify
