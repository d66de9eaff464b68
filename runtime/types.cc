// SPDX-License-Identifier: MIT
#include <jitprov/result.h>
#include <jitprov/types.h>

#include <initializer_list>

namespace jitprov {

namespace {
// The labels, indexed by value, from trace_abi.h; the asserts below check that every
// list is dense from its first value, so that indexing by value is right.
#define JITPROV_LABEL(v, c, cxx, label) label,
constexpr std::string_view kTierNames[] = {JITPROV_TIERS(JITPROV_LABEL)};
constexpr std::string_view kSiteNames[] = {"none", JITPROV_LOCK_SITE_LIST(JITPROV_LABEL)};
constexpr std::string_view kModeNames[] = {JITPROV_RUNDOWN_MODES(JITPROV_LABEL)};
constexpr std::string_view kTriggerNames[] = {JITPROV_RUNDOWN_TRIGGERS(JITPROV_LABEL)};
#undef JITPROV_LABEL
// Each list's labels sit at the index of their value (the lists are dense).
struct Entry {
  size_t value;
  std::string_view label;
};
template <size_t N>
constexpr bool atTheirValues(const std::string_view (&names)[N], std::initializer_list<Entry> list) {
  for (const Entry& e : list)
    if (e.value >= N || names[e.value] != e.label) return false;
  return true;
}
#define JITPROV_ENTRY(v, c, cxx, label) Entry{v, label},
static_assert(atTheirValues(kTierNames, {JITPROV_TIERS(JITPROV_ENTRY)}) &&
                  atTheirValues(kSiteNames, {JITPROV_LOCK_SITE_LIST(JITPROV_ENTRY)}) &&
                  atTheirValues(kModeNames, {JITPROV_RUNDOWN_MODES(JITPROV_ENTRY)}) &&
                  atTheirValues(kTriggerNames, {JITPROV_RUNDOWN_TRIGGERS(JITPROV_ENTRY)}),
              "trace_abi.h: every list's values are 0..n-1 (sites 1..n), in order");
#undef JITPROV_ENTRY
static_assert(std::size(kTierNames) == kTierCount && std::size(kSiteNames) == kLockSiteMax + 1);
}  // namespace

std::string_view tierName(Tier t) noexcept {
  const auto i = static_cast<size_t>(t);
  return i < kTierCount ? kTierNames[i] : "invalid";
}

bool parseTier(std::string_view s, Tier* out) noexcept {
  for (int i = 0; i < kTierCount; ++i) {
    if (s == kTierNames[i]) {
      *out = static_cast<Tier>(i);
      return true;
    }
  }
  return false;
}

std::string_view lockSiteName(LockSite s) noexcept {
  const auto i = static_cast<size_t>(s);
  return i <= kLockSiteMax ? kSiteNames[i] : "invalid";
}

std::string_view rundownModeName(RundownMode m) noexcept {
  const auto i = static_cast<size_t>(m);
  return i < std::size(kModeNames) ? kModeNames[i] : "invalid";
}

bool parseRundownMode(std::string_view s, RundownMode* out) noexcept {
  for (size_t i = 0; i < std::size(kModeNames); ++i) {
    if (s == kModeNames[i]) {
      *out = static_cast<RundownMode>(i);
      return true;
    }
  }
  return false;
}

std::string_view rundownTriggerName(RundownTrigger t) noexcept {
  const auto i = static_cast<size_t>(t);
  return i < std::size(kTriggerNames) ? kTriggerNames[i] : "invalid";
}

const char* errcMessage(Errc e) noexcept {
  switch (e) {
    case Errc::kOk:
      return "ok";
    case Errc::kUnknownModule:
      return "unknown module id";
    case Errc::kUnknownMethod:
      return "unknown method id";
    case Errc::kUnknownVersion:
      return "unknown code version id";
    case Errc::kModuleUnloaded:
      return "module is unloaded";
    case Errc::kMethodUnloaded:
      return "method is unloaded";
    case Errc::kNotCollectible:
      return "module is not collectible";
    case Errc::kAlreadyPublished:
      return "code version is already published";
    case Errc::kNotPublished:
      return "code version has no published code";
    case Errc::kZeroCodeSize:
      return "code size is zero";
    case Errc::kInvalidUtf8:
      return "name is not valid UTF-8 or contains NUL";
    case Errc::kNameTooLong:
      return "name is longer than 64 KiB";
    case Errc::kInvalidArgument:
      return "invalid argument";
    case Errc::kCapacityExhausted:
      return "a system resource (thread, file descriptor) is exhausted";
    case Errc::kCodeHeapExhausted:
      return "code heap exhausted";
    case Errc::kBusy:
      return "busy";
    case Errc::kAlreadyExists:
      return "a method with this host key is already registered";
    case Errc::kRangeOverlap:
      return "code range overlaps live code of another version";
    case Errc::kVersionGone:
      return "code version was retired or its method unloaded";
    case Errc::kWrongCodeMode:
      return "call does not match the runtime's code mode (host or model heap)";
    case Errc::kOutOfMemory:
      return "out of memory";
    case Errc::kInternal:
      return "internal error in jitprov";
    case Errc::kTooManyModules:
      return "too many modules: 1048575 live or awaiting reclamation is the registry's limit";
    case Errc::kTooManyMethods:
      return "too many methods: 67108863 live or awaiting reclamation is the registry's limit";
    case Errc::kTooManyVersions:
      return "too many native code versions: 268435455 live or awaiting reclamation is the registry's limit";
  }
  return "unknown error";
}

}  // namespace jitprov
