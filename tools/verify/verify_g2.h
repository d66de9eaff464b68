/* SPDX-License-Identifier: MIT */
// jitprov-verify's G2 core, without babeltrace2: a method record's fields as decoded,
// the digest of them that G2 compares, which fields two records differ in, and the
// decision for each rundown record against its version's method_load, whichever comes
// first. decode.cc decodes events into these records; tests/unit/verify_g2_test.cc
// feeds synthetic streams.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitprov::verify {

// A method record's numbers: a method_load's, or a rundown `method` event's.
struct MethodNumbers {
  uint64_t method_id = 0, version_id = 0, module_id = 0, code_start = 0;
  uint32_t rejit_id = 0, code_size = 0, method_token = 0, method_flags = 0;
  uint64_t tier = 0;          // the enumeration's value
  int64_t host_tier = -1;     // -1: a trace from before the field existed
  int64_t host_version = -1;  // -1: a trace from before the field existed (0.6)
  uint64_t publish_seq = 0;   // 0: a trace from before the field existed
};

// With its names: views into the event being read (no copy per event), or owned where a
// record is kept (a test's, or one whose mismatch is explained).
template <class Str>
struct BasicMethodRecord : MethodNumbers {
  Str name_space, name, signature;
};
using MethodRecord = BasicMethodRecord<std::string>;
using MethodRecordView = BasicMethodRecord<std::string_view>;

inline MethodRecord own(const MethodRecordView& v) {
  return MethodRecord{v, std::string(v.name_space), std::string(v.name), std::string(v.signature)};
}

// XXH3's 128 bits: two different records share one with a chance of 2^-128 (the names'
// 64-bit multiply-xor hash before it had collisions one could compute). All zero:
// none (a version whose method_load has not come).
struct Digest {
  uint64_t lo, hi;
  bool empty() const { return lo == 0 && hi == 0; }
  friend bool operator==(const Digest&, const Digest&) = default;
};

// The digest of every field G2 compares (all but version_id, the key), over a canonical
// serialization: each number as 8 bytes, each name as its length (8 bytes) and its
// bytes, so that no two records serialize alike. Never empty.
template <class Str>
Digest digestOf(const BasicMethodRecord<Str>& r) {
  const uint64_t numbers[] = {
      r.method_id, r.module_id,    r.rejit_id,     r.tier,        uint64_t(r.host_tier),   r.code_start,
      r.code_size, r.method_token, r.method_flags, r.publish_seq, uint64_t(r.host_version)};
  const std::string_view names[] = {r.name_space, r.name, r.signature};
  size_t size = sizeof numbers;
  for (const std::string_view s : names) size += sizeof(uint64_t) + s.size();
  // On the stack: a record's names are a few dozen bytes (longer ones, up to 3 x 4096
  // bytes, in a buffer that grows to the longest and stays).
  char stack[1024];
  thread_local std::string heap;
  if (size > sizeof stack) heap.resize(size);
  char* const buf = size > sizeof stack ? heap.data() : stack;
  std::memcpy(buf, numbers, sizeof numbers);
  char* p = buf + sizeof numbers;
  for (const std::string_view s : names) {
    const uint64_t length = s.size();
    std::memcpy(p, &length, sizeof length);
    if (length != 0) std::memcpy(p + sizeof length, s.data(), length);
    p += sizeof length + length;
  }
  const XXH128_hash_t h = XXH3_128bits(buf, size);
  return Digest{h.low64 == 0 && h.high64 == 0 ? 1 : h.low64, h.high64};
}

// Which fields two records differ in, comma-separated ("" when none): what a G2
// violation names.
template <class Str>
std::string differingFields(const BasicMethodRecord<Str>& a, const BasicMethodRecord<Str>& b) {
  std::string d;
  auto add = [&](bool differs, const char* n) {
    if (differs) d += std::string(d.empty() ? "" : ",") + n;
  };
  add(a.method_id != b.method_id, "method_id");
  add(a.module_id != b.module_id, "module_id");
  add(a.rejit_id != b.rejit_id, "rejit_id");
  add(a.tier != b.tier, "tier");
  add(a.host_tier != b.host_tier, "host_tier");
  add(a.host_version != b.host_version, "host_version");
  add(a.code_start != b.code_start, "code_start");
  add(a.code_size != b.code_size, "code_size");
  add(a.method_token != b.method_token, "method_token");
  add(a.method_flags != b.method_flags, "method_flags");
  add(a.publish_seq != b.publish_seq, "publish_seq");
  add(a.name_space != b.name_space, "namespace");
  add(a.name != b.name, "name");
  add(a.signature != b.signature, "signature");
  return d;
}

// G2 for each rundown record: its digest equal to its version's method_load's. A record
// may come before its method_load (emitted between the publication and the method_load's
// emission): it waits here, and is decided when the load comes. The load's digest is
// kept by the caller, per version (VersionEntry::load): 16 bytes, no more.
// verdict(rundown, version_id, equal) is called once per record decided.
class G2Matcher {
 public:
  // A method_load of `vid`; `load` is its version's digest, empty until its first
  // method_load. Returns false for a later one: ignored (the first is its publication).
  template <class Verdict>
  bool onLoad(uint64_t vid, const Digest& d, Digest* load, Verdict&& verdict) {
    if (!load->empty()) return false;
    *load = d;
    if (early_.empty()) return true;
    auto it = early_.find(vid);
    if (it == early_.end()) return true;
    const Waiting& w = it->second;
    for (const uint32_t rundown : w.alike) verdict(rundown, vid, w.first == d);
    for (const Early& e : w.others) verdict(e.rundown, vid, e.digest == d);
    early_.erase(it);
    return true;
  }

  // A record of `vid` in rundown `rundown`; `load` as in onLoad.
  template <class Verdict>
  void onRecord(uint64_t rundown, uint64_t vid, const Digest& d, const Digest& load, Verdict&& verdict) {
    if (!load.empty()) return verdict(rundown, vid, d == load);
    auto [it, fresh] = early_.try_emplace(vid);
    Waiting& w = it->second;
    if (fresh) w.first = d;
    if (d == w.first)
      w.alike.push_back(uint32_t(rundown));
    else
      w.others.push_back(Early{uint32_t(rundown), d});
  }

  // The records whose method_load has not come: f(rundown, version_id).
  template <class F>
  void forEachUndecided(F&& f) const {
    for (const auto& [vid, w] : early_) {
      for (const uint32_t rundown : w.alike) f(rundown, vid);
      for (const Early& e : w.others) f(e.rundown, vid);
    }
  }

  // The records held (the waiting ones): for tests.
  size_t held() const {
    size_t n = 0;
    for (const auto& [vid, w] : early_) n += w.alike.size() + w.others.size();
    return n;
  }

 private:
  struct Early {
    uint32_t rundown;
    Digest digest;
  };
  // The records of one version waiting for its method_load: a version the trace never
  // shows loaded (its code published before the session: an attach with every:N) comes
  // again in each rundown, alike. 4 bytes each such record (a rundown's index), not a
  // node of 64: an hour of rundowns every 5 s of 20 000 such versions held 58 MB, where
  // a multimap node per record took about 900.
  struct Waiting {
    Digest first{};
    std::vector<uint32_t> alike;  // rundowns whose record's digest is `first`
    std::vector<Early> others;    // the rest, as they came
  };
  std::unordered_map<uint64_t, Waiting> early_;  // version_id ->
};

}  // namespace jitprov::verify
