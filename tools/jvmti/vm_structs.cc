// SPDX-License-Identifier: MIT
#include "vm_structs.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace jitprov::jvmti {

namespace {
template <class T>
T readVolatile(uintptr_t base, long off) noexcept {
  return *reinterpret_cast<const volatile T*>(base + uintptr_t(off));
}
template <class T>
T readAt(uintptr_t base, long off) noexcept {
  T v;
  std::memcpy(&v, reinterpret_cast<const void*>(base + uintptr_t(off)), sizeof v);
  return v;
}
constexpr int kInvocationEntryBci = -1;    // HotSpot: _entry_bci of a normal (non-OSR) nmethod
constexpr uintptr_t kMaxScan = 64 * 1024;  // nmethod header + relocations before the code
// gHotSpotVMTypes: each type's name and size (the table is libjvm.so's static data).
struct TypeTable {
  char* const* table;
  const uint64_t *name_off, *size_off, *stride;
};
long typeSize(const TypeTable& t, const char* type) noexcept {
  if (t.table == nullptr || *t.table == nullptr || t.name_off == nullptr || t.size_off == nullptr ||
      t.stride == nullptr)
    return -1;
  for (const char* e = *t.table;; e += *t.stride) {
    const char* name = *reinterpret_cast<const char* const*>(e + *t.name_off);
    if (name == nullptr) return -1;
    if (std::strcmp(name, type) == 0) return long(*reinterpret_cast<const uint64_t*>(e + *t.size_off));
  }
}
}  // namespace

std::string VmStructs::init(const void* any_jvm_function) {
  Dl_info info{};
  if (dladdr(any_jvm_function, &info) == 0 || info.dli_fname == nullptr) return "libjvm.so not found (dladdr)";
  void* h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return std::string("dlopen ") + info.dli_fname + ": " + dlerror();
  auto sym64 = [&](const char* n) -> const uint64_t* { return static_cast<const uint64_t*>(dlsym(h, n)); };
  auto* table = static_cast<char* const*>(dlsym(h, "gHotSpotVMStructs"));
  const uint64_t* type_off = sym64("gHotSpotVMStructEntryTypeNameOffset");
  const uint64_t* field_off = sym64("gHotSpotVMStructEntryFieldNameOffset");
  const uint64_t* offset_off = sym64("gHotSpotVMStructEntryOffsetOffset");
  const uint64_t* address_off = sym64("gHotSpotVMStructEntryAddressOffset");
  const uint64_t* static_off = sym64("gHotSpotVMStructEntryIsStaticOffset");
  const uint64_t* stride = sym64("gHotSpotVMStructEntryArrayStride");
  const TypeTable h2{static_cast<char* const*>(dlsym(h, "gHotSpotVMTypes")), sym64("gHotSpotVMTypeEntryTypeNameOffset"),
                     sym64("gHotSpotVMTypeEntrySizeOffset"), sym64("gHotSpotVMTypeEntryArrayStride")};
  dlclose(h);  // NOLOAD took a reference; libjvm.so stays loaded
  if (table == nullptr || *table == nullptr || !type_off || !field_off || !offset_off || !address_off || !static_off ||
      !stride)
    return std::string(info.dli_fname) + " exports no gHotSpotVMStructs table";
  for (const char* e = *table;; e += *stride) {
    const char* type = *reinterpret_cast<const char* const*>(e + *type_off);
    if (type == nullptr) break;
    const char* fld = *reinterpret_cast<const char* const*>(e + *field_off);
    if (fld == nullptr) continue;
    entries_.push_back(Entry{type, fld, *reinterpret_cast<const uint64_t*>(e + *offset_off),
                             *reinterpret_cast<void* const*>(e + *address_off),
                             *reinterpret_cast<const int32_t*>(e + *static_off) != 0});
  }
  off_method_code_ = field({{"Method", "_code"}});
  off_code_begin_ = field({{"CodeBlob", "_code_begin"}});
  off_comp_level_ = field({{"nmethod", "_comp_level"}, {"CompiledMethod", "_comp_level"}});
  off_entry_bci_ = field({{"nmethod", "_entry_bci"}});
  off_blob_method_ = field({{"CompiledMethod", "_method"}, {"nmethod", "_method"}});
  off_const_method_ = field({{"Method", "_constMethod"}});
  off_cm_constants_ = field({{"ConstMethod", "_constants"}});
  off_cm_name_index_ = field({{"ConstMethod", "_name_index"}});
  off_cm_signature_index_ = field({{"ConstMethod", "_signature_index"}});
  off_cp_length_ = field({{"ConstantPool", "_length"}});
  off_cp_holder_ = field({{"ConstantPool", "_pool_holder"}});
  off_klass_name_ = field({{"Klass", "_name"}});
  off_sym_length_ = field({{"Symbol", "_length"}});
  off_sym_body_ = field({{"Symbol", "_body"}});
  off_cp_source_ = field({{"ConstantPool", "_source_file_name_index"}});
  off_code_end_ = field({{"CodeBlob", "_code_end"}});
  off_blob_name_ = field({{"CodeBlob", "_name"}});
  off_blob_size_ = field({{"CodeBlob", "_size"}});
  off_compile_id_ = field({{"nmethod", "_compile_id"}, {"CompiledMethod", "_compile_id"}});
  off_state_ = field({{"nmethod", "_state"}});
  off_cm_idnum_ = field({{"ConstMethod", "_method_idnum"}});
  off_jmethod_ids_ = field({{"InstanceKlass", "_methods_jmethod_ids"}});
  off_block_used_ = field({{"HeapBlock::Header", "_used"}});
  off_heap_memory_ = field({{"CodeHeap", "_memory"}});
  off_heap_segmap_ = field({{"CodeHeap", "_segmap"}});
  off_heap_log2_ = field({{"CodeHeap", "_log2_segment_size"}});
  off_vs_low_ = field({{"VirtualSpace", "_low"}});
  off_vs_high_ = field({{"VirtualSpace", "_high"}});
  heap_block_size_ = typeSize(h2, "HeapBlock");
  cp_size_ = typeSize(h2, "ConstantPool");
  if (off_const_method_ < 0 || off_cm_constants_ < 0 || off_cm_name_index_ < 0 || off_cm_signature_index_ < 0 ||
      off_cp_length_ < 0 || off_cp_holder_ < 0 || off_sym_length_ < 0)
    cp_size_ = -1;  // names from JVMTI
  std::string s = std::to_string(entries_.size()) + " VMStructs entries; Method::_code " +
                  std::to_string(off_method_code_) + ", CodeBlob::_code_begin " + std::to_string(off_code_begin_) +
                  ", _comp_level " + std::to_string(off_comp_level_) + ", _entry_bci " +
                  std::to_string(off_entry_bci_) + ", _method " + std::to_string(off_blob_method_) +
                  (namesUsable() ? "; names from VMStructs (sizeof(ConstantPool) " + std::to_string(cp_size_) + ")"
                                 : "; names from JVMTI (a VMStructs field or type is missing)");
  return s;
}

long VmStructs::field(const std::vector<std::pair<std::string, std::string>>& names) const {
  for (const auto& [type, fld] : names) {
    for (const Entry& e : entries_)
      if (!e.is_static && e.type == type && e.field == fld) return long(e.offset);
  }
  return -1;
}

// CodeCache::_heaps: GrowableArray<CodeHeap*>*; each CodeHeap's VirtualSpace _memory
// gives its reserved range [_low_boundary, _high_boundary). Read once the code cache
// exists (VMInit). The reserved range, not the committed one, which grows: a heap
// commits from its low boundary up, so between the boundary and any live code address
// everything is committed, and the scan only reads below live code.
std::string VmStructs::readHeaps() {
  heaps_.clear();
  heap_objects_.clear();
  void* heaps_addr = nullptr;
  for (const Entry& e : entries_)
    if (e.is_static && e.type == "CodeCache" && e.field == "_heaps") heaps_addr = e.address;
  const long len_off = field({{"GrowableArrayBase", "_len"}, {"GenericGrowableArray", "_len"}});
  const long data_off = field({{"GrowableArray<int>", "_data"}});
  const long low_off = field({{"VirtualSpace", "_low_boundary"}});
  const long high_off = field({{"VirtualSpace", "_high_boundary"}});
  if (heaps_addr == nullptr || len_off < 0 || data_off < 0 || off_heap_memory_ < 0 || low_off < 0 || high_off < 0)
    return "code heap bounds not in VMStructs (no blob scan)";
  const uintptr_t array = *static_cast<const uintptr_t*>(heaps_addr);
  if (array == 0) return "CodeCache::_heaps is empty";
  const int len = readAt<int>(array, len_off);
  const uintptr_t data = readAt<uintptr_t>(array, data_off);
  for (int i = 0; i < len && i < 16; ++i) {
    const uintptr_t heap = readAt<uintptr_t>(data, long(i) * long(sizeof(uintptr_t)));
    heap_objects_.push_back(heap);
    const uintptr_t vs = heap + uintptr_t(off_heap_memory_);
    heaps_.emplace_back(readAt<uintptr_t>(vs, low_off), readAt<uintptr_t>(vs, high_off));
  }
  return std::to_string(heaps_.size()) + " code heaps";
}

bool VmStructs::inHeap(uintptr_t a, uintptr_t* low) const noexcept {
  for (auto [lo, hi] : heaps_) {
    if (a >= lo && a < hi) {
      *low = lo;
      return true;
    }
  }
  return false;
}

VmStructs::Level VmStructs::fromBlob(uintptr_t blob) const noexcept {
  Level l;
  l.level = readAt<int>(blob, off_comp_level_);
  l.osr = off_entry_bci_ >= 0 && readAt<int>(blob, off_entry_bci_) != kInvocationEntryBci;
  return l;
}

VmStructs::Level VmStructs::levelOf(const void* jmethod_id, const void* code) const noexcept {
  Level unknown;
  if (!usable() || jmethod_id == nullptr) return unknown;
  const uintptr_t c = reinterpret_cast<uintptr_t>(code);
  const uintptr_t method = *static_cast<const uintptr_t*>(jmethod_id);  // jmethodID is a Method**
  if (method == 0) return unknown;
  const uintptr_t nm = readAt<uintptr_t>(method, off_method_code_);
  if (nm != 0 && readAt<uintptr_t>(nm, off_code_begin_) == c) {
    Level l = fromBlob(nm);
    l.source = Source::kMethodCode;
    if (l.level >= 0 && l.level <= 4) return l;
  }
  uintptr_t low = 0;
  if (off_blob_method_ < 0 || !inHeap(c, &low)) return unknown;
  // The blob starts at a lower address of the same heap: committed memory only.
  const uintptr_t stop = c - low > kMaxScan ? c - kMaxScan : low;
  // A header is at least 64 bytes before its code; step by 8 (blobs are aligned more).
  for (uintptr_t a = (c - 64) & ~uintptr_t(7); a >= stop && a > 64; a -= 8) {
    // The header whose _code_begin is this exact address and whose _method is this
    // method. (Other header fields, such as entry points, may hold the address too.)
    if (readAt<uintptr_t>(a, off_code_begin_) == c && readAt<uintptr_t>(a, off_blob_method_) == method) {
      Level l = fromBlob(a);
      if (l.level < 0 || l.level > 4) continue;
      l.source = Source::kBlobScan;
      return l;
    }
  }
  return unknown;
}

bool VmStructs::symbolAt(uintptr_t symbol, std::string_view* out) const noexcept {
  if (symbol == 0) return false;
  const auto n = readAt<uint16_t>(symbol, off_sym_length_);
  if (n == 0) return false;
  *out = std::string_view(reinterpret_cast<const char*>(symbol + uintptr_t(off_sym_body_)), n);
  return true;
}

bool VmStructs::poolOf(const void* jmethod_id, uintptr_t* cm, uintptr_t* cp, int* length) const noexcept {
  if (!namesUsable() || jmethod_id == nullptr) return false;
  const uintptr_t method = *static_cast<const uintptr_t*>(jmethod_id);  // jmethodID is a Method**
  if (method == 0) return false;
  *cm = readAt<uintptr_t>(method, off_const_method_);
  if (*cm == 0) return false;
  *cp = readAt<uintptr_t>(*cm, off_cm_constants_);
  if (*cp == 0) return false;
  *length = readAt<int>(*cp, off_cp_length_);
  return *length > 0;
}

// The Symbol* slot `index` of the pool (ConstantPool::base() follows the header), for a
// Utf8 entry; index 0 is never one.
bool VmStructs::poolSymbol(uintptr_t cp, int length, unsigned index, std::string_view* out) const noexcept {
  if (index == 0 || int(index) >= length) return false;
  return symbolAt(readAt<uintptr_t>(cp + uintptr_t(cp_size_), long(index) * 8), out);
}

bool VmStructs::namesOf(const void* jmethod_id, Names* out) const noexcept {
  uintptr_t cm = 0, cp = 0;
  int length = 0;
  if (!poolOf(jmethod_id, &cm, &cp, &length)) return false;
  const auto holder = readAt<uintptr_t>(cp, off_cp_holder_);
  return holder != 0 && poolSymbol(cp, length, readAt<uint16_t>(cm, off_cm_name_index_), &out->name) &&
         poolSymbol(cp, length, readAt<uint16_t>(cm, off_cm_signature_index_), &out->signature) &&
         symbolAt(readAt<uintptr_t>(holder, off_klass_name_), &out->klass);
}

bool VmStructs::sourceOf(const void* jmethod_id, std::string_view* package, std::string_view* file) const noexcept {
  uintptr_t cm = 0, cp = 0;
  int length = 0;
  if (off_cp_source_ < 0 || !poolOf(jmethod_id, &cm, &cp, &length)) return false;
  const auto holder = readAt<uintptr_t>(cp, off_cp_holder_);
  std::string_view klass;
  if (holder == 0 || !symbolAt(readAt<uintptr_t>(holder, off_klass_name_), &klass) ||
      !poolSymbol(cp, length, readAt<uint16_t>(cp, off_cp_source_), file))
    return false;
  const size_t slash = klass.rfind('/');
  *package = slash == std::string_view::npos ? std::string_view() : klass.substr(0, slash + 1);
  return true;
}

std::string VmStructs::scanMissing() const {
  std::string m;
  const std::pair<const char*, long> need[] = {{"Method::_code", off_method_code_},
                                               {"CodeBlob::_code_begin", off_code_begin_},
                                               {"CodeBlob::_code_end", off_code_end_},
                                               {"CodeBlob::_name", off_blob_name_},
                                               {"CodeBlob::_size", off_blob_size_},
                                               {"nmethod::_compile_id", off_compile_id_},
                                               {"nmethod::_state", off_state_},
                                               {"nmethod::_comp_level", off_comp_level_},
                                               {"nmethod::_entry_bci", off_entry_bci_},
                                               {"CompiledMethod::_method", off_blob_method_},
                                               {"ConstMethod::_method_idnum", off_cm_idnum_},
                                               {"InstanceKlass::_methods_jmethod_ids", off_jmethod_ids_},
                                               {"HeapBlock::Header::_used", off_block_used_},
                                               {"sizeof(HeapBlock)", heap_block_size_},
                                               {"CodeHeap::_memory", off_heap_memory_},
                                               {"CodeHeap::_segmap", off_heap_segmap_},
                                               {"CodeHeap::_log2_segment_size", off_heap_log2_},
                                               {"VirtualSpace::_low", off_vs_low_},
                                               {"VirtualSpace::_high", off_vs_high_}};
  for (const auto& [name, off] : need)
    if (off < 0) m += std::string(m.empty() ? "" : ", ") + name;
  if (heap_objects_.empty()) m += std::string(m.empty() ? "" : ", ") + "the code heaps (CodeCache::_heaps)";
  if (m.empty() && !namesUsable()) m = "the names' fields";
  return m;
}

std::string VmStructs::readScanHeaps(bool* all) {
  scan_heaps_.clear();
  *all = false;
  if (!scanMissing().empty()) return "not read: fields missing";
  uint64_t bytes = 0;
  for (const uintptr_t heap : heap_objects_) {
    const uintptr_t mem = heap + uintptr_t(off_heap_memory_), seg = heap + uintptr_t(off_heap_segmap_);
    ScanHeap h{};
    h.low = readAt<uintptr_t>(mem, off_vs_low_);
    const uintptr_t high = readAt<uintptr_t>(mem, off_vs_high_);
    h.segmap = readAt<uintptr_t>(seg, off_vs_low_);
    const uintptr_t segmap_high = readAt<uintptr_t>(seg, off_vs_high_);
    h.log2_segment = readAt<int>(heap, off_heap_log2_);
    if (h.low == 0 || high < h.low || h.segmap == 0 || h.log2_segment < 4 || h.log2_segment > 16) continue;
    // Only segments that both the heap and its map have committed.
    h.segments = std::min((high - h.low) >> h.log2_segment, segmap_high - h.segmap);
    bytes += high - h.low;
    scan_heaps_.push_back(h);
  }
  *all = !scan_heaps_.empty() && scan_heaps_.size() == heap_objects_.size();
  return std::to_string(scan_heaps_.size()) + " of " + std::to_string(heap_objects_.size()) + " code heaps, " +
         std::to_string(bytes >> 10) + " KiB committed";
}

namespace {
// /proc/self/mem, opened once (safeReadsWork): a pread of an unmapped address fails
// (EIO) instead of faulting. Not process_vm_readv: a seccomp filter that kills on the
// "@debug" syscalls (systemd's SystemCallFilter=~@debug) would end the JVM; open and
// pread are in every profile.
int g_self_mem = -1;
// Reads n bytes at addr of this process without faulting: false when any is unmapped.
bool safeRead(uintptr_t addr, void* out, size_t n) noexcept {
  return addr != 0 && g_self_mem >= 0 && addr <= uintptr_t(INT64_MAX) - n &&
         pread(g_self_mem, out, n, off_t(addr)) == ssize_t(n);
}
template <class T>
bool safeAt(uintptr_t base, long off, T* v) noexcept {
  return safeRead(base + uintptr_t(off), v, sizeof *v);
}
}  // namespace

bool VmStructs::safeReadsWork() noexcept {
  if (g_self_mem < 0) g_self_mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
  static const uint64_t probe = 0x6a6974707276;  // any mapped value
  uint64_t v = 0;
  return safeRead(reinterpret_cast<uintptr_t>(&probe), &v, sizeof v) && v == probe;
}

bool VmStructs::readNmethod(uintptr_t blob, Nmethod* out) const noexcept {
  const auto name = readAt<uintptr_t>(blob, off_blob_name_);
  if (name == 0) return false;
  if (name != nmethod_names_[0] && name != nmethod_names_[1]) {
    if (std::find(other_names_.begin(), other_names_.end(), name) != other_names_.end()) return false;
    // A blob's name is a string of libjvm.so's; read safely, once per address. A native
    // method's wrapper is a "native nmethod".
    char text[15] = {};
    const bool read = safeRead(name, text, 8);
    const bool compiled = read && std::memcmp(text, "nmethod", 8) == 0;
    if (!compiled && !(safeRead(name, text, 15) && std::memcmp(text, "native nmethod", 15) == 0)) {
      // Known not to be one only when read: a failed read is tried again at the next.
      if (read && other_names_.size() < 4096) other_names_.push_back(name);
      return false;
    }
    nmethod_names_[compiled ? 0 : 1] = name;
  }
  // The state and compile id first and again last: an nmethod under construction (its
  // CodeBlob fields written, its own not yet: init_defaults() sets not_installed) or
  // changing while read is not taken for one in use.
  out->state = readVolatile<int8_t>(blob, off_state_);
  out->compile_id = readVolatile<int>(blob, off_compile_id_);
  std::atomic_thread_fence(std::memory_order_acquire);
  const int size = readAt<int>(blob, off_blob_size_);
  out->blob = blob;
  out->method = readAt<uintptr_t>(blob, off_blob_method_);
  out->code_begin = readAt<uintptr_t>(blob, off_code_begin_);
  out->code_end = readAt<uintptr_t>(blob, off_code_end_);
  const int entry_bci = off_entry_bci_ >= 0 ? readAt<int>(blob, off_entry_bci_) : kInvocationEntryBci;
  out->level.level = readAt<int>(blob, off_comp_level_);
  out->level.osr = entry_bci != kInvocationEntryBci;  // as fromBlob, from the one read
  std::atomic_thread_fence(std::memory_order_acquire);
  if (readVolatile<int8_t>(blob, off_state_) != out->state ||
      readVolatile<int>(blob, off_compile_id_) != out->compile_id)
    return false;
  return size > 0 && out->compile_id > 0 && out->method != 0 && out->code_begin > blob &&
         out->code_end > out->code_begin && out->code_end <= blob + uintptr_t(size) && out->level.level >= 0 &&
         out->level.level <= 4 && entry_bci >= kInvocationEntryBci && entry_bci <= 65535;
}

bool VmStructs::stillAlive(const Nmethod& n) const noexcept {
  const auto state = readAt<int8_t>(n.blob, off_state_);
  return alive(state) && readAt<int>(n.blob, off_compile_id_) == n.compile_id &&
         readAt<uintptr_t>(n.blob, off_blob_method_) == n.method &&
         readAt<uintptr_t>(n.blob, off_code_begin_) == n.code_begin &&
         readAt<uintptr_t>(n.blob, off_code_end_) == n.code_end;
}

uintptr_t VmStructs::holderOf(uintptr_t method) const noexcept {
  if (method == 0 || off_const_method_ < 0 || off_cm_constants_ < 0 || off_cp_holder_ < 0) return 0;
  const auto cm = readAt<uintptr_t>(method, off_const_method_);
  const auto cp = cm != 0 ? readAt<uintptr_t>(cm, off_cm_constants_) : 0;
  return cp != 0 ? readAt<uintptr_t>(cp, off_cp_holder_) : 0;
}

bool VmStructs::safeJmethodId(uintptr_t method, uintptr_t* holder, uintptr_t* jmid) const noexcept {
  uintptr_t cm = 0, cp = 0, ids = 0;
  uint16_t idnum = 0;
  size_t count = 0;
  if (!safeAt(method, off_const_method_, &cm) || !safeAt(cm, off_cm_constants_, &cp) ||
      !safeAt(cm, off_cm_idnum_, &idnum) || !safeAt(cp, off_cp_holder_, holder) ||
      !safeAt(*holder, off_jmethod_ids_, &ids))
    return false;
  if (ids == 0 || !safeAt(ids, 0, &count)) count = 0;  // [0]: the array's length
  *jmid = 0;                                           // none yet for this idnum: the holder alone was read
  if (size_t(idnum) + 1 <= count && !safeAt(ids, long(idnum + 1) * long(sizeof(uintptr_t)), jmid)) *jmid = 0;
  return true;
}

}  // namespace jitprov::jvmti
