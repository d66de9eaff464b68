// SPDX-License-Identifier: MIT
#include "catchup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "clr_abi.h"
#include "clr_events.h"
#include "clr_names.h"
#include "images.h"

namespace jitprov::dotnet {
namespace {

constexpr int kNameUnits = 1024;

// Names as CoreCLR's method events give them: the class as CoreCLR's type printer
// writes a method's MethodTable ("Ns.Outer+Inner`1[System.__Canon]"), the method's
// metadata name, its signature (clr_names.h).
class Namer {
 public:
  explicit Namer(void* info) : info_(info) {}
  ~Namer() {
    for (auto& [m, mdi] : mdi_)
      if (mdi != nullptr) comCall<uint32_t>(mdi, kInfoRelease);
  }
  Namer(const Namer&) = delete;
  Namer& operator=(const Namer&) = delete;

  void* importer(uint64_t module) {
    auto [it, fresh] = mdi_.emplace(module, nullptr);
    if (fresh) {
      void* unk = nullptr;
      if (comCall<HRESULT>(info_, kInfoGetModuleMetaData, module, uint32_t(0), &kIidMetaDataImport, &unk) == kOk)
        it->second = unk;
    }
    return it->second;
  }

  std::string typeDefName(void* mdi, uint32_t td, int depth = 0) {
    char16_t buf[kNameUnits];
    uint32_t len = 0, flags = 0, extends = 0;
    if (comCall<HRESULT>(mdi, kMdGetTypeDefProps, td, buf, uint32_t(kNameUnits), &len, &flags, &extends) != kOk)
      return "<UNKNOWN>";
    std::string name = utf16ToUtf8(buf, len > 0 && len <= kNameUnits ? len - 1 : 0);
    uint32_t enclosing = 0;
    if (depth < 16 && comCall<HRESULT>(mdi, kMdGetNestedClassProps, td, &enclosing) == kOk && enclosing != 0)
      return typeDefName(mdi, enclosing, depth + 1) + "+" + name;
    return name;
  }

  // A token of a signature: TypeDef or TypeRef, by its own (namespace-qualified) name.
  std::string tokenName(void* mdi, uint32_t tk) {
    char16_t buf[kNameUnits];
    uint32_t len = 0, flags = 0, other = 0;
    HRESULT hr = kFail;
    if ((tk >> 24) == 0x02)
      hr = comCall<HRESULT>(mdi, kMdGetTypeDefProps, tk, buf, uint32_t(kNameUnits), &len, &flags, &other);
    else if ((tk >> 24) == 0x01)
      hr = comCall<HRESULT>(mdi, kMdGetTypeRefProps, tk, &other, buf, uint32_t(kNameUnits), &len);
    if (hr != kOk) return "<UNKNOWN>";
    return utf16ToUtf8(buf, len > 0 && len <= kNameUnits ? len - 1 : 0);
  }

  std::string className(uint64_t cls, int depth = 0) {
    if (auto it = classes_.find(cls); it != classes_.end()) return it->second;
    std::string name = depth > 16 ? "<UNKNOWN>" : classNameOf(cls, depth);
    classes_.emplace(cls, name);
    return name;
  }

  // false: the method could not be named (counted by the caller).
  bool method(uint64_t cls, uint64_t module, uint32_t token, CaughtBody* b) {
    void* mdi = importer(module);
    if (mdi == nullptr) return false;
    uint32_t td = 0, len = 0, attr = 0, sig_len = 0, rva = 0, impl = 0;
    const uint8_t* sig = nullptr;
    char16_t buf[kNameUnits];
    if (comCall<HRESULT>(mdi, kMdGetMethodProps, token, &td, buf, uint32_t(kNameUnits), &len, &attr, &sig, &sig_len,
                         &rva, &impl) != kOk)
      return false;
    b->name = utf16ToUtf8(buf, len > 0 && len <= kNameUnits ? len - 1 : 0);
    b->name_space = cls != 0 ? className(cls) : typeDefName(mdi, td);
    SigNames names;
    names.type_name = [this, mdi](uint32_t tk) { return tokenName(mdi, tk); };
    names.type_spec = [mdi](uint32_t tk, const uint8_t** s, size_t* n) {
      uint32_t l = 0;
      if (comCall<HRESULT>(mdi, kMdGetTypeSpecFromToken, tk, s, &l) != kOk) return false;
      *n = l;
      return true;
    };
    return formatMethodSig(sig, sig_len, names, &b->signature);
  }

 private:
  std::string classNameOf(uint64_t cls, int depth) {
    int32_t elem = 0;
    uint64_t elem_cls = 0;
    uint32_t rank = 0;
    if (comCall<HRESULT>(info_, kInfoIsArrayClass, cls, &elem, &elem_cls, &rank) == kOk) {  // S_FALSE: not one
      std::string e = elem_cls != 0 ? className(elem_cls, depth + 1) : primitive(elem);
      return e + (rank <= 1 ? "[]" : "[" + std::string(rank - 1, ',') + "]");
    }
    uint64_t module = 0, parent = 0;
    uint32_t td = 0, nargs = 0;
    uint64_t args[32];
    if (comCall<HRESULT>(info_, kInfoGetClassIDInfo2, cls, &module, &td, &parent, uint32_t(32), &nargs, args) != kOk)
      return "<UNKNOWN>";
    void* mdi = importer(module);
    std::string name = mdi != nullptr ? typeDefName(mdi, td) : "<UNKNOWN>";
    if (nargs > 0 && nargs <= 32) {
      name += "[";
      for (uint32_t i = 0; i < nargs; ++i) name += (i ? "," : "") + className(args[i], depth + 1);
      name += "]";
    }
    return name;
  }

  static std::string primitive(int32_t et) {
    switch (et) {
      case 0x02:
        return "System.Boolean";
      case 0x03:
        return "System.Char";
      case 0x04:
        return "System.SByte";
      case 0x05:
        return "System.Byte";
      case 0x06:
        return "System.Int16";
      case 0x07:
        return "System.UInt16";
      case 0x08:
        return "System.Int32";
      case 0x09:
        return "System.UInt32";
      case 0x0A:
        return "System.Int64";
      case 0x0B:
        return "System.UInt64";
      case 0x0C:
        return "System.Single";
      case 0x0D:
        return "System.Double";
      case 0x0E:
        return "System.String";
      case 0x18:
        return "System.IntPtr";
      case 0x19:
        return "System.UIntPtr";
      case 0x1C:
        return "System.Object";
      default:
        return "<UNKNOWN>";
    }
  }

  void* info_;
  std::unordered_map<uint64_t, void*> mdi_;  // ModuleID -> IMetaDataImport
  std::unordered_map<uint64_t, std::string> classes_;
};

// catchup_delay_ms (tests only): delay_ms, then until an unload (a collectible module, or
// a method: CoreCLR reports most collectible code by its module only) has left a
// tombstone since the resolution, or kCatchUpUnloadWaitMs more have passed.
void waitForAnUnload(Mirror& mirror, uint32_t delay_ms) {
  using std::chrono::milliseconds;
  const uint64_t before = mirror.unloadsSeen();
  const auto until = std::chrono::steady_clock::now() + milliseconds(delay_ms);
  const auto give_up = until + milliseconds(kCatchUpUnloadWaitMs);
  std::this_thread::sleep_until(until);
  while (mirror.unloadsSeen() == before && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(milliseconds(20));
}

constexpr int kMaxTypeArgs = 32, kMaxTypeDepth = 16;

// The modules of a class and of everything it is made of (its type arguments, an array's
// element type), recursively: CoreCLR allocates a type or an instantiated method in the
// LoaderAllocator of one of its parts' modules (the most collectible one), so a
// MethodDesc can only be freed by the unload of one of these. false: not all of them
// could be read.
bool addClassModules(void* info, uint64_t cls, std::vector<uint64_t>* out, int depth = 0) {
  if (cls == 0) return true;
  if (depth > kMaxTypeDepth) return false;
  int32_t elem = 0;
  uint64_t elem_cls = 0;
  uint32_t rank = 0;
  if (comCall<HRESULT>(info, kInfoIsArrayClass, cls, &elem, &elem_cls, &rank) == kOk)  // S_FALSE: not one
    return addClassModules(info, elem_cls, out, depth + 1);
  uint64_t module = 0, parent = 0;
  uint32_t td = 0, nargs = 0;
  uint64_t args[kMaxTypeArgs];
  const HRESULT hr =
      comCall<HRESULT>(info, kInfoGetClassIDInfo2, cls, &module, &td, &parent, uint32_t(kMaxTypeArgs), &nargs, args);
  if (hr != kOk || nargs > uint32_t(kMaxTypeArgs)) return false;
  out->push_back(module);
  for (uint32_t i = 0; i < nargs; ++i)
    if (!addClassModules(info, args[i], out, depth + 1)) return false;
  return true;
}

// An enumerated method, resolved while no context it may belong to can be freed.
struct Resolved {
  uint64_t fid = 0, cls = 0, module = 0;
  uint32_t token = 0;
  uint32_t elements = 0;  // its bodies in the enumeration
  bool ok = false;
  std::vector<uint64_t> modules;  // every module whose unload can free its MethodDesc
};

Resolved resolve(void* info, uint64_t fid) {
  Resolved r;
  r.fid = fid;
  uint32_t nargs = 0;
  uint64_t args[kMaxTypeArgs];
  if (comCall<HRESULT>(info, kInfoGetFunctionInfo2, fid, uint64_t(0), &r.cls, &r.module, &r.token,
                       uint32_t(kMaxTypeArgs), &nargs, args) != kOk ||
      nargs > uint32_t(kMaxTypeArgs))
    return r;
  r.modules.push_back(r.module);
  if (!addClassModules(info, r.cls, &r.modules)) return r;
  for (uint32_t i = 0; i < nargs; ++i)
    if (!addClassModules(info, args[i], &r.modules)) return r;
  std::sort(r.modules.begin(), r.modules.end());
  r.modules.erase(std::unique(r.modules.begin(), r.modules.end()), r.modules.end());
  r.ok = true;
  return r;
}

// The gate closed for one method's turn, opened again at its end however it ends.
class GateHold {
 public:
  explicit GateHold(Mirror& m) : m_(m) { m_.closeGate(); }
  ~GateHold() { m_.openGate(); }
  GateHold(const GateHold&) = delete;
  GateHold& operator=(const GateHold&) = delete;

 private:
  Mirror& m_;
};

}  // namespace

std::vector<uint64_t> methodModules(void* info, uint64_t fid) {
  Resolved r = resolve(info, fid);
  return r.ok ? std::move(r.modules) : std::vector<uint64_t>();
}

// Why nothing the catch-up reads is freed under it (the attach's SIGSEGV in
// GetFunctionInfo2 of a freed MethodDesc, 2026-12). CoreCLR unloads a collectible
// context on its finalizer thread (loaderallocator.cpp, LoaderAllocator::GCLoaderAllocators)
// in this order: (1) its events (eventtrace.cpp, IterateCollectibleLoaderAllocator):
// MethodUnloadVerbose for the bodies its code heaps hold that are their methods' current
// code, then ModuleUnload per module, with no lock of CoreCLR's held by then;
// (2) its assemblies and modules deleted; (3) its code heaps removed
// (ExecutionManager::Unload; on 10.0 deferred while a code heap iterator is counted,
// codeman.cpp); (4) the LoaderAllocator and its loader heaps (the MethodDescs and
// MethodTables) freed. Most collectible code gets no MethodUnloadVerbose at all (only a
// method's current code does), so a FunctionID enumerated before an unload is known
// dead by its context's ModuleUnload only, and a FunctionID alone does not say which
// context that is. Hence:
//   - the gate (mirror.h) holds every ModuleUnload callback from before the session
//     starts to the end of the resolution: the enumeration and, for every FunctionID,
//     GetFunctionInfo2 and the modules of its class and type arguments (the modules
//     whose contexts can own its MethodDesc), all read while no context whose unload
//     the session saw can reach (2);
//   - each method's turn later closes the gate again, checks the tombstones of those
//     modules (and of the FunctionID and its code), and only then reads it: its names
//     from the metadata, GetNativeCodeStartAddresses, GetCodeInfo4, and publishes it; an
//     unload raised meanwhile waits in the gate until the turn ends.
// The catch-up calls into CoreCLR with the gate closed: a ModuleUnload waiting in it
// holds no lock of CoreCLR's (its code heap iterator is gone by then, and no teardown
// step has begun), so nothing the catch-up calls waits for it. It never calls into
// CoreCLR holding the catch-up mutex, which MethodUnloadVerbose callbacks take and which
// CoreCLR may raise with its code heap lock held (9.0; on 10.0 the iterator only counts
// itself): EnumJITedFunctions walks those heaps, GetNativeCodeStartAddresses takes the
// code versions' lock, GetCodeInfo4 the ExecutionManager's reader lock.
// Left open: a context whose ModuleUnload came before the session existed and whose
// memory is freed while the catch-up resolves (a window of CoreCLR's own teardown at
// the attach's moment, a few milliseconds), and on 10.0 code heaps whose removal was
// deferred by another code heap walk (a CoreCLR rundown) and still listed after their
// context was freed: the enumeration itself then reads freed MethodDescs inside CoreCLR
// (docs/dotnet.md, "Attach" and "CoreCLR's rundown and collectible code"). The
// enumeration is not retried: a retry after an unload met the first walk would walk
// heaps whose removal that walk deferred.
CatchUpResult catchUp(void* info, Mirror& mirror, const CatchUpTestHooks& hooks) {
  CatchUpResult r;
  const auto t0 = std::chrono::steady_clock::now();
  Counters& c = mirror.counters();
  std::vector<Resolved> methods;
  {
    // The gate is closed since beginCatchUp: it opens when this block ends.
    struct Open {
      Mirror& m;
      ~Open() { m.openGate(); }
    } open{mirror};
    void* en = nullptr;
    if (comCall<HRESULT>(info, kInfoEnumJITedFunctions, &en) != kOk || en == nullptr) {
      c.caught_errors.fetch_add(1, std::memory_order_relaxed);
      return r;
    }
    std::vector<uint64_t> order;  // FunctionIDs, first sight first
    std::unordered_map<uint64_t, uint32_t> seen;
    PrfFunction batch[256];
    for (;;) {
      uint32_t got = 0;
      const HRESULT hr = comCall<HRESULT>(en, kFunctionEnumNext, uint32_t(256), batch, &got);
      for (uint32_t i = 0; i < got && i < 256; ++i) {
        ++r.elements;
        if (seen[batch[i].function_id]++ == 0) order.push_back(batch[i].function_id);
      }
      if (hr != kOk || got == 0) break;
    }
    comCall<uint32_t>(en, kInfoRelease);
    r.functions = order.size();
    methods.reserve(order.size());
    for (const uint64_t fid : order) {
      methods.push_back(resolve(info, fid));
      methods.back().elements = seen[fid];
    }
    r.resolve_ns =
        uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  // Tests only (catchup_delay_ms=): unloads land between the resolution and the
  // publications, where only the tombstones keep them from being read or undone. A
  // fixed delay alone let none land on a loaded machine (0 of 8 901 once), so it then
  // waits on for the first unload after the resolution.
  if (hooks.delay_ms != 0) waitForAnUnload(mirror, hooks.delay_ms);

  const ImageRanges images = ImageRanges::ofSelf();
  Namer namer(info);
  std::vector<uint64_t> addrs(64);
  for (const Resolved& m : methods) {
    if (!m.ok) {
      c.caught_errors.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const GateHold gate(mirror);                // no context of the method freed until its turn ends
    if (mirror.anyModuleUnloaded(m.modules)) {  // before anything dereferences it
      c.caught_unloaded.fetch_add(m.elements, std::memory_order_relaxed);
      continue;
    }
    {
      const std::unique_lock<std::mutex> hold = mirror.holdUnloads();
      if (mirror.functionUnloaded(m.fid)) {
        c.caught_unloaded.fetch_add(m.elements, std::memory_order_relaxed);
        continue;
      }
    }
    CaughtBody b;
    b.method_id = m.fid;
    b.module_id = m.module;
    b.token = m.token;
    if (!namer.method(m.cls, m.module, m.token, &b)) {
      c.caught_errors.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    uint32_t n = 0;
    if (comCall<HRESULT>(info, kInfoGetNativeCodeStartAddresses, m.fid, uint64_t(0), uint32_t(addrs.size()), &n,
                         addrs.data()) != kOk) {
      c.caught_errors.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    n = std::min<uint32_t>(n, uint32_t(addrs.size()));
    if (n == 0) continue;
    // CoreCLR lists the default native code version first (tier 0, or precompiled
    // code), then the explicit ones newest first, numbered from 1 in their order of
    // creation: ids n-1 .. 1 (an inference from codeversion.cpp, not an API).
    const bool r2r = images.contains(addrs[0]);  // precompiled default code: not JIT'd, not mirrored
    if (r2r) c.caught_r2r.fetch_add(1, std::memory_order_relaxed);
    // Oldest first, so that the newest is published last and made the active one.
    std::vector<std::pair<uint64_t, uint32_t>> versions;  // address, version id
    if (!r2r) versions.emplace_back(addrs[0], 0);
    for (uint32_t i = n - 1; i >= 1; --i) versions.emplace_back(addrs[i], n - i);
    std::vector<CaughtBody> bodies;
    for (size_t i = 0; i < versions.size(); ++i) {
      PrfCodeInfo ci[4];
      uint32_t parts = 0;
      if (comCall<HRESULT>(info, kInfoGetCodeInfo4, versions[i].first, uint32_t(4), &parts, ci) != kOk || parts == 0) {
        c.caught_errors.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (parts > 1) c.cold_parts.fetch_add(parts - 1, std::memory_order_relaxed);
      b.start = versions[i].first;
      b.size = uint32_t(ci[0].size);
      b.host_version = versions[i].second;
      b.tier = b.host_version == 0 ? JITPROV_TIER0 : JITPROV_TIER1;
      b.activate = i + 1 == versions.size();
      bodies.push_back(b);
    }
    // The checks and the publications with the gate closed and the mutex held: an
    // unload either came before (a tombstone, the body skipped) or waits (and undoes
    // the publication).
    const std::unique_lock<std::mutex> hold = mirror.holdUnloads();
    for (const CaughtBody& body : bodies) mirror.publishCaught(body);
  }
  r.ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  return r;
}

}  // namespace jitprov::dotnet
