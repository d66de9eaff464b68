// SPDX-License-Identifier: MIT
#include <jitprov/hist.h>

namespace jitprov {

uint64_t log2QuantileUpperBound(const uint64_t* buckets, int n, uint64_t count, uint64_t max_ns, double q) noexcept {
  if (count == 0) return 0;
  const double target = q * double(count);
  uint64_t seen = 0;
  for (int i = 0; i < n; ++i) {
    seen += buckets[i];
    if (double(seen) >= target) {
      const uint64_t upper = i == 0 ? 0 : (uint64_t{1} << i) - 1;
      return upper < max_ns ? upper : max_ns;
    }
  }
  return max_ns;
}

}  // namespace jitprov
