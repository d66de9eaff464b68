// SPDX-License-Identifier: MIT
#include <jitprov/utf8.h>

#include <cstdint>

namespace jitprov {

namespace {
// Length of the well-formed sequence at s[i], or 0 when it is ill-formed (Unicode
// Table 3-7) or a NUL.
size_t sequenceLength(std::string_view s, size_t i) noexcept {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const size_t left = s.size() - i;
  const uint8_t c = b(0);
  if (c == 0) return 0;
  if (c < 0x80) return 1;
  const auto cont = [&](size_t k, uint8_t lo, uint8_t hi) { return k < left && b(k) >= lo && b(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1, 0x80, 0xBF) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const uint8_t lo = c == 0xE0 ? 0xA0 : 0x80;
    const uint8_t hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const uint8_t lo = c == 0xF0 ? 0x90 : 0x80;
    const uint8_t hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
}  // namespace

bool isValidUtf8(std::string_view s) noexcept {
  for (size_t i = 0; i < s.size();) {
    // ASCII without NUL, 8 bytes at a time (names are mostly that): no byte has its high
    // bit set, and none is zero (the classic has-zero-byte test).
    if (s.size() - i >= 8) {
      uint64_t w;
      __builtin_memcpy(&w, s.data() + i, 8);
      constexpr uint64_t kLow = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
      if ((w & kHigh) == 0 && ((w - kLow) & ~w & kHigh) == 0) {
        i += 8;
        continue;
      }
    }
    const size_t n = sequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool sanitizeUtf8(std::string_view s, size_t max_bytes, std::string* out) {
  out->clear();
  bool changed = false;
  for (size_t i = 0; i < s.size();) {
    const size_t n = sequenceLength(s, i);
    const std::string_view piece = n == 0 ? kReplacement : s.substr(i, n);
    if (out->size() + piece.size() > max_bytes) return true;  // truncated
    out->append(piece);
    changed |= n == 0;
    i += n == 0 ? 1 : n;
  }
  return changed;
}

}  // namespace jitprov
