/* SPDX-License-Identifier: MIT */
// jitprov-verify's events as decoded: what the reading thread keeps of each babeltrace2
// event (decode.cc), in batches the checking thread consumes (checker.cc, through
// verify_pipe.h). Plain data, no babeltrace2: the checker's unit tests
// (tests/unit/verify_checker_test.cc) build these streams themselves.
#pragma once

#include "verify_g2.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace jitprov::verify {

// What an event is, by its class (decided once per class: decode.cc).
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
  kModuleLoad,   // jitprov_runtime:module_load: its module id tells a vpid's next process (lives.h)
  kJitprovOther  // another jitprov event: counted as the process's
};

enum ItemFlags : uint8_t {
  kNoSeqField = 1,  // an unload without its sequence field (a trace from before it existed)
};

// One event, as much as the checks need of it.
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
  bool has_methods = false;  // end: caught_up_methods, and `methods` by the records (ABI 6)
  uint64_t caught_up_methods = 0;
};

// Events in the order read, handed from the reading thread to the checking one.
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

// A method record's Item fields: its numbers, and the digest G2 compares (with its names).
template <class Str>
void setRecord(Item& it, const BasicMethodRecord<Str>& r) {
  it.fl = r;
  it.digest = digestOf(r);
}

}  // namespace jitprov::verify
