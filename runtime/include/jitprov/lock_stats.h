/* SPDX-License-Identifier: MIT */
// In-process statistics of the code-version-manager lock: per site, and split by
// "during a rundown" / "outside", the count, total, maximum and log2 histogram of the
// time spent waiting for the lock and holding it.
#pragma once

#include <jitprov/types.h>

#include <array>
#include <cstdint>

namespace jitprov {

// Bucket i counts values v (nanoseconds) with 2^(i-1) <= v < 2^i; bucket 0 counts 0.
inline constexpr int kHistBuckets = 48;

struct HistSnapshot {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  std::array<uint64_t, kHistBuckets> buckets{};
  // Upper bound of the bucket holding the q-quantile (0 < q <= 1), in ns.
  uint64_t quantileUpperBound(double q) const noexcept;
};

struct SiteSnapshot {
  HistSnapshot wait;
  HistSnapshot hold;
};

struct LockStatsSnapshot {
  // [in_rundown][site]; index 0 of the site dimension is unused.
  std::array<std::array<SiteSnapshot, kLockSiteMax + 1>, 2> sites;
};

int log2Bucket(uint64_t ns) noexcept;

}  // namespace jitprov
