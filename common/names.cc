// SPDX-License-Identifier: MIT
#include <jitprov/names.h>

#include <initializer_list>
#include <iterator>

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
static_assert(kSiteNames[kRundownSite] == "rundown" && kSiteNames[kLastJitSite] == "unload" &&
                  kSiteNames[kFirstJitSite] == "tier0_publish",
              "trace_abi.h: the site ranges name the sites they mean");
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

std::string_view lockSiteOrUnknown(int site) noexcept {
  if (site == 0 || site == JITPROV_BLOCKED_BY_UNKNOWN) return "unknown";
  return site > 0 && site <= kLockSiteMax ? kSiteNames[site] : "invalid";
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

}  // namespace jitprov
