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
  // ---- The attach's scan of the code heaps (jitprov_jvmti.cc, scanCodeHeaps) ----------
  // Without any lock: HotSpot allocates, frees and changes the code meanwhile. A code
  // heap's memory stays mapped for the JVM's life (JDK 17 never uncommits one:
  // CodeHeap::shrink_by is Unimplemented()), so reading a block that was freed meanwhile
  // returns old bytes, never a fault; the caller trusts only what it checks.
  // JDK 17's nmethod states (CompiledMethod: in_use 0, not_used 1, not_entrant 2 alive;
  // unloaded 3 and zombie 4, which CompiledMethodUnload reports, not): the scan is used
  // only on Java 17, whose states these are (JDK 20 removed the zombie state).
  struct Nmethod {
    uintptr_t blob = 0, method = 0, code_begin = 0, code_end = 0;
    int compile_id = 0;
    int8_t state = -1;
    Level level;
  };
  // Empty when every field the scan needs is in this JVM's table; else what is missing.
  std::string scanMissing() const;
  // Each block that a code heap's segment map says begins a block (0 there: the lowest
  // segment of a block, used or free) and whose header says used, in the committed part
  // of every code heap: fn(blob). A block whose segment map and header do not change
  // while the scan passes (every block allocated before it and not freed during it) is
  // found, whatever happens to its neighbours; one allocated or freed meanwhile may be
  // found or not. Returns the blocks visited.
  template <class F>
  uint64_t forEachUsedBlock(F&& fn) const {
    uint64_t n = 0;
    for (const ScanHeap& h : scan_heaps_) {
      const auto* map = reinterpret_cast<const volatile uint8_t*>(h.segmap);
      for (uintptr_t i = 0; i < h.segments; ++i) {
        if (map[i] != 0) continue;
        const uintptr_t block = h.low + (i << h.log2_segment);
        if (*reinterpret_cast<const volatile uint8_t*>(block + uintptr_t(off_block_used_)) != 0) {
          ++n;
          fn(block + uintptr_t(heap_block_size_));
        }
      }
    }
    return n;
  }
  // Reads each used block's header and its blob's first line, so that a walk of the
  // heaps right after (HotSpot's, under CodeCache_lock) finds them in the caches.
  // Returns the blocks touched.
  uint64_t touchBlocks() const {
    return forEachUsedBlock([](uintptr_t blob) { (void)*reinterpret_cast<const volatile uintptr_t*>(blob); });
  }
  // Reads the code heaps' committed parts and segment maps for forEachUsedBlock (after
  // readHeaps). A sentence on what it found; false in *all when a heap could not be read
  // (the scan would miss its code).
  std::string readScanHeaps(bool* all);
  // `blob` read as an nmethod: false when its CodeBlob::_name is not HotSpot's
  // "nmethod" (or "native nmethod") or its fields are not plausible (the code not inside the blob).
  bool readNmethod(uintptr_t blob, Nmethod* out) const noexcept;
  // Reads through /proc/self/mem work (opened here, once): without them no blob's name
  // can be read safely, and the scan is not used.
  static bool safeReadsWork() noexcept;
  static bool alive(int8_t state) noexcept { return state >= 0 && state <= 2; }
  // The nmethod read is still there and alive: same compile id, method and code, state
  // in use, not used or not entrant.
  bool stillAlive(const Nmethod& n) const noexcept;
  // A method's class (ConstantPool::_pool_holder), read directly: the caller keeps the
  // class from unloading. 0 when not plausible.
  uintptr_t holderOf(uintptr_t method) const noexcept;
  // For a method the caller may not keep loaded (a method handle intrinsic, an old
  // version of a redefined method): its class and the jmethodID its class keeps for its
  // idnum (InstanceKlass::_methods_jmethod_ids[idnum + 1], the one HotSpot's events
  // give; *jmid 0 when there is none),
  // read through /proc/self/mem, which fails instead of faulting on memory no longer
  // mapped. False when the class could not be read.
  bool safeJmethodId(uintptr_t method, uintptr_t* holder, uintptr_t* jmid) const noexcept;

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
  // The scan's: fields, and each heap's committed part with its segment map.
  long off_code_end_ = -1, off_blob_name_ = -1, off_blob_size_ = -1, off_compile_id_ = -1, off_state_ = -1;
  long off_cm_idnum_ = -1, off_jmethod_ids_ = -1, off_block_used_ = -1, heap_block_size_ = -1;
  long off_heap_memory_ = -1, off_heap_segmap_ = -1, off_heap_log2_ = -1, off_vs_low_ = -1, off_vs_high_ = -1;
  struct ScanHeap {
    uintptr_t low, segmap, segments;
    int log2_segment;
  };
  std::vector<ScanHeap> scan_heaps_;
  std::vector<uintptr_t> heap_objects_;  // CodeHeap* of each heap (readHeaps)
  // The addresses of HotSpot's "nmethod" and "native nmethod" (readNmethod).
  mutable uintptr_t nmethod_names_[2] = {1, 1};
  mutable std::vector<uintptr_t> other_names_;  // blob names found not to be it
};

}  // namespace jitprov::jvmti
