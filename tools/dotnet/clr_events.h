/* SPDX-License-Identifier: MIT */
// Decoding of the CoreCLR runtime events the .NET client mirrors, from the flat payload
// EventPipe hands a profiler: fields back to back, little-endian, strings UTF-16LE up to
// a NUL. A payload shorter than its fields, or a string with no NUL, is refused (the
// caller counts it): nothing is read past `len`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace jitprov::dotnet {

// A UTF-16LE string inside an event's payload, not copied: valid while the payload is
// (during CoreCLR's callback). Converted only when needed: a method's names are read
// once, when the client first sees it, not at every body or unload.
struct Utf16Ref {
  const uint8_t* bytes = nullptr;
  size_t units = 0;
  std::string utf8() const;  // ill-formed UTF-16 becomes U+FFFD
  // The same, NUL-terminated, at out (room for 3 * units + 1 bytes); returns the byte
  // after the NUL.
  char* utf8(char* out) const;
};

struct MethodEvent {  // MethodLoadVerbose / MethodUnloadVerbose, versions 1 and 2
  uint64_t method_id = 0, module_id = 0, start = 0;
  uint32_t size = 0, token = 0, flags = 0;
  Utf16Ref name_space, name, signature;
  uint16_t clr_instance = 0;
  uint64_t native_version = 0;  // version 2 only ("ReJITID" in the manifest): 0 on version 1
  bool has_native_version = false;
};

struct ModuleEvent {  // ModuleLoad / ModuleUnload, version 1 and later
  uint64_t module_id = 0, assembly_id = 0;
  uint32_t flags = 0;
  std::string il_path, native_path;
};

// Each returns false when the payload is malformed.
bool decodeMethod(const uint8_t* data, size_t len, uint32_t version, MethodEvent* out);
bool decodeModule(const uint8_t* data, size_t len, uint32_t version, ModuleEvent* out);

// UTF-16 code units to UTF-8; unpaired surrogates become U+FFFD. The second reads them
// from little-endian bytes, aligned or not (an event's payload).
std::string utf16ToUtf8(const char16_t* s, size_t units);
std::string utf16leToUtf8(const uint8_t* bytes, size_t units);

}  // namespace jitprov::dotnet
