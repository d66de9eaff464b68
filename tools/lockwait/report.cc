// SPDX-License-Identifier: MIT
#include "report.h"

#include <jitprov/hist.h>
#include <jitprov/names.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace jitprov::lw {

lw_blame jitBlockedByRundown(const Totals& t) {
  lw_blame r{};
  for (int w = jitprov::kFirstJitSite; w <= jitprov::kLastJitSite; ++w) {
    const lw_blame& b = t.blame[w * LW_SITES + jitprov::kRundownSite];
    r.count += b.count;
    r.total_ns += b.total_ns;
    r.max_ns = std::max(r.max_ns, b.max_ns);
  }
  return r;
}

void addHist(lw_hist* into, const lw_hist& h) {
  into->count += h.count;
  into->total_ns += h.total_ns;
  if (h.max_ns > into->max_ns) into->max_ns = h.max_ns;
  for (int i = 0; i < LW_BUCKETS; ++i) into->buckets[i] += h.buckets[i];
}

namespace {
// a - b, except max, which is the interval's only if it grew (else unknown: keep a's).
lw_hist minus(const lw_hist& a, const lw_hist& b) {
  lw_hist r = a;
  r.count -= b.count;
  r.total_ns -= b.total_ns;
  for (int i = 0; i < LW_BUCKETS; ++i) r.buckets[i] -= b.buckets[i];
  if (r.count == 0) r.max_ns = 0;
  return r;
}

uint64_t quantile(const lw_hist& h, double q) {
  std::array<uint64_t, LW_BUCKETS> b;
  std::copy(h.buckets, h.buckets + LW_BUCKETS, b.begin());
  return jitprov::log2QuantileUpperBound(b.data(), LW_BUCKETS, h.count, h.max_ns, q);
}

nlohmann::json histJson(const lw_hist& h) {
  int last = -1;
  for (int i = 0; i < LW_BUCKETS; ++i)
    if (h.buckets[i]) last = i;
  return {{"count", h.count},
          {"total_ns", h.total_ns},
          {"max_ns", h.max_ns},
          {"p50_ns", quantile(h, 0.5)},
          {"p99_ns", quantile(h, 0.99)},
          {"log2_buckets", std::vector<unsigned long long>(h.buckets, h.buckets + last + 1)}};
}

// The `drops` map's counters, as reported. "unmeasured": an acquisition or a JIT path
// that began before the tool attached, so the runtime had not timed it: reported apart,
// not a loss. "drops": a hit whose arguments could not be used, or a wait record the ring
// buffer had no room for (--waits), a loss (exit 3).
struct Counter {
  const char* group;
  const char* name;
};
const Counter kCounters[LW_DROP_KINDS] = {
    {"unmeasured", "lock"}, {"unmeasured", "jit"}, {"drops", "bad_argument"}, {"drops", "wait_records"}};

std::string siteName(int site) { return std::string(jitprov::lockSiteOrUnknown(site)); }

nlohmann::json blameJson(const lw_blame& b) {
  return {{"count", b.count}, {"total_ns", b.total_ns}, {"max_ns", b.max_ns}};
}

void printHist(const char* title, const lw_hist& h) {
  if (h.count == 0) return;
  std::printf("    %-5s count %llu  total %.3f ms  mean %.1f us  max %.1f us\n", title, h.count,
              double(h.total_ns) / 1e6, double(h.total_ns) / double(h.count) / 1e3, double(h.max_ns) / 1e3);
  int first = -1, last = -1;
  unsigned long long peak = 0;
  for (int i = 0; i < LW_BUCKETS; ++i) {
    if (h.buckets[i] == 0) continue;
    if (first < 0) first = i;
    last = i;
    peak = std::max(peak, h.buckets[i]);
  }
  for (int i = first; i >= 0 && i <= last; ++i) {
    const unsigned long long lo = i == 0 ? 0 : 1ULL << (i - 1);
    const unsigned long long hi = i == 0 ? 0 : (1ULL << i) - 1;
    const int bar = int(40 * h.buckets[i] / peak);
    std::printf("      %10llu -> %-10llu ns : %-10llu |%-40s|\n", lo, hi, h.buckets[i], std::string(bar, '*').c_str());
  }
}

}  // namespace

Totals delta(const Totals& now, const Totals& prev) {
  Totals d;
  for (size_t k = 0; k < now.sites.size(); ++k) {
    d.sites[k].wait = minus(now.sites[k].wait, prev.sites[k].wait);
    d.sites[k].hold = minus(now.sites[k].hold, prev.sites[k].hold);
  }
  for (size_t k = 0; k < now.jit.size(); ++k) d.jit[k] = minus(now.jit[k], prev.jit[k]);
  for (size_t k = 0; k < now.drops.size(); ++k) d.drops[k] = now.drops[k] - prev.drops[k];
  for (size_t k = 0; k < now.blame.size(); ++k) {
    d.blame[k] = now.blame[k];
    d.blame[k].count -= prev.blame[k].count;
    d.blame[k].total_ns -= prev.blame[k].total_ns;
    if (d.blame[k].count == 0) d.blame[k].max_ns = 0;  // else: the maximum since attaching
  }
  return d;
}

bool isLoss(int kind) { return kind == LW_BAD_ARG || kind == LW_WAIT_RECORD_LOST; }

nlohmann::json toJson(const Totals& t, double seconds, bool waits) {
  nlohmann::json sites = nlohmann::json::object();
  for (int site = 1; site < LW_SITES; ++site) {
    nlohmann::json j;
    for (int r = 0; r < 2; ++r) {
      const lw_site& s = t.sites[r * LW_SITES + site];
      j[r ? "rundown" : "outside"] = {{"wait", histJson(s.wait)}, {"hold", histJson(s.hold)}};
    }
    // Its contended waits by the site that held the lock when each began ("unknown": the
    // holder was between its acquisition and storing its site).
    nlohmann::json by = nlohmann::json::object();
    for (int h = 0; h < LW_SITES; ++h) {
      const lw_blame& b = t.blame[site * LW_SITES + h];
      if (b.count != 0) by[siteName(h)] = blameJson(b);
    }
    j["blocked_by"] = by;
    sites[std::string(jitprov::lockSiteName(static_cast<jitprov::LockSite>(site)))] = j;
  }
  nlohmann::json jit = nlohmann::json::object();
  for (int tier = 0; tier < LW_TIERS; ++tier) {
    jit[std::string(jitprov::tierName(static_cast<jitprov::Tier>(tier)))] = {
        {"outside", histJson(t.jit[tier])}, {"rundown", histJson(t.jit[LW_TIERS + tier])}};
  }
  nlohmann::json j = {{"seconds", seconds},
                      {"sites", sites},
                      {"jit_path", jit},
                      {"jit_blocked_by_rundown", blameJson(jitBlockedByRundown(t))},
                      {"drops", nlohmann::json::object()},
                      {"unmeasured", nlohmann::json::object()}};
  for (int k = 0; k < LW_DROP_KINDS; ++k)
    if (waits || k != LW_WAIT_RECORD_LOST) j[kCounters[k].group][kCounters[k].name] = t.drops[k];
  return j;
}

void printHuman(const Totals& t, double seconds, bool waits) {
  std::printf("jitprov-lockwait: %.1f s\n", seconds);
  for (int r = 0; r < 2; ++r) {
    bool any = false;
    for (int site = 1; site < LW_SITES; ++site) {
      const lw_site& s = t.sites[r * LW_SITES + site];
      if (s.wait.count == 0 && s.hold.count == 0) continue;
      if (!any) std::printf("%s:\n", r ? "during a rundown" : "outside rundowns");
      any = true;
      std::printf("  site %d %s\n", site,
                  std::string(jitprov::lockSiteName(static_cast<jitprov::LockSite>(site))).c_str());
      printHist("wait", s.wait);
      printHist("hold", s.hold);
    }
  }
  for (int r = 0; r < 2; ++r) {
    for (int tier = 0; tier < LW_TIERS; ++tier) {
      const lw_hist& h = t.jit[r * LW_TIERS + tier];
      if (h.count == 0) continue;
      std::printf("JIT path %s (%s):\n", std::string(jitprov::tierName(static_cast<jitprov::Tier>(tier))).c_str(),
                  r ? "a rundown ran during it" : "no rundown during it");
      printHist("jit", h);
    }
  }
  std::printf("waits by the site that held the lock when they began:\n");
  for (int w = 1; w < LW_SITES; ++w) {
    for (int h = 0; h < LW_SITES; ++h) {
      const lw_blame& b = t.blame[w * LW_SITES + h];
      if (b.count == 0) continue;
      std::printf("  %-14s blocked by %-14s count %llu  total %.3f ms  max %.1f us\n", siteName(w).c_str(),
                  siteName(h).c_str(), b.count, double(b.total_ns) / 1e6, double(b.max_ns) / 1e3);
    }
  }
  const lw_blame jb = jitBlockedByRundown(t);
  std::printf("JIT time blocked by the rundown: %.3f ms (%llu waits, max %.1f us)\n", double(jb.total_ns) / 1e6,
              jb.count, double(jb.max_ns) / 1e3);
  std::printf("drops: bad_argument %llu", (unsigned long long)t.drops[LW_BAD_ARG]);
  if (waits) std::printf(", wait_records %llu", (unsigned long long)t.drops[LW_WAIT_RECORD_LOST]);
  std::printf("\n");
  std::printf("unmeasured (begun before attaching): lock %llu, jit %llu\n",
              (unsigned long long)t.drops[LW_UNMEASURED_LOCK], (unsigned long long)t.drops[LW_UNMEASURED_JIT]);
}

}  // namespace jitprov::lw
