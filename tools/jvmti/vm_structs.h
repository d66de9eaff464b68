/* SPDX-License-Identifier: MIT */
// HotSpot's own field table (gHotSpotVMStructs, exported by libjvm.so for its
// serviceability agent), read by field name, so that no offset is compiled in: the
// compile level and OSR entry of an nmethod, which JVMTI does not give.
//
// How a level is found, in order (each counted, Agent::tier_by):
//  1. "method_code": *(Method**)jmethodID -> Method::_code is the nmethod whose
//     CodeBlob::_code_begin is the loaded address: its nmethod::_comp_level and
//     _entry_bci (OSR when not -1).
//  2. "blob_scan": otherwise (OSR code, or _code already replaced), the nmethod header
//     is searched backwards from the code address, inside the code heap that holds
//     the address (bounds from CodeCache::_heaps), for the blob whose _code_begin is
//     the address and whose _method is the method.
//  3. "native": a native method's code is its native wrapper, level 0 (the agent asks
//     JVMTI IsMethodNative; method handle intrinsics such as linkToStatic are native).
//  4. "unknown": none worked (or a field is missing in this JDK): host_tier 65535.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jitprov::jvmti {

class VmStructs {
 public:
  // kNative: set by the agent (JVMTI IsMethodNative): a native wrapper, level 0.
  enum class Source : uint8_t { kMethodCode = 0, kBlobScan = 1, kUnknown = 2, kNative = 3 };
  struct Level {
    int level = -1;  // HotSpot comp level 0-4, -1 unknown
    bool osr = false;
    Source source = Source::kUnknown;
  };

  // Reads the table from the libjvm.so that holds `any_jvm_function`. Returns a
  // sentence on what was found (for the agent's verbose log).
  std::string init(const void* any_jvm_function);
  bool usable() const noexcept { return off_method_code_ >= 0 && off_code_begin_ >= 0 && off_comp_level_ >= 0; }
  // Reads the code heaps' bounds (for the blob scan); call once the code cache exists
  // (VMInit). Says what it found.
  std::string readHeaps();
  // jmethod_id: the jmethodID (a Method**); code: the address JVMTI gave.
  Level levelOf(const void* jmethod_id, const void* code) const noexcept;

 private:
  long field(const std::vector<std::pair<std::string, std::string>>& names) const;
  bool inHeap(uintptr_t a, uintptr_t* low) const noexcept;
  Level fromBlob(uintptr_t blob) const noexcept;

  struct Entry {
    std::string type, field;
    uint64_t offset;
    void* address;
    bool is_static;
  };
  std::vector<Entry> entries_;
  long off_method_code_ = -1, off_code_begin_ = -1, off_comp_level_ = -1, off_entry_bci_ = -1, off_blob_method_ = -1;
  std::vector<std::pair<uintptr_t, uintptr_t>> heaps_;  // [low, high) of each code heap
};

}  // namespace jitprov::jvmti
