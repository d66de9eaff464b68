/* SPDX-License-Identifier: MIT */
// jitprov-sim's counters and its --stats-json output. The simulator is a host of the
// public C API (jitprov/jitprov.h) only, like any runtime that embeds libjitprov.
#pragma once

#include <jitprov/jitprov.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace jitprov::sim {

inline constexpr int kTiers = JITPROV_TIER_OPTIMIZED + 1;

struct JitSummary {
  uint64_t calls = 0, compiles = 0, errors = 0, lost_races = 0;
};

// Relaxed counters: statistics, read after the threads stopped or as a snapshot.
struct JitCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> compiled[kTiers] = {};
  std::atomic<uint64_t> compiled_warm[kTiers] = {};  // of them, before ready (the warm start)
  std::atomic<uint64_t> rejits{0}, unloads{0}, retired{0};
  std::atomic<uint64_t> lost_races{0};  // a JIT path that met an unload: expected
  std::atomic<uint64_t> errors{0};      // anything else: a bug, printed and fails the run
  // Counts a jitprov_error from a JIT path.
  void note(int error) noexcept;
  JitSummary summary() const noexcept;
};

// Per site (1..8, by name), split "outside" / "rundown": wait and hold histograms
// (count, total_ns, max_ns, p50_ns, p99_ns, log2 buckets), and the JIT paths' (sites
// 1-6) maximum wait outside and during rundowns.
nlohmann::json lockStatsToJson(const jitprov_lock_stats& s);
nlohmann::json rundownsToJson(const std::vector<jitprov_rundown_result>& r);
nlohmann::json jitToJson(const JitCounters& c);

}  // namespace jitprov::sim
