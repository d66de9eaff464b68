// SPDX-License-Identifier: MIT
// The churn soak (issue: "runs for weeks"): code comes and goes at a high rate around a
// live set of constant size, for more registrations than ids were ever available before
// slots were reused (1 048 575 modules, 67 M methods, 268 M native versions).
//
// One cycle: the oldest module of the live set is unloaded; a new collectible module is
// registered with --methods methods; each method is compiled --versions times (tier 0,
// then tier 1 again and again), every new version activated and the one it replaces
// retired, so each method has one live version. The live set is --live modules.
//
// --max-backlog: RuntimeConfig::max_reclamation_backlog (default here 16384; 0: none, the
// runtime's default). Printed: the rate (cycles, and registrations of each kind per
// second), and, after the
// warm-up (--warmup cycles) and at the end, the process RSS, the registry's own memory
// accounting and the time of a lock-free walk of the live set (median of 31, ns per
// version), with the end / warm-up ratios; and the physical floor measured in the same
// run (an uncontended lock pair around a 56-byte allocation and its free, as
// jitprov-bench-registry's BM_FloorTwoLocksAndNode). Exit 1 if any registration failed.
//
// Compiles against the C++ API of earlier trees too (tools/bench/churn --against REV
// builds it there), so that the rate of today's tables can be measured beside it.
#include <jitprov/runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <unistd.h>

namespace {

using jitprov::MethodId;
using jitprov::ModuleId;
using jitprov::Runtime;
using jitprov::Tier;
using jitprov::VersionId;

double nowSec() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

uint64_t rssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? uint64_t(resident) * uint64_t(sysconf(_SC_PAGESIZE)) : 0;
}

// ns per iteration of the floor: lock, allocate a node, unlock, lock, free it, unlock.
double floorNs() {
  std::mutex mu;
  constexpr int kIters = 2000000;
  const double t0 = nowSec();
  for (int i = 0; i < kIters; ++i) {
    mu.lock();
    auto* p = new std::array<char, 56>();
    asm volatile("" : : "r"(p) : "memory");
    mu.unlock();
    mu.lock();
    delete p;
    mu.unlock();
  }
  return (nowSec() - t0) * 1e9 / kIters;
}

// The reclamation backlog, in trees whose MemoryStats has it (0 in earlier ones).
template <class M>
uint64_t backlogOf(const M& m) {
  if constexpr (requires { m.awaiting_reclamation; }) return m.awaiting_reclamation;
  return 0;
}
template <class M>
uint64_t reclaimedInlineOf(const M& m) {
  if constexpr (requires { m.reclaimed_inline; }) return m.reclaimed_inline;
  return 0;
}
template <class M>
uint64_t slotsRetiredOf(const M& m) {
  if constexpr (requires { m.slots_retired; }) return m.slots_retired;
  return 0;
}
// "N waits: p50 A, p99 B, max C us" of the removals that waited for their grace period,
// in trees that measure them.
template <class M>
std::string reclaimWaitsOf(const M& m) {
  if constexpr (requires { m.reclaim_wait; }) {
    const auto& h = m.reclaim_wait;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%" PRIu64 " waits for a grace period: p50 <= %.1f us, p99 <= %.1f us, max %.1f us",
                  h.count, h.quantileUpperBound(0.5) / 1e3, h.quantileUpperBound(0.99) / 1e3, h.max_ns / 1e3);
    return buf;
  }
  return "waits not measured in this tree";
}

struct Options {
  uint64_t cycles = 1048580;  // past 1 048 575 modules, 67 108 863 methods, 268 435 455 versions
  uint64_t live = 1024;
  uint32_t methods = 64;
  uint32_t versions = 4;
  uint64_t warmup = 20000;
  uint64_t max_backlog = 16384;  // RuntimeConfig::max_reclamation_backlog (0: none)
  bool walker = false;           // a thread walking the registry lock-free, over and over
};

// The runtime's configuration: the backlog bound where the tree has one.
template <class C = jitprov::RuntimeConfig>
C configFor(const Options& o) {
  C c;
  if constexpr (requires { c.max_reclamation_backlog; }) c.max_reclamation_backlog = o.max_backlog;
  return c;
}

struct Live {
  ModuleId module;
  std::vector<MethodId> methods;
};

struct Checkpoint {
  uint64_t rss = 0, rss_trimmed = 0, malloc_in_use = 0, registry = 0, versions_walked = 0;
  uint64_t backlog = 0, reclaimed_inline = 0, slots_retired = 0;
  double walk_ns_per_version = 0;
};

int usage(const char* why) {
  if (why != nullptr) std::fprintf(stderr, "jitprov-bench-churn: %s\n", why);
  std::fprintf(stderr,
               "usage: jitprov-bench-churn [--cycles N] [--live MODULES] [--methods PER_MODULE] "
               "[--versions PER_METHOD] [--warmup CYCLES] [--max-backlog RECORDS|0] [--walker 1]\n");
  return 2;
}

bool parseCount(const char* s, uint64_t* out) {
  if (s == nullptr || *s < '0' || *s > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || v == 0) return false;
  *out = v;
  return true;
}

class Soak {
 public:
  explicit Soak(const Options& o) : o_(o), rt_(configFor(o)) {}

  bool cycle() {
    if (live_.size() >= o_.live) {
      if (!rt_.unloadModule(live_.front().module).ok()) return fail("unloadModule");
      live_.pop_front();
    }
    auto mod = rt_.registerModule("/app/plugins/Churn." + std::to_string(next_++) + ".dll", true);
    if (!mod.ok()) return fail("registerModule", mod.message());
    ++modules_;
    Live l{*mod, {}};
    char name[32];
    for (uint32_t i = 0; i < o_.methods; ++i) {
      std::snprintf(name, sizeof name, "Run%u", i);
      jitprov::MethodDesc d;
      d.token = 0x06000001 + i;
      d.name_space = "Churn.Generated.Query";
      d.name = name;
      d.signature = "void (int32, string)";
      auto m = rt_.registerMethod(*mod, d);
      if (!m.ok()) return fail("registerMethod", m.message());
      ++methods_;
      VersionId previous = 0;
      for (uint32_t k = 0; k < o_.versions; ++k) {
        auto v = rt_.beginJit(*m, k == 0 ? Tier::kTier0 : Tier::kTier1, 0);
        if (!v.ok()) return fail("beginJit", v.message());
        auto r = rt_.publishCode(*v, 256);
        if (!r.ok()) return fail("publishCode", r.message());
        if (!rt_.activate(*v).ok()) return fail("activate");
        ++versions_;
        if (previous != 0 && !rt_.retireVersion(previous).ok()) return fail("retireVersion");
        previous = *v;
      }
      l.methods.push_back(*m);
    }
    live_.push_back(std::move(l));
    return true;
  }

  Runtime& runtime() { return rt_; }

  Checkpoint measure() {
    Checkpoint c;
    c.rss = rssBytes();
    const jitprov::MemoryStats before = rt_.memoryStats();
    c.backlog = backlogOf(before);
    c.reclaimed_inline = reclaimedInlineOf(before);
    c.slots_retired = slotsRetiredOf(before);
    // The rest once the reclamation queue is drained: both checkpoints then hold the
    // same live set and nothing else.
    rt_.drainReclamation();
    const struct mallinfo2 mi = mallinfo2();
    c.malloc_in_use = mi.uordblks + mi.hblkhd;
    // What the process holds once the allocator gives back the free pages it keeps
    // (the heap's high-water mark is glibc's, not the registry's).
    malloc_trim(0);
    c.rss_trimmed = rssBytes();
    const jitprov::MemoryStats ms = rt_.memoryStats();
    c.registry = ms.method_bytes + ms.version_bytes + ms.table_bytes;
    std::vector<double> per;
    for (int i = 0; i < 31; ++i) {
      uint64_t sum = 0;
      const double t0 = nowSec();
      const jitprov::WalkStats st = rt_.walk(jitprov::WalkLocking::kNone, [&](const jitprov::VersionView& v) {
        sum += v.version_id ^ v.code_start ^ v.code_size ^ v.name.size();
      });
      const double t = nowSec() - t0;
      asm volatile("" : : "r"(sum));
      c.versions_walked = st.versions;
      per.push_back(st.versions ? t * 1e9 / double(st.versions) : 0);
    }
    std::nth_element(per.begin(), per.begin() + 15, per.end());
    c.walk_ns_per_version = per[15];
    return c;
  }

  uint64_t modules_ = 0, methods_ = 0, versions_ = 0;
  std::string error_;

 private:
  bool fail(const char* what, const char* why = "failed") {
    error_ = std::string(what) + ": " + why + " (after " + std::to_string(modules_) + " modules, " +
             std::to_string(methods_) + " methods, " + std::to_string(versions_) + " versions)";
    return false;
  }

  const Options o_;
  Runtime rt_;
  std::deque<Live> live_;
  uint64_t next_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) return usage(nullptr), 0;
    if (i + 1 >= argc) return usage((std::string(a) + " needs a value, or is not an option").c_str());
    uint64_t v = 0;
    if (!std::strcmp(a, "--max-backlog") && !std::strcmp(argv[i + 1], "0")) {
      o.max_backlog = 0;
      ++i;
      continue;
    }
    if (!parseCount(argv[++i], &v)) return usage((std::string(a) + ": not a positive number").c_str());
    if (!std::strcmp(a, "--cycles"))
      o.cycles = v;
    else if (!std::strcmp(a, "--live"))
      o.live = v;
    else if (!std::strcmp(a, "--methods") && v <= 1u << 20)
      o.methods = uint32_t(v);
    else if (!std::strcmp(a, "--versions") && v <= 1u << 20)
      o.versions = uint32_t(v);
    else if (!std::strcmp(a, "--warmup"))
      o.warmup = v;
    else if (!std::strcmp(a, "--max-backlog"))
      o.max_backlog = v;
    else if (!std::strcmp(a, "--walker") && v == 1)
      o.walker = true;
    else
      return usage((std::string("unknown option or value out of range: ") + a).c_str());
  }
  if (o.warmup >= o.cycles) return usage("--warmup must be less than --cycles");
  std::printf("churn: %" PRIu64
              " cycles (unload the oldest module, register one with %u methods, %u versions "
              "each, 1 live per method); live set %" PRIu64 " modules; reclamation backlog bound %s\n",
              o.cycles, o.methods, o.versions, o.live, o.max_backlog ? std::to_string(o.max_backlog).c_str() : "none");
  std::fflush(stdout);
  const double floor_ns = floorNs();
  Soak soak(o);
  // --walker: rundowns' readers, one walk after another (each in read sections of 1024
  // methods): what a removal past the backlog bound waits for.
  std::atomic<bool> stop_walker{false};
  uint64_t walks = 0;
  std::thread walker;
  if (o.walker) {
    walker = std::thread([&] {
      while (!stop_walker.load(std::memory_order_relaxed)) {
        (void)soak.runtime().walk(jitprov::WalkLocking::kNone, [](const jitprov::VersionView&) {});
        ++walks;
      }
    });
  }
  uint64_t peak_backlog = 0;
  Checkpoint warm, end;
  double t_warm = 0;
  const double t0 = nowSec();
  uint64_t next_report = 100000;
  for (uint64_t c = 1; c <= o.cycles; ++c) {
    if (!soak.cycle()) {
      std::printf("FAILED: %s\n", soak.error_.c_str());
      return 1;
    }
    if (c % 256 == 0) peak_backlog = std::max(peak_backlog, backlogOf(soak.runtime().memoryStats()));
    if (c == o.warmup) {
      t_warm = nowSec();
      warm = soak.measure();
      std::printf("after warm-up (%" PRIu64
                  " cycles): RSS %.1f MB (drained and trimmed %.1f MB), malloc in use "
                  "%.1f MB, registry %.1f MB, walk of the live set %.1f ns per version (%" PRIu64 " versions); %" PRIu64
                  " records awaiting "
                  "reclamation\n",
                  c, warm.rss / 1e6, warm.rss_trimmed / 1e6, warm.malloc_in_use / 1e6, warm.registry / 1e6,
                  warm.walk_ns_per_version, warm.versions_walked, warm.backlog);
      std::fflush(stdout);
      t_warm = nowSec() - t_warm;
    }
    if (c == next_report) {
      const double t = nowSec() - t0;
      const struct mallinfo2 mi = mallinfo2();
      std::printf("  %" PRIu64 " cycles, %.0f s: %" PRIu64 " modules, %" PRIu64 " methods, %" PRIu64
                  " versions registered; RSS %.1f MB, malloc in use %.1f MB\n",
                  c, t, soak.modules_, soak.methods_, soak.versions_, rssBytes() / 1e6,
                  double(mi.uordblks + mi.hblkhd) / 1e6);
      std::fflush(stdout);
      next_report += 100000;
    }
  }
  const double secs = nowSec() - t0 - t_warm;
  stop_walker.store(true);
  if (walker.joinable()) walker.join();
  const std::string waits = reclaimWaitsOf(soak.runtime().memoryStats());
  end = soak.measure();
  std::printf("end (%" PRIu64
              " cycles): RSS %.1f MB (drained and trimmed %.1f MB), malloc in use %.1f MB, "
              "registry %.1f MB, walk of the live set %.1f ns per version (%" PRIu64 " versions); %" PRIu64
              " records awaiting reclamation, %" PRIu64 " removals reclaimed by their own thread (backlog bound)\n",
              o.cycles, end.rss / 1e6, end.rss_trimmed / 1e6, end.malloc_in_use / 1e6, end.registry / 1e6,
              end.walk_ns_per_version, end.versions_walked, end.backlog, end.reclaimed_inline);
  std::printf("reclamation: peak backlog %" PRIu64 " records (sampled every 256 cycles); %s%s\n", peak_backlog,
              waits.c_str(), o.walker ? (", beside " + std::to_string(walks) + " walks").c_str() : "");
  std::printf("registered: %" PRIu64 " modules, %" PRIu64 " methods, %" PRIu64
              " native versions, none refused; %" PRIu64
              " slots retired for good (generations run out, or no memory to record them)\n",
              soak.modules_, soak.methods_, soak.versions_, end.slots_retired);
  // Registry calls: a module's registration and unload, a method's registration, and per
  // version beginJit, publishCode, activate and (all but the method's last) retire.
  const double ops = 2.0 * double(soak.modules_) + 4.0 * double(soak.versions_);
  std::printf(
      "rate: %.0f cycles/s; %.0f modules/s, %.0f methods/s, %.0f versions/s (%.0f ns per registry "
      "call = %.1f x floor %.1f ns)\n",
      double(o.cycles) / secs, double(soak.modules_) / secs, double(soak.methods_) / secs,
      double(soak.versions_) / secs, secs * 1e9 / ops, secs * 1e9 / ops / floor_ns, floor_ns);
  std::printf(
      "end / warm-up: RSS %.3f (drained and trimmed %.3f), malloc in use %.3f, registry memory %.3f, walk "
      "time per version %.3f\n",
      double(end.rss) / double(warm.rss), double(end.rss_trimmed) / double(warm.rss_trimmed),
      double(end.malloc_in_use) / double(warm.malloc_in_use), double(end.registry) / double(warm.registry),
      end.walk_ns_per_version / warm.walk_ns_per_version);
  return 0;
}
