/* SPDX-License-Identifier: MIT */
// Log2 histograms of nanoseconds, as the trace ABI counts them (JITPROV_HIST_BUCKETS):
// bucket i counts values v with 2^(i-1) <= v < 2^i, bucket 0 counts 0, the last bucket
// everything above. Part of the common library.
#pragma once

#include <jitprov/trace_abi.h>

#include <array>
#include <cstdint>

namespace jitprov {

inline constexpr int kHistBuckets = JITPROV_HIST_BUCKETS;

// The bucket of `ns` (inline: the lock records one per acquisition).
constexpr int log2Bucket(uint64_t ns) noexcept {
  const int b = ns == 0 ? 0 : 64 - __builtin_clzll(ns);
  return b < kHistBuckets ? b : kHistBuckets - 1;
}

// Upper bound of the bucket holding the q-quantile (0 < q <= 1) of `count` values
// counted in `buckets[0..n)`, in ns, never above `max_ns`; 0 when count is 0.
uint64_t log2QuantileUpperBound(const uint64_t* buckets, int n, uint64_t count, uint64_t max_ns, double q) noexcept;

struct HistSnapshot {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  std::array<uint64_t, kHistBuckets> buckets{};
  // Upper bound of the bucket holding the q-quantile (0 < q <= 1), in ns.
  uint64_t quantileUpperBound(double q) const noexcept {
    return log2QuantileUpperBound(buckets.data(), kHistBuckets, count, max_ns, q);
  }
};

}  // namespace jitprov
