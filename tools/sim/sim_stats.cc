// SPDX-License-Identifier: MIT
#include "sim_stats.h"

#include <jitprov/hist.h>

#include <cstdio>
#include <fstream>

namespace jitprov::sim {

void JitCounters::note(int e) noexcept {
  if (e == JITPROV_E_METHOD_UNLOADED || e == JITPROV_E_VERSION_GONE || e == JITPROV_E_UNKNOWN_VERSION) {
    lost_races.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (errors.fetch_add(1, std::memory_order_relaxed) < 10)
    std::fprintf(stderr, "jitprov-sim: runtime API error: %s\n", jitprov_strerror(e));
}

JitSummary JitCounters::summary() const noexcept {
  JitSummary s;
  s.calls = calls.load(std::memory_order_relaxed);
  for (const auto& c : compiled) s.compiles += c.load(std::memory_order_relaxed);
  s.errors = errors.load(std::memory_order_relaxed);
  s.lost_races = lost_races.load(std::memory_order_relaxed);
  return s;
}

namespace {
// Upper bound of the bucket holding the q-quantile (0 < q <= 1), in ns.
uint64_t quantileUpperBound(const jitprov_hist& h, double q) {
  return log2QuantileUpperBound(h.buckets, JITPROV_HIST_BUCKETS, h.count, h.max_ns, q);
}

nlohmann::json histToJson(const jitprov_hist& h) {
  // Buckets trimmed after the last non-zero one; bucket i holds [2^(i-1), 2^i) ns.
  int last = -1;
  for (int i = 0; i < JITPROV_HIST_BUCKETS; ++i)
    if (h.buckets[i] != 0) last = i;
  std::vector<uint64_t> b(h.buckets, h.buckets + (last + 1));
  return {{"count", h.count},
          {"total_ns", h.total_ns},
          {"max_ns", h.max_ns},
          {"p50_ns", quantileUpperBound(h, 0.50)},
          {"p99_ns", quantileUpperBound(h, 0.99)},
          {"log2_buckets", b}};
}
}  // namespace

nlohmann::json lockStatsToJson(const jitprov_lock_stats& s) {
  nlohmann::json sites = nlohmann::json::object();
  uint64_t jit_max[2] = {0, 0};
  uint64_t jit_count[2] = {0, 0};
  for (int site = 1; site < JITPROV_LOCK_SITES; ++site) {
    nlohmann::json j;
    j["site"] = site;
    for (int r = 0; r < 2; ++r) {
      j[r ? "rundown" : "outside"] = {{"wait", histToJson(s.wait[r][site])}, {"hold", histToJson(s.hold[r][site])}};
      if (site >= JITPROV_JIT_SITE_FIRST && site <= JITPROV_JIT_SITE_LAST) {
        jit_max[r] = std::max(jit_max[r], s.wait[r][site].max_ns);
        jit_count[r] += s.wait[r][site].count;
      }
    }
    sites[jitprov_lock_site_name(site)] = j;
  }
  return {{"sites", sites},
          {"jit_wait",
           {{"outside", {{"count", jit_count[0]}, {"max_ns", jit_max[0]}}},
            {"rundown", {{"count", jit_count[1]}, {"max_ns", jit_max[1]}}}}}};
}

nlohmann::json rundownsToJson(const std::vector<jitprov_rundown_result>& rs) {
  nlohmann::json a = nlohmann::json::array();
  for (const jitprov_rundown_result& r : rs) {
    a.push_back({{"rundown_id", r.rundown_id},
                 {"mode", jitprov_rundown_mode_name(int(r.mode))},
                 {"trigger", jitprov_rundown_trigger_name(int(r.trigger))},
                 {"traced", r.traced != 0},
                 {"method_count", r.method_count},
                 {"modules", r.modules},
                 {"methods", r.methods},
                 {"versions", r.versions},
                 {"skipped", r.skipped},
                 {"retried", r.retried},
                 {"begin_ns", r.begin_ns},
                 {"duration_ns", r.duration_ns},
                 {"sessions", r.sessions},
                 {"begin_seq", r.begin_seq},
                 {"publish_seq", r.publish_seq},
                 {"end_seq", r.end_seq},
                 {"caught_up", r.caught_up},
                 {"catch_up_ns", r.catch_up_ns},
                 {"cut_short", r.cut_short != 0}});
  }
  return a;
}

nlohmann::json jitToJson(const JitCounters& c) {
  nlohmann::json compiled = nlohmann::json::object(), warm = nlohmann::json::object();
  for (int t = 0; t < kTiers; ++t) {
    compiled[jitprov_tier_name(t)] = c.compiled[t].load(std::memory_order_relaxed);
    warm[jitprov_tier_name(t)] = c.compiled_warm[t].load(std::memory_order_relaxed);
  }
  const JitSummary s = c.summary();
  return {{"calls", s.calls},
          {"compiled", compiled},
          {"compiled_before_ready", warm},
          {"rejit_requests", c.rejits.load(std::memory_order_relaxed)},
          {"module_unloads", c.unloads.load(std::memory_order_relaxed)},
          {"versions_retired", c.retired.load(std::memory_order_relaxed)},
          {"lost_races_with_unload", s.lost_races},
          {"errors", s.errors}};
}

}  // namespace jitprov::sim
