/* SPDX-License-Identifier: MIT */
// The trace ABI's enumerations as C++ enums, and their names (trace_abi.h has the values
// and labels). The numeric values are trace ABI (they appear in CTF traces and USDT
// probe arguments): never renumber them, only append. Part of the common library.
#pragma once

#include <jitprov/trace_abi.h>

#include <cstdint>
#include <string_view>

namespace jitprov {

enum class Tier : uint8_t { JITPROV_TIERS(JITPROV_ABI_CXX_ENUMERATOR) };
inline constexpr int kTierCount = JITPROV_TIER_COUNT;
std::string_view tierName(Tier t) noexcept;  // "tier0", "tier1", "tier1_osr", ...
bool parseTier(std::string_view s, Tier* out) noexcept;

enum class LockSite : uint8_t { JITPROV_LOCK_SITE_LIST(JITPROV_ABI_CXX_ENUMERATOR) };
inline constexpr int kLockSiteMax = JITPROV_LOCK_SITE_MAX;
// The JIT paths' sites are kFirstJitSite..kLastJitSite; the rundown's is kRundownSite.
inline constexpr int kFirstJitSite = JITPROV_JIT_SITE_FIRST, kLastJitSite = JITPROV_JIT_SITE_LAST,
                     kRundownSite = JITPROV_RUNDOWN_SITE;
static_assert(kFirstJitSite == int(LockSite::kTier0Publish) && kLastJitSite == int(LockSite::kUnload) &&
                  kRundownSite == int(LockSite::kRundown),
              "trace_abi.h: the site ranges agree with the site list");
std::string_view lockSiteName(LockSite s) noexcept;  // "tier0_publish", ...; 0: "none"
// A lock site's name by its number, "unknown" for 0 or JITPROV_BLOCKED_BY_UNKNOWN (a
// holder whose site is unknown), "invalid" for anything else outside the list.
std::string_view lockSiteOrUnknown(int site) noexcept;

enum class RundownMode : uint8_t { JITPROV_RUNDOWN_MODES(JITPROV_ABI_CXX_ENUMERATOR) };
std::string_view rundownModeName(RundownMode m) noexcept;  // "lockfree", "locked", "per-method"
bool parseRundownMode(std::string_view s, RundownMode* out) noexcept;

enum class RundownTrigger : uint8_t { JITPROV_RUNDOWN_TRIGGERS(JITPROV_ABI_CXX_ENUMERATOR) };
std::string_view rundownTriggerName(RundownTrigger t) noexcept;

}  // namespace jitprov
