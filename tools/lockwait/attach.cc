// SPDX-License-Identifier: MIT
#include "attach.h"

#include "lockwait.skel.h"
#include "waits.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace jitprov::lw {

namespace {

bool g_verbose = false;

int libbpfPrint(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG && !g_verbose) return 0;
  if (!g_verbose) return 0;  // libbpf's warnings are turned into our own one-line errors
  return vfprintf(stderr, fmt, args);
}

// Sums one per-CPU array map of `n` entries of V into out[0..n), with add(into, one).
template <typename V, typename Add>
bool sumPerCpu(bpf_map* map, V* out, size_t n, int ncpu, Add add) {
  std::vector<V> per_cpu(ncpu);
  for (uint32_t k = 0; k < n; ++k) {
    if (bpf_map_lookup_elem(bpf_map__fd(map), &k, per_cpu.data()) != 0) return false;
    for (const V& v : per_cpu) add(&out[k], v);
  }
  return true;
}

// The depth of this process's pid namespace (0: the first one): NSpid lists its pid in
// each namespace from the first down to its own.
int pidNamespaceLevel() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("NSpid:", 0) == 0) {
      std::istringstream ids(line.substr(6));
      int n = 0;
      for (long id; ids >> id;) ++n;
      return n > 0 ? n - 1 : 0;
    }
  return 0;
}
}  // namespace

Bpf::~Bpf() {
  if (skel_ != nullptr) lockwait__destroy(skel_);
}

void Bpf::detach() {
  if (skel_ != nullptr) lockwait__detach(skel_);
}

std::string Bpf::attach(const AttachOptions& o) {
  g_verbose = o.verbose;
  libbpf_set_print(libbpfPrint);
  skel_ = lockwait__open();
  if (skel_ == nullptr) return std::string("open BPF skeleton: ") + std::strerror(errno);
  skel_->rodata->target_tgid = unsigned(o.pid);
  // Pids as this tool sees them: its pid namespace may be a container's.
  struct stat ns {};
  if (stat("/proc/self/ns/pid", &ns) != 0) return std::string("stat /proc/self/ns/pid: ") + std::strerror(errno);
  skel_->rodata->pidns_dev = uint64_t(ns.st_dev);
  skel_->rodata->pidns_ino = uint64_t(ns.st_ino);
  skel_->rodata->tree_root = unsigned(o.tree);
  skel_->rodata->pidns_level = unsigned(pidNamespaceLevel());
  skel_->rodata->emit_waits = o.waits ? 1 : 0;
  if (o.waits && bpf_map__set_max_entries(skel_->maps.waits, kWaitsRingBytes) != 0)
    return std::string("size the waits ring buffer: ") + std::strerror(errno);
  if (int err = lockwait__load(skel_); err != 0)
    return std::string("load BPF programs: ") + std::strerror(-err) +
           (o.verbose ? "" : " (-v shows libbpf's messages)");
  struct Probe {
    bpf_program* prog;
    bpf_link** link;
    const char* name;
    bool wanted;
  } const probes[] = {
      {skel_->progs.lock_released, &skel_->links.lock_released, "lock_released", true},
      {skel_->progs.jit_end, &skel_->links.jit_end, "jit_end", !o.locks_only},
  };
  for (const Probe& p : probes) {
    if (!p.wanted) continue;
    *p.link = bpf_program__attach_usdt(p.prog, o.pid == 0 ? -1 : o.pid, o.binary.c_str(), "jitprov", p.name, nullptr);
    if (*p.link != nullptr) continue;
    const int e = errno;
    if (e == ESRCH)
      return std::string("attach usdt jitprov:") + p.name + " to pid " + std::to_string(o.pid) + ": No such process";
    return std::string("attach usdt jitprov:") + p.name + " to " + o.binary + ": " + std::strerror(e);
  }
  return "";
}

bool Bpf::readTotals(Totals* t) const {
  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return false;
  *t = Totals{};
  const auto site = [](lw_site* into, const lw_site& s) {
    addHist(&into->wait, s.wait);
    addHist(&into->hold, s.hold);
  };
  const auto blame = [](lw_blame* into, const lw_blame& b) {
    into->count += b.count;
    into->total_ns += b.total_ns;
    into->max_ns = std::max(into->max_ns, b.max_ns);
  };
  const auto sum = [](uint64_t* into, const uint64_t& v) { *into += v; };
  return sumPerCpu(skel_->maps.site_stats, t->sites.data(), t->sites.size(), ncpu, site) &&
         sumPerCpu(skel_->maps.jit_stats, t->jit.data(), t->jit.size(), ncpu, addHist) &&
         sumPerCpu(skel_->maps.blame, t->blame.data(), t->blame.size(), ncpu, blame) &&
         sumPerCpu(skel_->maps.drops, t->drops.data(), t->drops.size(), ncpu, sum);
}

int Bpf::waitsMapFd() const { return bpf_map__fd(skel_->maps.waits); }

std::string uprobePath(int pid) {
  if (pid <= 0) return "unknown";
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return "unknown";
  std::string line;
  while (std::getline(maps, line))
    if (line.find("[uprobes-trampoline]") != std::string::npos) return "trampoline";
  return "int3";
}

}  // namespace jitprov::lw
