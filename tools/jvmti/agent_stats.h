/* SPDX-License-Identifier: MIT */
// The JVM agent's statistics: the callbacks' duration histograms and the stats= file
// (JSON, written at VM death; docs/jvm-agent.md).
#pragma once

#include <jitprov/hist.h>

#include <algorithm>
#include <cstdint>

namespace jitprov::jvmti {

// A log2 histogram of callback durations, for the stats file (the trace ABI's buckets).
struct Hist {
  uint64_t count = 0, total_ns = 0, max_ns = 0;
  uint64_t buckets[kHistBuckets] = {};
  void add(uint64_t ns) {
    ++count;
    total_ns += ns;
    max_ns = std::max(max_ns, ns);
    ++buckets[log2Bucket(ns)];
  }
  uint64_t quantile(double q) const { return log2QuantileUpperBound(buckets, kHistBuckets, count, max_ns, q); }
};

struct Agent;

// Writes the agent's counters to the stats= file, if one was asked for. Takes Agent::mu.
void writeStats(Agent& a);

}  // namespace jitprov::jvmti
