// SPDX-License-Identifier: MIT
// jitprov-lockwait: how long a JIT runtime's threads wait on the code-version-manager
// lock, measured from outside the process with eBPF on the jitprov USDT probes.
//
// Per lock site and split by "during a rundown" / "outside": count, total, max and a
// log2 histogram of lock wait and of lock hold time; and the JIT-path latency
// (jit_begin..jit_end) by tier. The runtime measures each acquisition and each JIT path
// while the tool is attached and reports it at its end (lock_released, jit_end): two
// probes attached, one hit per acquisition and one per JIT path. Every way to lose a
// sample is counted and printed. Exit: 0 ok, 1 error, 2 usage, 3 data lost.
#include "lockwait.h"
#include "lockwait.skel.h"

#include <jitprov/hist.h>
#include <jitprov/names.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <nlohmann/json.hpp>
#include "cli.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void onSignal(int) { g_stop = 1; }
bool g_verbose = false;

int libbpfPrint(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG && !g_verbose) return 0;
  if (!g_verbose) return 0;  // libbpf's warnings are turned into our own one-line errors
  return vfprintf(stderr, fmt, args);
}

struct Totals {
  std::array<lw_site, 2 * LW_SITES> sites{};
  std::array<lw_hist, 2 * LW_TIERS> jit{};
  std::array<uint64_t, LW_DROP_KINDS> drops{};
  std::array<lw_blame, LW_SITES * LW_SITES> blame{};  // [waiting site][holder site]
};

// "JIT time blocked by the rundown": waits of the JIT paths that began while the
// rundown held the lock (only the locked and per-method modes ever take it).
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

// Sums the per-CPU maps (the BPF side keeps cumulative counts; intervals are deltas).
bool readTotals(lockwait* skel, Totals* t) {
  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return false;
  *t = Totals{};
  std::vector<lw_site> sites(ncpu);
  for (uint32_t k = 0; k < t->sites.size(); ++k) {
    if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.site_stats), &k, sites.data()) != 0) return false;
    for (const lw_site& s : sites) {
      addHist(&t->sites[k].wait, s.wait);
      addHist(&t->sites[k].hold, s.hold);
    }
  }
  std::vector<lw_hist> hists(ncpu);
  for (uint32_t k = 0; k < t->jit.size(); ++k) {
    if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.jit_stats), &k, hists.data()) != 0) return false;
    for (const lw_hist& h : hists) addHist(&t->jit[k], h);
  }
  std::vector<lw_blame> blames(ncpu);
  for (uint32_t k = 0; k < t->blame.size(); ++k) {
    if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.blame), &k, blames.data()) != 0) return false;
    for (const lw_blame& b : blames) {
      t->blame[k].count += b.count;
      t->blame[k].total_ns += b.total_ns;
      t->blame[k].max_ns = std::max(t->blame[k].max_ns, b.max_ns);
    }
  }
  std::vector<uint64_t> d(ncpu);
  for (uint32_t k = 0; k < LW_DROP_KINDS; ++k) {
    if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.drops), &k, d.data()) != 0) return false;
    for (uint64_t v : d) t->drops[k] += v;
  }
  return true;
}

// a - b, except max, which is the interval's only if it grew (else unknown: keep a's).
lw_hist minus(const lw_hist& a, const lw_hist& b) {
  lw_hist r = a;
  r.count -= b.count;
  r.total_ns -= b.total_ns;
  for (int i = 0; i < LW_BUCKETS; ++i) r.buckets[i] -= b.buckets[i];
  if (r.count == 0) r.max_ns = 0;
  return r;
}

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
// not a loss. "drops": a hit whose arguments could not be used, a loss (exit 3).
struct Counter {
  const char* group;
  const char* name;
};
const Counter kCounters[LW_DROP_KINDS] = {{"unmeasured", "lock"}, {"unmeasured", "jit"}, {"drops", "bad_argument"}};
bool isLoss(int kind) { return kind == LW_BAD_ARG; }

std::string siteName(int site) { return std::string(jitprov::lockSiteOrUnknown(site)); }

nlohmann::json blameJson(const lw_blame& b) {
  return {{"count", b.count}, {"total_ns", b.total_ns}, {"max_ns", b.max_ns}};
}

nlohmann::json toJson(const Totals& t, double seconds) {
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
  for (int k = 0; k < LW_DROP_KINDS; ++k) j[kCounters[k].group][kCounters[k].name] = t.drops[k];
  return j;
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

void printHuman(const Totals& t, double seconds) {
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
  std::printf("drops: bad_argument %llu\n", (unsigned long long)t.drops[LW_BAD_ARG]);
  std::printf("unmeasured (begun before attaching): lock %llu, jit %llu\n",
              (unsigned long long)t.drops[LW_UNMEASURED_LOCK], (unsigned long long)t.drops[LW_UNMEASURED_JIT]);
}

std::string readlinkStr(const std::string& p) {
  char buf[4096];
  const ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
  if (n < 0) return {};
  buf[n] = '\0';
  return buf;
}

// How the kernel runs the attached probes in process `pid`: "trampoline" when the
// process maps a [uprobes-trampoline] (uprobes on 5-byte NOPs optimized into calls),
// "int3" otherwise (traps; also before a first hit), "unknown" without a live pid.
std::string uprobePath(int pid) {
  if (pid <= 0) return "unknown";
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return "unknown";
  std::string line;
  while (std::getline(maps, line))
    if (line.find("[uprobes-trampoline]") != std::string::npos) return "trampoline";
  return "int3";
}

// The jitprov USDT probes of the ELF file at `path` (the executable itself, or
// libjitprov.so.1 in a host that links it): name -> its fewest arguments over its sites.
// Empty when it has none (or is not ELF).
std::map<std::string, int> jitprovProbes(const std::string& path) {
  std::map<std::string, int> probes;
  if (elf_version(EV_CURRENT) == EV_NONE) return probes;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return probes;
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
      for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_NOTE) continue;
        const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name == nullptr || std::strcmp(name, ".note.stapsdt") != 0) continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        GElf_Nhdr nh;
        size_t off = 0, name_off = 0, desc_off = 0;
        while (data != nullptr && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) != 0) {
          // desc: pc, base, semaphore (one address each), then provider\0name\0args\0
          const size_t addr = elf_getident(elf, nullptr)[EI_CLASS] == ELFCLASS64 ? 8 : 4;
          if (nh.n_type != 3 || nh.n_descsz <= 3 * addr) continue;
          const char* p = static_cast<const char*>(data->d_buf) + desc_off + 3 * addr;
          const char* end = static_cast<const char*>(data->d_buf) + desc_off + nh.n_descsz;
          const char* provider = p;
          const char* probe = provider + strnlen(provider, size_t(end - provider)) + 1;
          if (probe >= end || std::strcmp(provider, "jitprov") != 0) continue;
          const char* args = probe + strnlen(probe, size_t(end - probe)) + 1;
          if (args >= end) continue;
          // Arguments are separated by spaces ("-4@%eax 8@%rdx"); none: an empty string.
          int n = 0;
          for (const char* c = args; c < end && *c != '\0'; ++c)
            if (*c != ' ' && (c == args || c[-1] == ' ')) ++n;
          auto [it, fresh] = probes.emplace(probe, n);
          if (!fresh) it->second = std::min(it->second, n);
        }
      }
    }
    elf_end(elf);
  }
  close(fd);
  return probes;
}
bool hasJitprovProbes(const std::string& path) { return !jitprovProbes(path).empty(); }

// The object in process `pid` that holds the jitprov probes: its executable, or the
// first mapped file that has them (libjitprov.so.1). Empty when none does.
std::string probeObjectOf(int pid) {
  const std::string exe = readlinkStr("/proc/" + std::to_string(pid) + "/exe");
  if (!exe.empty() && hasJitprovProbes(exe)) return exe;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line, last;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string file = line.substr(slash);
    if (file == last || file == exe) continue;
    last = file;
    if (hasJitprovProbes(file)) return file;
  }
  return exe;  // attaching then says which probe is missing
}

}  // namespace

int main(int argc, char** argv) {
  int pid = 0;
  std::string binary;
  double interval = 0;
  int count = 0;
  bool json = false;
  bool locks_only = false;
  CLI::App cli{
      "jitprov-lockwait: code-version-manager lock wait and hold times and JIT-path latency, by site "
      "and rundown state, from the jitprov USDT probes (eBPF)"};
  cli.add_option("-p,--pid", pid, "process to trace")->check(jitprov::tools::wholeIn(1, 4194304));
  cli.add_option("-b,--binary", binary,
                 "binary (or library) with the jitprov probes; default: the executable of PID, or the library "
                 "mapped in it that has them (libjitprov.so.1)");
  cli.add_option("-i,--interval", interval,
                 "print every SEC seconds, counts per interval, maxima since attach (0: once, at the end)")
      ->check(jitprov::tools::finiteIn(86400));
  cli.add_option("-c,--count", count, "stop after this many intervals (0: until the target exits or SIGINT)")
      ->check(jitprov::tools::wholeIn(0, 1000000000));
  cli.add_flag("--json", json, "one JSON object per report, on stdout");
  cli.add_flag("--locks-only", locks_only,
               "attach only lock_released (lock wait and hold times, no JIT-path latency): no jit_end hit per JIT "
               "path");
  // Its name before jitprov-lockwait read the runtime's measurements (it then left hold
  // times out too); kept for scripts, not listed.
  cli.add_flag("--wait-only", locks_only)->group("");
  cli.add_flag("-v,--verbose", g_verbose,
               "show libbpf's own messages, and whether the kernel runs the probes through the uprobe trampoline");
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-lockwait", argc, argv)) return *rc;
  if (pid == 0 && binary.empty()) {
    std::fprintf(stderr, "jitprov-lockwait: give -p PID and/or -b BINARY (see --help)\n");
    return 2;
  }
  if (geteuid() != 0) {
    // The probes are uprobes, which the kernel lets root attach only.
    std::fprintf(stderr, "jitprov-lockwait: attach BPF uprobes: needs root\n");
    return 1;
  }
  if (pid != 0 && kill(pid, 0) != 0 && errno == ESRCH) {
    std::fprintf(stderr, "jitprov-lockwait: attach to pid %d: No such process\n", pid);
    return 1;
  }
  if (binary.empty()) binary = probeObjectOf(pid);
  if (binary.empty()) {
    std::fprintf(stderr,
                 "jitprov-lockwait: pid %d: neither its executable nor a library it maps has the jitprov "
                 "USDT probes\n",
                 pid);
    return 1;
  }
  if (access(binary.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "jitprov-lockwait: open binary %s: %s\n", binary.c_str(), std::strerror(errno));
    return 1;
  }
  const std::map<std::string, int> notes = jitprovProbes(binary);
  if (notes.empty()) {
    std::fprintf(stderr, "jitprov-lockwait: %s: no jitprov USDT probes in it (not an ELF file built with jitprov)\n",
                 binary.c_str());
    return 1;
  }
  // The probes this tool reads and the arguments it needs of them (the runtime's own
  // measurements, appended to the probes: an older build's do not carry them).
  struct Need {
    const char* name;
    int args;
    bool wanted;
  } const needs[] = {{"lock_released", 6, true}, {"jit_end", 6, !locks_only}};
  for (const Need& n : needs) {
    if (!n.wanted) continue;
    const auto it = notes.find(n.name);
    if (it == notes.end()) {
      std::fprintf(stderr, "jitprov-lockwait: %s: no jitprov:%s probe in it\n", binary.c_str(), n.name);
      return 1;
    }
    if (it->second < n.args) {
      std::fprintf(stderr,
                   "jitprov-lockwait: %s: its jitprov:%s probe has %d arguments, this tool needs %d (the durations "
                   "the runtime measures): a jitprov built before them; use the jitprov-lockwait built with it\n",
                   binary.c_str(), n.name, it->second, n.args);
      return 1;
    }
  }
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    std::fprintf(stderr, "jitprov-lockwait: load BPF programs: the kernel has no BTF (/sys/kernel/btf/vmlinux)\n");
    return 1;
  }
  libbpf_set_print(libbpfPrint);

  lockwait* skel = lockwait__open();
  if (skel == nullptr) {
    std::fprintf(stderr, "jitprov-lockwait: open BPF skeleton: %s\n", std::strerror(errno));
    return 1;
  }
  skel->rodata->target_tgid = unsigned(pid);
  if (int err = lockwait__load(skel); err != 0) {
    std::fprintf(stderr, "jitprov-lockwait: load BPF programs: %s%s\n", std::strerror(-err),
                 g_verbose ? "" : " (-v shows libbpf's messages)");
    lockwait__destroy(skel);
    return 1;
  }
  struct Probe {
    bpf_program* prog;
    bpf_link** link;
    const char* name;
  } probes[] = {
      {skel->progs.lock_released, &skel->links.lock_released, "lock_released"},
      {skel->progs.jit_end, &skel->links.jit_end, "jit_end"},
  };
  for (const Probe& p : probes) {
    if (locks_only && p.link == &skel->links.jit_end) continue;
    *p.link = bpf_program__attach_usdt(p.prog, pid == 0 ? -1 : pid, binary.c_str(), "jitprov", p.name, nullptr);
    if (*p.link == nullptr) {
      const int e = errno;
      if (e == ESRCH) {
        std::fprintf(stderr, "jitprov-lockwait: attach usdt jitprov:%s to pid %d: No such process\n", p.name, pid);
      } else {
        std::fprintf(stderr, "jitprov-lockwait: attach usdt jitprov:%s to %s: %s\n", p.name, binary.c_str(),
                     std::strerror(e));
      }
      lockwait__destroy(skel);
      return 1;
    }
  }

  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  int pidfd = pid != 0 ? int(syscall(SYS_pidfd_open, pid, 0)) : -1;
  std::fprintf(stderr, "jitprov-lockwait: attached to %s%s; Ctrl-C to stop\n", binary.c_str(),
               pid ? (" pid " + std::to_string(pid)).c_str() : "");

  Totals prev{}, now{};
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  int reports = 0;
  bool target_gone = false;
  int rc = 0;
  std::string path = "unknown";  // the uprobe path last seen in the target (uprobePath)
  auto report = [&](bool final_report) {
    if (!readTotals(skel, &now)) {
      std::fprintf(stderr, "jitprov-lockwait: read BPF maps: %s\n", std::strerror(errno));
      rc = 1;
      return;
    }
    const auto tnow = std::chrono::steady_clock::now();
    const bool whole = interval == 0;
    const Totals d = whole ? now : delta(now, prev);
    const double secs = std::chrono::duration<double>(tnow - (whole ? t0 : last)).count();
    if (!target_gone && pid > 0) path = uprobePath(pid);
    if (json) {
      nlohmann::json j = toJson(d, secs);
      j["final"] = final_report;
      j["target_exited"] = target_gone;
      j["uprobe_path"] = path;
      std::printf("%s\n", j.dump().c_str());
    } else {
      printHuman(d, secs);
      if (g_verbose)
        std::printf("uprobe path: %s%s\n", path.c_str(),
                    path == "trampoline" ? " ([uprobes-trampoline] mapped: the kernel calls the probes, no int3 trap)"
                    : path == "int3"     ? " (no [uprobes-trampoline] in the process: int3 traps)"
                                         : "");
    }
    std::fflush(stdout);
    prev = now;
    last = tnow;
  };
  while (!g_stop) {
    const int wait_ms = interval > 0 ? int(interval * 1000) : 200;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    while (!g_stop && std::chrono::steady_clock::now() < deadline) {
      if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
          target_gone = true;
          break;
        }
      } else {
        usleep(50000);
      }
    }
    if (target_gone || g_stop) break;
    if (pid > 0) path = uprobePath(pid);  // remembered for a report after the target exits
    if (interval > 0) {
      report(false);
      if (count > 0 && ++reports >= count) break;
    }
  }
  if (target_gone && !json) std::fprintf(stderr, "jitprov-lockwait: target pid %d exited\n", pid);
  if (interval == 0 || target_gone || g_stop) report(true);
  uint64_t lost = 0;
  for (int k = 0; k < LW_DROP_KINDS; ++k)
    if (isLoss(k)) lost += now.drops[k];
  if (pidfd >= 0) close(pidfd);
  lockwait__destroy(skel);
  if (rc != 0) return rc;
  if (lost > 0) {
    std::fprintf(stderr, "jitprov-lockwait: %llu samples lost (probe arguments it could not use)\n",
                 (unsigned long long)lost);
    return 3;
  }
  return 0;
}
