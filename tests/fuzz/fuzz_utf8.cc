// SPDX-License-Identifier: MIT
// libFuzzer target: the name sanitiser. Whatever bytes a host registers, sanitizeUtf8()
// returns valid UTF-8 of at most the limit, unchanged when the input was already fine.
#include <jitprov/utf8.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t max = data[0] % 64 + 1;  // small limits reach the truncation paths
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string out;
  const bool changed = jitprov::sanitizeUtf8(in, max, &out);
  if (!jitprov::isValidUtf8(out) || out.size() > max) std::abort();
  if (jitprov::isValidUtf8(in) && in.size() <= max && (changed || out != in)) std::abort();
  if (!changed && out != in) std::abort();
  return 0;
}
