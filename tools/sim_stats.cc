#include "sim_stats.h"

#include <cstdio>
#include <fstream>

namespace jitprov::sim {

void JitCounters::note(Errc e) noexcept {
  if (e == Errc::kMethodUnloaded || e == Errc::kVersionGone || e == Errc::kUnknownVersion) {
    lost_races.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (errors.fetch_add(1, std::memory_order_relaxed) < 10)
    std::fprintf(stderr, "jitprov-sim: runtime API error: %s\n", errcMessage(e));
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
nlohmann::json histToJson(const HistSnapshot& h) {
  // Buckets trimmed after the last non-zero one; bucket i holds [2^(i-1), 2^i) ns.
  int last = -1;
  for (int i = 0; i < kHistBuckets; ++i)
    if (h.buckets[i] != 0) last = i;
  std::vector<uint64_t> b(h.buckets.begin(), h.buckets.begin() + (last + 1));
  return {{"count", h.count},
          {"total_ns", h.total_ns},
          {"max_ns", h.max_ns},
          {"p50_ns", h.quantileUpperBound(0.50)},
          {"p99_ns", h.quantileUpperBound(0.99)},
          {"log2_buckets", b}};
}
}  // namespace

nlohmann::json lockStatsToJson(const LockStatsSnapshot& s) {
  nlohmann::json sites = nlohmann::json::object();
  uint64_t jit_max[2] = {0, 0};
  uint64_t jit_count[2] = {0, 0};
  for (int site = 1; site <= kLockSiteMax; ++site) {
    nlohmann::json j;
    j["site"] = site;
    for (int r = 0; r < 2; ++r) {
      const SiteSnapshot& ss = s.sites[r][site];
      j[r ? "rundown" : "outside"] = {{"wait", histToJson(ss.wait)}, {"hold", histToJson(ss.hold)}};
      if (site <= int(LockSite::kUnload)) {
        jit_max[r] = std::max(jit_max[r], ss.wait.max_ns);
        jit_count[r] += ss.wait.count;
      }
    }
    sites[std::string(lockSiteName(static_cast<LockSite>(site)))] = j;
  }
  return {{"sites", sites},
          {"jit_wait", {{"outside", {{"count", jit_count[0]}, {"max_ns", jit_max[0]}}},
                        {"rundown", {{"count", jit_count[1]}, {"max_ns", jit_max[1]}}}}}};
}

nlohmann::json rundownsToJson(const std::vector<RundownResult>& rs) {
  nlohmann::json a = nlohmann::json::array();
  for (const RundownResult& r : rs) {
    a.push_back({{"rundown_id", r.rundown_id},
                 {"mode", std::string(rundownModeName(r.mode))},
                 {"trigger", std::string(rundownTriggerName(r.trigger))},
                 {"traced", r.traced},
                 {"method_count", r.method_count},
                 {"modules", r.modules},
                 {"methods", r.methods},
                 {"versions", r.versions},
                 {"skipped", r.skipped},
                 {"retried", r.retried},
                 {"begin_ns", r.begin_ns},
                 {"duration_ns", r.duration_ns}});
  }
  return a;
}

nlohmann::json jitToJson(const JitCounters& c) {
  nlohmann::json compiled = nlohmann::json::object();
  for (int t = 0; t < kTierCount; ++t)
    compiled[std::string(tierName(static_cast<Tier>(t)))] = c.compiled[t].load(std::memory_order_relaxed);
  const JitSummary s = c.summary();
  return {{"calls", s.calls},
          {"compiled", compiled},
          {"rejit_requests", c.rejits.load(std::memory_order_relaxed)},
          {"module_unloads", c.unloads.load(std::memory_order_relaxed)},
          {"lost_races_with_unload", s.lost_races},
          {"errors", s.errors}};
}

bool writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return false;
    f << text;
    if (!f.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace jitprov::sim
