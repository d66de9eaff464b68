/* SPDX-License-Identifier: MIT */
// jitprov-lockwait's figures: the sums of the BPF maps (Totals), their difference over
// an interval, and the report, human or JSON (docs/spec.md "jitprov-lockwait").
#pragma once

#include "lockwait.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>

namespace jitprov::lw {

// The per-CPU maps summed (cumulative since attaching).
struct Totals {
  std::array<lw_site, 2 * LW_SITES> sites{};
  std::array<lw_hist, 2 * LW_TIERS> jit{};
  std::array<uint64_t, LW_DROP_KINDS> drops{};
  std::array<lw_blame, LW_SITES * LW_SITES> blame{};  // [waiting site][holder site]
};

// into += h (max: the larger).
void addHist(lw_hist* into, const lw_hist& h);
// now - prev: counts over the interval; maxima since attaching unless none in it.
Totals delta(const Totals& now, const Totals& prev);
// "JIT time blocked by the rundown": waits of the JIT paths that began while the
// rundown held the lock (only the locked and per-method modes ever take it).
lw_blame jitBlockedByRundown(const Totals& t);
// Whether a `drops` counter counts lost samples (exit 3), not unmeasured ones.
bool isLoss(int kind);

// `waits`: --waits is on (its drop counter is reported, else left out).
nlohmann::json toJson(const Totals& t, double seconds, bool waits);
void printHuman(const Totals& t, double seconds, bool waits);

}  // namespace jitprov::lw
