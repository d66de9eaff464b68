// SPDX-License-Identifier: MIT
// Rundowns broken on purpose, for the verifier's tests (rundown_emitter.h).
#include "rundown_emitter.h"

#include <cstring>
#include <string>
#include <utility>

namespace jitprov {

namespace {

// Whether each of the 8 bytes of `w` is printable ASCII.
bool printable(uint64_t w) {
  for (int i = 0; i < 8; ++i, w >>= 8)
    if ((w & 0xff) < 0x20 || (w & 0xff) > 0x7e) return false;
  return true;
}

// Test-only (RundownFault::kTornName): `sig` changed, of the same length. From 16 bytes
// on, its first two 8-byte words are replaced by printable ASCII such that the name hash
// jitprov-verify compared before issue 22 is unchanged (per word h = (h ^ w) * K, then
// h ^= h >> 29: each step a bijection, so a second word can undo the first's change): a
// verifier comparing that 64-bit digest passes the record, one comparing every byte
// (or XXH3-128) does not. Shorter: its last printable byte flipped.
std::string tornSignature(std::string_view sig) {
  std::string out(sig);
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  auto mix = [](uint64_t x) {
    x *= kMul;
    return x ^ (x >> 29);
  };
  if (out.size() >= 16) {
    uint64_t a, b;
    std::memcpy(&a, out.data(), 8);
    std::memcpy(&b, out.data() + 8, 8);
    const uint64_t h0 = out.size() * kMul, h1 = mix(h0 ^ a);
    // After the second word the state is mix(mix(h0 ^ a2) ^ b2): the original's when
    // b2 = b ^ h1 ^ mix(h0 ^ a2). Printable candidates a2 until b2 is printable too
    // (one in about 2800).
    uint64_t rng = 0x2545F4914F6CDD1DULL;
    for (int tries = 0; tries < (1 << 22); ++tries) {
      uint64_t a2 = 0;
      for (int i = 0; i < 8; ++i) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        a2 |= uint64_t(0x20 + (rng >> 33) % 95) << (8 * i);
      }
      const uint64_t b2 = b ^ h1 ^ mix(h0 ^ a2);
      if (a2 == a || !printable(b2)) continue;
      std::memcpy(out.data(), &a2, 8);
      std::memcpy(out.data() + 8, &b2, 8);
      return out;
    }
  }
  for (size_t i = out.size(); i-- > 0;)
    if (out[i] >= 0x20 && out[i] < 0x7f) {
      out[i] ^= 1;  // stays ASCII, never NUL
      return out;
    }
  return out + "?";
}

}  // namespace

namespace {

enum class Fault { kDuplicate, kTorn, kTornName, kSkip, kNoEnd, kBeginTwice, kEndTwice };

// The fault hits the 100th version of each rundown (torn-name: the first from there
// with a signature of 16 bytes or more, which tornSignature needs).
class FaultyEmitter final : public RundownEmitter {
 public:
  explicit FaultyEmitter(Fault f) : fault_(f) {}

  void begin(const trace::Rundown& ev, RundownMode mode, RundownTrigger trigger, uint64_t method_count,
             uint64_t publish_seq) override {
    visited_ = 0;
    faulted_ = false;
    mode_ = mode;
    trigger_ = trigger;
    method_count_ = method_count;
    publish_seq_ = publish_seq;
    trace::rundownBegin(ev, mode, trigger, method_count, publish_seq);
  }

  bool method(const trace::Rundown& ev, const VersionView& v) override {
    constexpr uint64_t kFaultAt = 100;
    const bool hit = !faulted_ && ++visited_ >= kFaultAt && (fault_ != Fault::kTornName || v.signature.size() >= 16);
    if (!hit || fault_ == Fault::kNoEnd || fault_ == Fault::kBeginTwice || fault_ == Fault::kEndTwice) {
      trace::rundownMethod(ev, v);
      return true;
    }
    faulted_ = true;
    VersionView torn = v;
    std::string sig;
    switch (fault_) {
      case Fault::kSkip:
        return false;
      case Fault::kDuplicate:
        trace::rundownMethod(ev, v);
        break;
      case Fault::kTorn:
        torn.code_size += 1;
        break;
      case Fault::kTornName:
        sig = tornSignature(v.signature);
        torn.signature = sig;
        break;
      default:
        break;
    }
    trace::rundownMethod(ev, torn);
    return true;
  }

  void end(const trace::Rundown& whole, const trace::Rundown& restarted, const trace::RundownEnd& e) override {
    if (fault_ == Fault::kNoEnd) return;
    trace::rundownEnd(whole, e);
    if (fault_ == Fault::kEndTwice) trace::rundownEnd(whole, e);
    trace::RundownEnd cut = e;
    cut.cut_short = true;
    trace::rundownEnd(restarted, cut);
    if (fault_ == Fault::kBeginTwice) trace::rundownBegin(whole, mode_, trigger_, method_count_, publish_seq_);
  }

 private:
  const Fault fault_;
  uint64_t visited_ = 0;
  bool faulted_ = false;
  RundownMode mode_ = RundownMode::kLockFree;
  RundownTrigger trigger_ = RundownTrigger::kApi;
  uint64_t method_count_ = 0, publish_seq_ = 0;
};

}  // namespace

std::unique_ptr<RundownEmitter> faultyEmitter(std::string_view fault) {
  static constexpr std::pair<std::string_view, Fault> kNames[] = {
      {"duplicate", Fault::kDuplicate}, {"torn", Fault::kTorn},    {"torn-name", Fault::kTornName},
      {"skip", Fault::kSkip},           {"no-end", Fault::kNoEnd}, {"begin-twice", Fault::kBeginTwice},
      {"end-twice", Fault::kEndTwice}};
  for (const auto& [name, f] : kNames)
    if (name == fault) return std::make_unique<FaultyEmitter>(f);
  return nullptr;
}

}  // namespace jitprov
