/* SPDX-License-Identifier: MIT */
// jitprov-verify's checks of untrusted input that need no babeltrace2: the packetized
// metadata's framing, and whether a record's values can be what jitprov emitted. Pure
// functions of their input, so that the fuzz targets (tests/fuzz) exercise them as
// the verifier does.
#pragma once

#include <jitprov/trace_abi.h>
#include <jitprov/utf8.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace jitprov::verify {

// "" when a metadata file of `size` bytes is text metadata or a sequence of whole CTF
// metadata packets, else why not (a file cut inside a packet, no packet magic, impossible
// sizes). It reads only the packets' headers: read(offset, buf, n) fills buf with the n
// bytes at offset, false when it cannot (then "unreadable").
template <class ReadAt>
std::string checkMetadataPackets(uint64_t size, ReadAt&& read) {
  // struct metadata_packet_header (CTF 1.8): magic, uuid[16], checksum, content_size,
  // packet_size (bits), compression, encryption, checksum scheme, major, minor.
  constexpr size_t kHeader = 37;
  constexpr uint32_t kMagic = 0x75D11D57;
  char head[kHeader];
  if (size >= 6) {
    if (!read(0, head, 6)) return "metadata: unreadable";
    if (std::string_view(head, 6) == "/* CTF") return "";  // text metadata
  }
  auto u32 = [&](size_t off, bool swap) {
    uint32_t v;
    std::memcpy(&v, head + off, 4);
    return swap ? __builtin_bswap32(v) : v;
  };
  uint64_t off = 0, packets = 0;
  while (off < size) {
    const std::string where = "metadata packet " + std::to_string(packets) + " at byte " + std::to_string(off);
    if (size - off < kHeader) return where + ": cut inside its header (a truncated file?)";
    if (!read(off, head, kHeader)) return where + ": unreadable";
    const bool swap = u32(0, false) != kMagic;
    if (swap && u32(0, true) != kMagic) return where + ": no packet magic (damaged metadata)";
    const uint32_t content = u32(24, swap), bits = u32(28, swap);
    if (bits % 8 != 0 || content > bits || content < kHeader * 8 || bits / 8 < kHeader)
      return where + ": impossible sizes (content " + std::to_string(content) + " bits, packet " +
             std::to_string(bits) + " bits)";
    if (bits / 8 > size - off)
      return where + ": cut after " + std::to_string(size - off) + " of its " + std::to_string(bits / 8) +
             " bytes (a truncated file?)";
    off += bits / 8;
    ++packets;
  }
  return packets == 0 ? "metadata: empty" : "";
}

// checkMetadataPackets of metadata in memory.
inline std::string checkMetadataBytes(std::string_view data) {
  return checkMetadataPackets(data.size(), [&](uint64_t off, char* buf, size_t n) {
    std::memcpy(buf, data.data() + off, n);
    return true;
  });
}

struct RecordValues {
  uint64_t method_id, version_id, module_id, code_start, code_size;
  std::string_view name_space, name, signature;
};

// Whether every byte of `s` is ASCII and none is NUL, 8 bytes at a time: then it is
// valid UTF-8 without looking further (the common case, so that a record's names are
// read once before their digest).
inline bool plainAscii(std::string_view s) {
  constexpr uint64_t kLow = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  uint64_t bad = 0;
  size_t i = 0;
  for (; s.size() - i >= 8; i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    bad |= (w & kHigh) | ((w - kLow) & ~w & kHigh);
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    const uint64_t used = ~uint64_t{0} >> (8 * (8 - (s.size() - i)));  // the tail's bytes
    bad |= (w & kHigh) | ((w - kLow) & ~w & kHigh & used);
  }
  return bad == 0;
}

// Why a method record cannot be what jitprov emitted ("" when it can be): the registry
// hands out ids from 1, publishes only code at a non-zero address with a non-zero size,
// and emits names as valid UTF-8 of at most 4096 bytes. Such a record is damaged input,
// not a guarantee violated by the runtime.
inline std::string impossibleRecord(const RecordValues& r) {
  if (r.method_id == 0 || r.version_id == 0 || r.module_id == 0) return "an id of 0";
  if (r.code_start == 0 || r.code_size == 0) return "code at address 0 or of size 0";
  if (r.code_start > UINT64_MAX - r.code_size) return "a code range past the end of the address space";
  const std::pair<const char*, std::string_view> names[] = {
      {"namespace", r.name_space}, {"name", r.name}, {"signature", r.signature}};
  for (const auto& [n, v] : names) {
    if (v.size() > JITPROV_MAX_TRACE_STRING)
      return std::string(n) + " longer than " + std::to_string(JITPROV_MAX_TRACE_STRING) + " bytes";
    if (!isValidUtf8(v)) return std::string(n) + " not valid UTF-8";
  }
  return "";
}

}  // namespace jitprov::verify
