/* SPDX-License-Identifier: MIT */
// The JVM agent's statistics: the callbacks' duration histograms and the stats= file
// (JSON, written at VM death; docs/jvm-agent.md).
#pragma once

#include <algorithm>
#include <cstdint>

namespace jitprov::jvmti {

// A log2 histogram of callback durations, for the stats file.
struct Hist {
  uint64_t count = 0, total_ns = 0, max_ns = 0;
  uint64_t buckets[40] = {};
  void add(uint64_t ns) {
    ++count;
    total_ns += ns;
    max_ns = std::max(max_ns, ns);
    int b = 0;
    while (b < 39 && (uint64_t{1} << b) <= ns) ++b;
    ++buckets[b];
  }
  uint64_t quantile(double q) const {
    uint64_t seen = 0;
    for (int b = 0; b < 40; ++b) {
      seen += buckets[b];
      if (count != 0 && double(seen) >= q * double(count)) return std::min(max_ns, (uint64_t{1} << b) - 1);
    }
    return max_ns;
  }
};

struct Agent;

// Writes the agent's counters to the stats= file, if one was asked for. Takes Agent::mu.
void writeStats(Agent& a);

}  // namespace jitprov::jvmti
