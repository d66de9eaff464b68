// SPDX-License-Identifier: MIT
// libFuzzer target: jitprov-verify's checks of untrusted trace input that run before or
// beside libbabeltrace2 (tools/verify/verify_checks.h): the metadata's packet framing, and the
// record plausibility check. A packet sequence it accepts lies wholly inside the input.
#include "verify_checks.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string why = jitprov::verify::checkMetadataBytes(in);
  if (why.empty() && in.substr(0, 6) != "/* CTF") {
    // Accepted: re-walk the packets; each must be whole.
    size_t off = 0;
    while (off < in.size()) {
      if (in.size() - off < 37) std::abort();
      uint32_t size_bits;
      std::memcpy(&size_bits, in.data() + off + 28, 4);
      uint32_t magic;
      std::memcpy(&magic, in.data() + off, 4);
      if (magic != 0x75D11D57) size_bits = __builtin_bswap32(size_bits);
      if (size_bits / 8 < 37 || size_bits / 8 > in.size() - off) std::abort();
      off += size_bits / 8;
    }
  }
  // The record check, on fields carved out of the same bytes.
  if (size >= 40) {
    uint64_t v[5];
    std::memcpy(v, data, sizeof v);
    const std::string_view rest = in.substr(40);
    const size_t a = rest.size() / 3;
    const jitprov::verify::RecordValues r{
        v[0], v[1], v[2], v[3], v[4], rest.substr(0, a), rest.substr(a, a), rest.substr(2 * a)};
    const std::string bad = jitprov::verify::impossibleRecord(r);
    if (bad.empty() && (r.method_id == 0 || r.code_size == 0 || !jitprov::isValidUtf8(r.name))) std::abort();
  }
  return 0;
}
