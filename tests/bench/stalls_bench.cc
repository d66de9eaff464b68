// SPDX-License-Identifier: MIT
// jitprov-bench-stalls: the longest single registrations and code publications of a
// host that registers and publishes METHODS methods (one native version each, host mode,
// one module, untraced), one call at a time as a JIT or class-loading thread makes them.
// Where a call stalls is where a host's thread stalls, under the registry's loader mutex
// or CVM lock: an array's growth, a table's first touch of fresh memory. Printed per
// kind of call: the median, the 99.9th percentile, the longest, the calls over 0.5 ms
// and their total, and (--list) each of them with its ordinal.
// Only the public C API: to compare libraries, run it against another build's with
// LD_LIBRARY_PATH=OTHER/runtime (the library path overrides the binary's runpath).
// --cold MB writes MB of other memory between two methods, as a JIT's or a VM's own work
// does between two code events: the calls then run on cold caches, and their medians are
// what a host whose compilers keep the caches cold pays a call. --batch K writes it only
// every K methods: the K calls of a batch after the first find the caches warm, as calls
// made one after another by a thread that batches them would (the median is theirs).
//   jitprov-bench-stalls [--list] [--cold MB [--batch K]] [METHODS]
//   (default 300 000 methods; 20 000 with --cold)
#include <jitprov/jitprov.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kStallNs = 500'000;

uint64_t nowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000u + uint64_t(t.tv_nsec);
}

void report(const char* what, const std::vector<uint64_t>& ns, bool list) {
  uint64_t stalls = 0, stall_ns = 0;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] <= kStallNs) continue;
    ++stalls;
    stall_ns += ns[i];
    if (list) std::printf("  %s #%zu: %.2f ms\n", what, i + 1, double(ns[i]) / 1e6);
  }
  std::vector<uint64_t> s = ns;
  std::sort(s.begin(), s.end());
  std::printf("%-9s p50 %.2f us, p99.9 %.1f us, longest %.2f ms; %" PRIu64 " calls over 0.5 ms, %.1f ms in them\n",
              what, double(s[s.size() / 2]) / 1e3, double(s[s.size() * 999 / 1000]) / 1e3, double(s.back()) / 1e6,
              stalls, double(stall_ns) / 1e6);
}

int fail(const char* what, int e) {
  std::fprintf(stderr, "jitprov-bench-stalls: %s: %s\n", what, jitprov_strerror(e));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool list = false, n_given = false;
  uint64_t n = 300000, cold_mb = 0, batch = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      list = true;
    } else if (std::strcmp(argv[i], "--batch") == 0 || std::strcmp(argv[i], "--cold") == 0) {
      const bool is_batch = argv[i][2] == 'b';
      const uint64_t max = is_batch ? 100000 : 1024;
      char* end = nullptr;
      const uint64_t v = i + 1 < argc ? std::strtoull(argv[++i], &end, 10) : 0;
      if (end == nullptr || end == argv[i] || *end != '\0' || v == 0 || v > max) {
        std::fprintf(stderr, "jitprov-bench-stalls: %s takes %s, 1..%" PRIu64 "\n", is_batch ? "--batch" : "--cold",
                     is_batch ? "K" : "MB", max);
        return 2;
      }
      (is_batch ? batch : cold_mb) = v;
    } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::printf(
          "usage: jitprov-bench-stalls [--list] [--cold MB [--batch K]] [METHODS]   (default 300000; 20000 with "
          "--cold)\n");
      return 0;
    } else {
      char* end = nullptr;
      n = std::strtoull(argv[i], &end, 10);
      n_given = true;
      if (end == argv[i] || *end != '\0' || n == 0 || n > 10'000'000) {
        std::fprintf(stderr, "jitprov-bench-stalls: METHODS must be 1..10000000, not '%s'\n", argv[i]);
        return 2;
      }
    }
  }
  if (batch != 1 && cold_mb == 0) {
    std::fprintf(stderr, "jitprov-bench-stalls: --batch needs --cold\n");
    return 2;
  }
  if (cold_mb != 0 && !n_given) n = 20000;
  // The other memory: written a cache line at a time, each line a new value; then a
  // line in each 4 KB page of 16 times as much, so that the TLB is cold too (a VM's code
  // and heap span far more pages than the cache holds).
  std::vector<uint64_t> other(cold_mb << 17), pages(cold_mb << 21);
  uint64_t stir = 0;
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.code_mode = JITPROV_CODE_HOST;
  cfg.lock_stats = 0;
  jitprov_runtime* rt = nullptr;
  if (const int e = jitprov_runtime_create(&cfg, &rt); e != JITPROV_OK) return fail("create the runtime", e);
  uint64_t mod = 0;
  if (const int e = jitprov_module_register(rt, "/app/stalls.so", 0, &mod); e != JITPROV_OK)
    return fail("register the module", e);
  std::vector<uint64_t> reg, pub;
  reg.reserve(n);
  pub.reserve(n);
  char name[32];
  for (uint64_t i = 1; i <= n; ++i) {
    std::snprintf(name, sizeof name, "M%" PRIu64, i);
    jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
    d.host_key = i;
    d.name_space = "app.Stalls";
    d.name = name;
    d.signature = "()V";
    uint64_t id = 0, vid = 0;
    const uint64_t t0 = nowNs();
    if (const int e = jitprov_method_register(rt, mod, &d, &id); e != JITPROV_OK) return fail("register a method", e);
    const uint64_t t1 = nowNs();
    jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
    c.code_start = 0x10000000 + i * 256;
    c.code_size = 200;
    if (const int e = jitprov_code_publish(rt, id, &c, &vid); e != JITPROV_OK) return fail("publish code", e);
    const uint64_t t2 = nowNs();
    if (i % batch == 0) {
      for (size_t j = 0; j < other.size(); j += 8) other[j] += ++stir;
      for (size_t j = 0; j < pages.size(); j += 512) pages[j] += ++stir;
    }
    reg.push_back(t1 - t0);
    pub.push_back(t2 - t1);
  }
  std::printf("jitprov-bench-stalls: %" PRIu64 " methods registered and published, one version each%s\n", n,
              cold_mb == 0 ? ""
              : batch == 1 ? (", " + std::to_string(cold_mb) + " MB written between two").c_str()
                           : (", " + std::to_string(cold_mb) + " MB written every " + std::to_string(batch)).c_str());
  report("register", reg, list);
  report("publish", pub, list);
  jitprov_runtime_destroy(rt);
  return 0;
}
