/* SPDX-License-Identifier: MIT */
// In-process statistics of the code-version-manager lock: per site, and split by
// "during a rundown" / "outside", the count, total, maximum and log2 histogram of the
// time spent waiting for the lock and holding it.
#pragma once

#include <jitprov/hist.h>
#include <jitprov/types.h>

#include <array>
#include <cstdint>

namespace jitprov {

// HistSnapshot, kHistBuckets and log2Bucket(): jitprov/hist.h (the common library).

struct SiteSnapshot {
  HistSnapshot wait;
  HistSnapshot hold;
};

struct LockStatsSnapshot {
  // [in_rundown][site]; index 0 of the site dimension is unused.
  std::array<std::array<SiteSnapshot, kLockSiteMax + 1>, 2> sites;
};

}  // namespace jitprov
