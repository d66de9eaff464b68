// SPDX-License-Identifier: MIT
#include "clr_events.h"

#include <cstring>

namespace jitprov::dotnet {
namespace {

class Reader {
 public:
  Reader(const uint8_t* data, size_t len) : p_(data), end_(data + len) {}
  bool ok() const { return ok_; }
  template <typename T>
  T num() {
    T v{};
    if (size_t(end_ - p_) < sizeof v) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  // A NUL-terminated UTF-16LE string, where it lies in the payload (not converted).
  Utf16Ref wstr() {
    for (const uint8_t* q = p_; end_ - q >= 2; q += 2) {
      if (q[0] == 0 && q[1] == 0) {
        const Utf16Ref s{p_, size_t(q - p_) / 2};
        p_ = q + 2;
        return s;
      }
    }
    ok_ = false;
    return {};
  }
  size_t left() const { return size_t(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

// Writes cp as UTF-8 at p; returns the end.
char* putUtf8(char* p, uint32_t cp) {
  if (cp < 0x80) {
    *p++ = char(cp);
  } else if (cp < 0x800) {
    *p++ = char(0xC0 | (cp >> 6));
    *p++ = char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *p++ = char(0xE0 | (cp >> 12));
    *p++ = char(0x80 | ((cp >> 6) & 0x3F));
    *p++ = char(0x80 | (cp & 0x3F));
  } else {
    *p++ = char(0xF0 | (cp >> 18));
    *p++ = char(0x80 | ((cp >> 12) & 0x3F));
    *p++ = char(0x80 | ((cp >> 6) & 0x3F));
    *p++ = char(0x80 | (cp & 0x3F));
  }
  return p;
}

}  // namespace

namespace {

// UTF-16 code units, unit(i) the i-th, to UTF-8 at p (at most 3 bytes a unit: a
// surrogate pair makes 4 from 2); returns the end. Unpaired surrogates become U+FFFD.
template <typename Unit>
char* toUtf8(size_t units, Unit unit, char* p) {
  for (size_t i = 0; i < units; ++i) {
    uint32_t c = unit(i);
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < units && unit(i + 1) >= 0xDC00 && unit(i + 1) <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (uint32_t(unit(i + 1)) - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    p = putUtf8(p, c);
  }
  return p;
}

template <typename Unit>
std::string toUtf8String(size_t units, Unit unit) {
  std::string out(3 * units, '\0');
  out.resize(size_t(toUtf8(units, unit, out.data()) - out.data()));
  return out;
}

uint32_t unitLe(const uint8_t* bytes, size_t i) { return uint32_t(bytes[2 * i]) | uint32_t(bytes[2 * i + 1]) << 8; }

}  // namespace

std::string utf16ToUtf8(const char16_t* s, size_t units) {
  return toUtf8String(units, [s](size_t i) { return uint32_t(s[i]); });
}

std::string utf16leToUtf8(const uint8_t* bytes, size_t units) {
  return toUtf8String(units, [bytes](size_t i) { return unitLe(bytes, i); });
}

std::string Utf16Ref::utf8() const { return utf16leToUtf8(bytes, units); }

char* Utf16Ref::utf8(char* out) const {
  char* end = toUtf8(
      units, [b = bytes](size_t i) { return unitLe(b, i); }, out);
  *end = '\0';
  return end + 1;
}

bool decodeMethod(const uint8_t* data, size_t len, uint32_t version, MethodEvent* out) {
  if (version < 1) return false;  // version 0 has no ClrInstanceID; the runtime sends 1 and 2
  Reader r(data, len);
  out->method_id = r.num<uint64_t>();
  out->module_id = r.num<uint64_t>();
  out->start = r.num<uint64_t>();
  out->size = r.num<uint32_t>();
  out->token = r.num<uint32_t>();
  out->flags = r.num<uint32_t>();
  out->name_space = r.wstr();
  out->name = r.wstr();
  out->signature = r.wstr();
  out->clr_instance = r.num<uint16_t>();
  out->has_native_version = version >= 2;
  out->native_version = version >= 2 ? r.num<uint64_t>() : 0;
  return r.ok();
}

bool decodeModule(const uint8_t* data, size_t len, uint32_t version, ModuleEvent* out) {
  if (version < 1) return false;
  Reader r(data, len);
  out->module_id = r.num<uint64_t>();
  out->assembly_id = r.num<uint64_t>();
  out->flags = r.num<uint32_t>();
  (void)r.num<uint32_t>();  // Reserved1
  out->il_path = r.wstr().utf8();
  out->native_path = r.wstr().utf8();
  (void)r.num<uint16_t>();  // ClrInstanceID; version 2 adds PDB fields, not needed
  return r.ok();
}

}  // namespace jitprov::dotnet
