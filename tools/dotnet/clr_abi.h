/* SPDX-License-Identifier: MIT */
// The slice of CoreCLR's profiling ABI (Linux x64) the client uses, declared here from
// the interface definitions' published facts (interface ids, vtable slot order, flag
// values, struct layouts): COM on Linux x64 is the SysV calling convention with `this`
// first, vtables are arrays of function pointers in declaration order, IUnknown's three
// methods first. Only the slots the client calls or implements are named; every other
// callback slot answers S_OK (docs/dotnet.md).
#pragma once

#include <cstdint>
#include <cstring>

namespace jitprov::dotnet {

using HRESULT = int32_t;
constexpr HRESULT kOk = 0;
constexpr HRESULT kNoInterface = int32_t(0x80004002u);
constexpr HRESULT kFail = int32_t(0x80004005u);
constexpr HRESULT kClassNotAvailable = int32_t(0x80040111u);

struct Guid {
  uint32_t d1;
  uint16_t d2, d3;
  uint8_t d4[8];
  bool operator==(const Guid& o) const { return std::memcmp(this, &o, sizeof o) == 0; }
};

constexpr Guid kIidUnknown{0x00000000, 0x0000, 0x0000, {0xC0, 0, 0, 0, 0, 0, 0, 0x46}};
constexpr Guid kIidClassFactory{0x00000001, 0x0000, 0x0000, {0xC0, 0, 0, 0, 0, 0, 0, 0x46}};
// ICorProfilerCallback .. ICorProfilerCallback10: the runtime asks for each.
constexpr Guid kIidCallbacks[] = {
    {0x176FBED1, 0xA55C, 0x4796, {0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8, 0x83, 0xE7}},
    {0x8A8CC829, 0xCCF2, 0x49FE, {0xBB, 0xAE, 0x0F, 0x02, 0x22, 0x28, 0x07, 0x1A}},
    {0x4FD2ED52, 0x7731, 0x4B8D, {0x94, 0x69, 0x03, 0xD2, 0xCC, 0x30, 0x86, 0xC5}},
    {0x7B63B2E3, 0x107D, 0x4D48, {0xB2, 0xF6, 0xF6, 0x1E, 0x22, 0x94, 0x70, 0xD2}},
    {0x8DFBA405, 0x8C9F, 0x45F8, {0xBF, 0xFA, 0x83, 0xB1, 0x4C, 0xEF, 0x78, 0xB5}},
    {0xFC13DF4B, 0x4448, 0x4F4F, {0x95, 0x0C, 0xBA, 0x8D, 0x19, 0xD0, 0x0C, 0x36}},
    {0xF76A2DBA, 0x1D52, 0x4539, {0x86, 0x6C, 0x2A, 0xA5, 0x18, 0xF9, 0xEF, 0xC3}},
    {0x5BED9B15, 0xC079, 0x4D47, {0xBF, 0xE2, 0x21, 0x5A, 0x14, 0x0C, 0x07, 0xE0}},
    {0x27583EC3, 0xC8F5, 0x482F, {0x80, 0x52, 0x19, 0x4B, 0x8C, 0xE4, 0x70, 0x5A}},
    {0xCEC5B60E, 0xC69C, 0x495F, {0x87, 0xF6, 0x84, 0xD2, 0x8E, 0xE1, 0x6F, 0xFB}},
};
constexpr Guid kIidInfo12{0x27B24CCD, 0x1CB1, 0x47C5, {0x96, 0xEE, 0x98, 0x19, 0x0D, 0xC3, 0x09, 0x59}};

// Callback vtable (ICorProfilerCallback10: 97 slots).
constexpr int kCallbackSlots = 97;
constexpr int kSlotQueryInterface = 0, kSlotAddRef = 1, kSlotRelease = 2;
constexpr int kSlotInitialize = 3, kSlotShutdown = 4;
// ICorProfilerCallback3: an attach (InitializeForAttach instead of Initialize).
constexpr int kSlotInitializeForAttach = 80, kSlotProfilerAttachComplete = 81;
constexpr int kSlotEventPipeEventDelivered = 95, kSlotEventPipeProviderCreated = 96;
// IClassFactory: CreateInstance 3, LockServer 4.
constexpr int kSlotCreateInstance = 3, kSlotLockServer = 4;

// ICorProfilerInfo12 slots called.
constexpr int kInfoRelease = 2;
constexpr int kInfoIsArrayClass = 11;
constexpr int kInfoGetModuleMetaData = 21;
constexpr int kInfoGetFunctionInfo2 = 38;
constexpr int kInfoGetClassIDInfo2 = 41;
constexpr int kInfoEnumJITedFunctions = 57;
constexpr int kInfoGetNativeCodeStartAddresses = 90;
constexpr int kInfoGetCodeInfo4 = 92;
constexpr int kInfoGetModuleInfo2 = 70;
constexpr int kInfoSetEventMask2 = 82;
constexpr int kInfoGetRuntimeInformation = 67;
constexpr int kInfoEventPipeStartSession = 101;
constexpr int kInfoEventPipeStopSession = 103;

// ICorProfilerFunctionEnum: Next(celt, COR_PRF_FUNCTION[], fetched).
constexpr int kFunctionEnumNext = 7;
struct PrfFunction {  // COR_PRF_FUNCTION
  uint64_t function_id;
  uint64_t rejit_id;
};
struct PrfCodeInfo {  // COR_PRF_CODE_INFO
  uint64_t start;
  uint64_t size;
};

// IMetaDataImport, {7DAC8207-D3AE-4C75-9B67-92801A497D44}, and the slots read.
constexpr Guid kIidMetaDataImport{0x7DAC8207, 0xD3AE, 0x4C75, {0x9B, 0x67, 0x92, 0x80, 0x1A, 0x49, 0x7D, 0x44}};
constexpr int kMdGetTypeDefProps = 12, kMdGetTypeRefProps = 14, kMdGetMethodProps = 30;
constexpr int kMdGetTypeSpecFromToken = 44, kMdGetNestedClassProps = 62;

constexpr uint32_t kHighMonitorEventPipe = 0x80;
constexpr uint32_t kModuleFlagCollectible = 0x8;  // COR_PRF_MODULE_COLLECTIBLE

struct EventPipeProviderConfig {  // COR_PRF_EVENTPIPE_PROVIDER_CONFIG, 32 bytes
  const char16_t* provider_name;
  uint64_t keywords;
  uint32_t level;
  const char16_t* filter_data;
};
static_assert(sizeof(EventPipeProviderConfig) == 32);

// The runtime provider's events the client reads (id, keyword).
constexpr uint32_t kEvMethodLoadVerbose = 143, kEvMethodUnloadVerbose = 144;
constexpr uint32_t kEvModuleLoad = 152, kEvModuleUnload = 153;
constexpr uint32_t kEvR2RGetEntryPoint = 159;
constexpr uint64_t kKeywordLoader = 0x8, kKeywordJit = 0x10;
constexpr uint64_t kKeywordCompilationDiagnostic = 0x2000000000;
constexpr uint32_t kLevelVerbose = 5;

// MethodFlags of the method events.
constexpr uint32_t kMethodDynamic = 0x1;
constexpr uint32_t kMethodGeneric = 0x2, kMethodSharedGeneric = 0x4;
constexpr uint32_t kMethodJitted = 0x8;
constexpr uint32_t kMethodColdPart = 0x10000000;
constexpr int kTierShift = 7;
constexpr uint32_t kTierMask = 0x7;
// CoreCLR's optimization tiers ((flags >> 7) & 7).
enum ClrTier : uint32_t {
  kClrTierUnknown = 0,
  kClrTierMinOpt = 1,
  kClrTierOptimized = 2,
  kClrTierQuick = 3,  // tier 0
  kClrTierTier1 = 4,
  kClrTierTier1Osr = 5,
  kClrTierInstrumented = 6,
  kClrTierInstrumentedOptimized = 7,
};

// Calls slot `slot` of COM object `obj` (this first, SysV).
template <typename R, typename... A>
R comCall(void* obj, int slot, A... a) {
  auto vtbl = *static_cast<void* const* const*>(obj);
  return reinterpret_cast<R (*)(void*, A...)>(vtbl[slot])(obj, a...);
}

}  // namespace jitprov::dotnet
