/* SPDX-License-Identifier: MIT */
// HotSpot's own field table (gHotSpotVMStructs, exported by libjvm.so for its
// serviceability agent), read by field name, so that no offset is compiled in: the
// compile level and OSR entry of an nmethod, which JVMTI does not give; and a method's
// names, which JVMTI gives at 6 us a method here (GetMethodName, GetMethodDeclaringClass,
// GetClassSignature, three Deallocates, each a VM transition; docs/jvm-agent.md).
//
// Names: *(Method**)jmethodID -> Method::_constMethod -> ConstMethod::_constants (the
// ConstantPool), _name_index and _signature_index into the pool's Symbol* slots (which
// follow the ConstantPool header: sizeof(ConstantPool) from gHotSpotVMTypes), and
// ConstantPool::_pool_holder -> Klass::_name: Symbols of _length bytes at _body, the
// same modified UTF-8 bytes JVMTI copies out. Read in a CompiledMethodLoad callback,
// whose method HotSpot keeps alive for JVMTI's own reads of the same fields.
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
#include <string_view>
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

  // A method's names, as views of HotSpot's Symbols (valid while the method lives):
  // its class's internal name ("java/util/HashMap", a hidden class's with '+' before
  // its suffix), its name and its signature. False when a field is missing in this JDK
  // or what was read is not plausible (a null pointer, an index past the pool).
  struct Names {
    std::string_view klass, name, signature;
  };
  bool namesUsable() const noexcept { return cp_size_ > 0 && off_sym_body_ >= 0 && off_klass_name_ >= 0; }
  bool namesOf(const void* jmethod_id, Names* out) const noexcept;
  // A method's source file as the jitdump names it: its class's package path and the
  // class's SourceFile attribute ("java/util/" and "HashMap.java"), from the pool's
  // _source_file_name_index. False as namesOf, or when the class has no SourceFile.
  bool sourceOf(const void* jmethod_id, std::string_view* package, std::string_view* file) const noexcept;
  // For the agent's names=mutant test hook: Symbol bodies read one byte off.
  void corruptNamesForTest() noexcept {
    if (off_sym_body_ >= 0) ++off_sym_body_;
  }

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
  bool symbolAt(uintptr_t symbol, std::string_view* out) const noexcept;
  long off_const_method_ = -1, off_cm_constants_ = -1, off_cm_name_index_ = -1, off_cm_signature_index_ = -1;
  long off_cp_length_ = -1, off_cp_holder_ = -1, off_klass_name_ = -1, off_sym_length_ = -1, off_sym_body_ = -1;
  long cp_size_ = -1;        // sizeof(ConstantPool): its Symbol* slots follow it
  long off_cp_source_ = -1;  // ConstantPool::_source_file_name_index (sourceOf)
  // The method's constant pool and its length: false when not plausible.
  bool poolOf(const void* jmethod_id, uintptr_t* cm, uintptr_t* cp, int* length) const noexcept;
  bool poolSymbol(uintptr_t cp, int length, unsigned index, std::string_view* out) const noexcept;
  std::vector<std::pair<uintptr_t, uintptr_t>> heaps_;  // [low, high) of each code heap
};

}  // namespace jitprov::jvmti
