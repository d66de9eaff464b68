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
//
// attach.cc: the BPF skeleton; report.cc: the figures; usdt_notes.cc: the probes an
// ELF file declares; waits.cc: --waits, a CSV line per wait from a BPF ring buffer.
#include "attach.h"
#include "cli.h"
#include "report.h"
#include "usdt_notes.h"
#include "waits.h"
#include "json_text.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void onSignal(int) { g_stop = 1; }

struct Options {
  jitprov::lw::AttachOptions attach;
  double interval = 0;
  int count = 0;
  bool json = false;
  std::string waits;  // --waits FILE
};

std::optional<int> parseOptions(int argc, char** argv, Options* o) {
  CLI::App cli{
      "jitprov-lockwait: code-version-manager lock wait and hold times and JIT-path latency, by site "
      "and rundown state, from the jitprov USDT probes (eBPF)"};
  auto* pid = cli.add_option("-p,--pid", o->attach.pid, "process to trace")->check(jitprov::tools::wholeIn(1, 4194304));
  cli.add_option("--tree", o->attach.tree,
                 "with -b: only the processes that descend from PID, PID included (jitprov record --lockwait gives "
                 "its own pid: CMD and its children)")
      ->check(jitprov::tools::wholeIn(1, 4194304))
      ->excludes(pid)
      ->type_name("PID");
  cli.add_option("-b,--binary", o->attach.binary,
                 "binary (or library) with the jitprov probes; default: the executable of PID, or the library "
                 "mapped in it that has them (libjitprov.so.1)");
  cli.add_option("-i,--interval", o->interval,
                 "print every SEC seconds, counts per interval, maxima since attach (0: once, at the end)")
      ->check(jitprov::tools::finiteIn(86400));
  cli.add_option("-c,--count", o->count, "stop after this many intervals (0: until the target exits or SIGINT)")
      ->check(jitprov::tools::wholeIn(0, 1000000000));
  cli.add_flag("--json", o->json, "one JSON object per report, on stdout");
  cli.add_option("--waits", o->waits,
                 "also write every lock wait (an acquisition that waited) to FILE, one CSV line each: begin_ns "
                 "(CLOCK_MONOTONIC), tid, site, wait_ns, hold_ns, blocked_by, in_rundown; a record lost is counted "
                 "(drops wait_records) and makes the exit status 3")
      ->type_name("FILE");
  cli.add_flag("--locks-only", o->attach.locks_only,
               "attach only lock_released (lock wait and hold times, no JIT-path latency): no jit_end hit per JIT "
               "path");
  // Its name before jitprov-lockwait read the runtime's measurements (it then left hold
  // times out too); kept for scripts, not listed.
  cli.add_flag("--wait-only", o->attach.locks_only)->group("");
  cli.add_flag("-v,--verbose", o->attach.verbose,
               "show libbpf's own messages, and whether the kernel runs the probes through the uprobe trampoline");
  if (auto rc = jitprov::tools::parseArgs(cli, "jitprov-lockwait", argc, argv)) return rc;
  if (o->attach.tree != 0 && o->attach.binary.empty()) {
    std::fprintf(stderr, "jitprov-lockwait: --tree needs -b BINARY (see --help)\n");
    return 2;
  }
  if (o->attach.pid == 0 && o->attach.binary.empty()) {
    std::fprintf(stderr, "jitprov-lockwait: give -p PID and/or -b BINARY (see --help)\n");
    return 2;
  }
  if (o->interval != 0 && o->interval < 0.001) {  // else a report every pass, 100 % CPU
    std::fprintf(stderr, "jitprov-lockwait: --interval %g: 0 (once, at the end) or at least 0.001 s\n", o->interval);
    return 2;
  }
  if (o->count != 0 && o->interval == 0) {
    std::fprintf(stderr, "jitprov-lockwait: --count counts intervals: give --interval SEC too (see --help)\n");
    return 2;
  }
  return std::nullopt;
}

// The target's checks before loading anything: "" when it can be attached, else why.
std::string checkTarget(jitprov::lw::AttachOptions* a) {
  // The probes are uprobes, which the kernel lets root attach only.
  if (geteuid() != 0) return "attach BPF uprobes: needs root";
  const std::string pid = std::to_string(a->pid);
  if (a->pid != 0 && kill(a->pid, 0) != 0 && errno == ESRCH) return "attach to pid " + pid + ": No such process";
  // --tree PID that is no process: nothing would ever descend from it (a report of zeros).
  if (a->tree != 0 && kill(a->tree, 0) != 0 && errno == ESRCH)
    return "--tree " + std::to_string(a->tree) + ": No such process";
  // A thread's id (top -H, jstack) is no process's: the probes would filter every hit out.
  if (a->pid != 0) {
    const int tgid = jitprov::lw::tgidOf(a->pid);
    if (tgid > 0 && tgid != a->pid)
      return "pid " + pid + " is a thread of process " + std::to_string(tgid) + ": give -p " + std::to_string(tgid);
  }
  if (a->binary.empty()) a->binary = jitprov::lw::probeObjectOf(a->pid, &a->shown);
  if (a->binary.empty())
    return "pid " + pid + ": neither its executable nor a library it maps has the jitprov USDT probes";
  // A bare name (-b libjitprov.so.1) is the file in the current directory, as checked
  // here: libbpf would look it up in LD_LIBRARY_PATH and the system's directories, and
  // attach to another copy than the one checked.
  if (a->binary.find('/') == std::string::npos) {
    if (char* full = realpath(a->binary.c_str(), nullptr)) {
      a->binary = full;
      std::free(full);
    }
  }
  const std::string name = a->shown.empty() ? a->binary : a->shown;
  if (access(a->binary.c_str(), R_OK) != 0) return "open binary " + name + ": " + std::strerror(errno);
  // -p PID -b FILE: the process must map that very file (a container's target names its
  // own copy of a path): else the probes never fire, and the report is of nothing.
  if (a->pid != 0 && a->shown.empty() && !jitprov::lw::mapsFile(a->pid, a->binary))
    return "pid " + pid + " does not map " + name +
           " (neither its executable nor a file it maps is that one): its probes would never fire";
  const jitprov::lw::ProbeArgs notes = jitprov::lw::jitprovProbes(a->binary);
  if (notes.empty()) {
    if (!a->shown.empty())
      return "pid " + pid + ": neither its executable nor a library it maps has the jitprov USDT probes";
    return name + ": no jitprov USDT probes in it (not an ELF file built with jitprov)";
  }
  // The probes this tool reads and the arguments it needs of them (the runtime's own
  // measurements, appended to the probes: an older build's do not carry them).
  struct Need {
    const char* name;
    int args;
    bool wanted;
  } const needs[] = {{"lock_released", 6, true}, {"jit_end", 6, !a->locks_only}};
  for (const Need& n : needs) {
    if (!n.wanted) continue;
    const auto it = notes.find(n.name);
    if (it == notes.end()) return name + ": no jitprov:" + n.name + " probe in it";
    if (it->second < n.args)
      return name + ": its jitprov:" + n.name + " probe has " + std::to_string(it->second) +
             " arguments, this tool needs " + std::to_string(n.args) +
             " (the durations the runtime measures): a jitprov built before them; use the jitprov-lockwait built "
             "with it";
  }
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return "load BPF programs: the kernel has no BTF (/sys/kernel/btf/vmlinux)";
  return "";
}

// Reports until the target exits, SIGINT/SIGTERM, or --count intervals; returns the
// exit status.
class Session {
 public:
  Session(const Options& o, jitprov::lw::Bpf& bpf, jitprov::lw::WaitWriter* waits) : o_(o), bpf_(bpf), waits_(waits) {}

  int run(int pidfd) {
    const int pid = o_.attach.pid;
    for (int reports = 0; !g_stop;) {
      const int wait_ms = o_.interval > 0 ? int(o_.interval * 1000) : 200;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
      while (!g_stop && !target_gone_ && std::chrono::steady_clock::now() < deadline) idle(pidfd);
      if (target_gone_ || g_stop || out_failed_) break;
      if (pid > 0) path_ = jitprov::lw::uprobePath(pid);  // remembered for a report after the target exits
      if (o_.interval > 0) {
        report(false);
        if (o_.count > 0 && ++reports >= o_.count) break;
      }
    }
    if (target_gone_ && !o_.json) {
      if (pid != 0)
        std::fprintf(stderr, "jitprov-lockwait: target pid %d exited\n", pid);
      else
        std::fprintf(stderr, "jitprov-lockwait: the tree's root, pid %d, exited\n", o_.attach.tree);
    }
    // The probes detached before the last read of the maps: the final figures and the
    // waits file (drained after it) hold the same waits (a wait that ended in between
    // was in the file alone).
    bpf_.detach();
    if (!out_failed_ && (o_.interval == 0 || target_gone_ || g_stop)) report(true);
    if (rc_ != 0) return rc_;
    const int rc = finish();
    // The report not written (a full disk, a closed pipe: SIGPIPE is ignored): said, and
    // not exit 0.
    if (out_failed_ || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      std::fprintf(stderr, "jitprov-lockwait: the report could not be written to stdout\n");
      return 1;
    }
    return rc;
  }

 private:
  // Up to 50 ms: watches the target's exit and writes the wait records that came.
  void idle(int pidfd) {
    pollfd p[2];
    nfds_t n = 0;
    if (pidfd >= 0) p[n++] = {pidfd, POLLIN, 0};
    if (waits_ != nullptr) p[n++] = {waits_->pollFd(), POLLIN, 0};
    if (n == 0) {
      usleep(50000);
    } else if (poll(p, n, 50) > 0 && pidfd >= 0 && (p[0].revents & POLLIN) != 0) {
      target_gone_ = true;
    }
    if (waits_ != nullptr && !waits_->consume() && !said_waits_error_) {
      // Said when it happens, not only at the end; the waits from here on are counted.
      std::fprintf(stderr, "jitprov-lockwait: --waits %s: %s: the waits from here on are not written\n",
                   o_.waits.c_str(), waits_->error().c_str());
      said_waits_error_ = true;
    }
  }

  // The waits file written whole, and every loss said: the exit status.
  int finish() {
    const unsigned long long bad = now_.drops[LW_BAD_ARG], dropped = now_.drops[LW_WAIT_RECORD_LOST];
    if (waits_ != nullptr) {
      if (const std::string why = waits_->finish(); !why.empty()) {
        std::fprintf(stderr, "jitprov-lockwait: --waits %s: %s\n", o_.waits.c_str(), why.c_str());
        return 1;
      }
      std::fprintf(stderr, "jitprov-lockwait: %llu waits written to %s\n", (unsigned long long)waits_->written(),
                   o_.waits.c_str());
      if (dropped > 0)
        std::fprintf(stderr,
                     "jitprov-lockwait: %llu WAIT RECORDS DROPPED: the ring buffer was full; %s lacks them (the "
                     "figures above count every wait)\n",
                     dropped, o_.waits.c_str());
    }
    if (bad > 0) std::fprintf(stderr, "jitprov-lockwait: %llu samples lost (probe arguments it could not use)\n", bad);
    return bad > 0 || dropped > 0 ? 3 : 0;
  }

  void report(bool final_report) {
    if (!bpf_.readTotals(&now_)) {
      std::fprintf(stderr, "jitprov-lockwait: read BPF maps: %s\n", std::strerror(errno));
      rc_ = 1;
      return;
    }
    const auto tnow = std::chrono::steady_clock::now();
    const bool whole = o_.interval == 0;
    const jitprov::lw::Totals d = whole ? now_ : jitprov::lw::delta(now_, prev_);
    const double secs = std::chrono::duration<double>(tnow - (whole ? t0_ : last_)).count();
    if (!target_gone_ && o_.attach.pid > 0) path_ = jitprov::lw::uprobePath(o_.attach.pid);
    if (o_.json) {
      nlohmann::json j = jitprov::lw::toJson(d, secs, waits_ != nullptr);
      j["final"] = final_report;
      j["target_exited"] = target_gone_;
      j["uprobe_path"] = path_;
      std::printf("%s\n", jitprov::tools::jsonText(j).c_str());
    } else {
      jitprov::lw::printHuman(d, secs, waits_ != nullptr);
      if (o_.attach.verbose)
        std::printf("uprobe path: %s%s\n", path_.c_str(),
                    path_ == "trampoline" ? " ([uprobes-trampoline] mapped: the kernel calls the probes, no int3 trap)"
                    : path_ == "int3"     ? " (no [uprobes-trampoline] in the process: int3 traps)"
                                          : "");
    }
    // A report that cannot be written (stdout closed: `| head`, a full disk) ends the
    // reports, as SIGPIPE would have, but with the waits file still written.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) out_failed_ = true;
    prev_ = now_;
    last_ = tnow;
  }

  const Options& o_;
  jitprov::lw::Bpf& bpf_;
  jitprov::lw::WaitWriter* const waits_;  // --waits, else nullptr
  jitprov::lw::Totals prev_{}, now_{};
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = t0_;
  bool target_gone_ = false, said_waits_error_ = false, out_failed_ = false;
  int rc_ = 0;
  std::string path_ = "unknown";  // the uprobe path last seen in the target (uprobePath)
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (auto rc = parseOptions(argc, argv, &o)) return *rc;
  // Before anything is created (the --waits temporary): a stop asked for while the probes
  // attach ends with the report of what came, never with the temporary left behind; a
  // closed stdout is an error said, not a SIGPIPE that loses the waits file.
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  if (const std::string why = checkTarget(&o.attach); !why.empty()) {
    std::fprintf(stderr, "jitprov-lockwait: %s\n", why.c_str());
    return 1;
  }
  // The target held from here (a pidfd): a pid that ends and is reused while the probes
  // attach is not taken for it. With --tree, its root: once it exits nothing descends from
  // it any more (its children go to another parent), and the tool ends as with -p.
  const int pid = o.attach.pid;
  const int watched = pid != 0 ? pid : o.attach.tree;
  const int pidfd = watched != 0 ? int(syscall(SYS_pidfd_open, watched, 0)) : -1;
  if (watched != 0 && pidfd < 0) {  // without it the target's exit would go unseen: reports until Ctrl-C
    std::fprintf(stderr, "jitprov-lockwait: pidfd_open %d: %s\n", watched, std::strerror(errno));
    return 1;
  }
  jitprov::lw::WaitWriter waits;
  o.attach.waits = !o.waits.empty();
  if (const std::string why = o.attach.waits ? waits.open(o.waits) : ""; !why.empty()) {
    std::fprintf(stderr, "jitprov-lockwait: --waits %s: %s\n", o.waits.c_str(), why.c_str());
    return 1;
  }
  jitprov::lw::Bpf bpf;
  std::string why = bpf.attach(o.attach);
  if (why.empty() && o.attach.waits) why = waits.start(bpf.waitsMapFd());
  if (!why.empty()) {
    std::fprintf(stderr, "jitprov-lockwait: %s\n", why.c_str());
    return 1;
  }
  std::fprintf(stderr, "jitprov-lockwait: attached to %s%s; Ctrl-C to stop\n",
               (o.attach.shown.empty() ? o.attach.binary : o.attach.shown).c_str(),
               pid ? (" pid " + std::to_string(pid)).c_str() : "");
  const int rc = Session(o, bpf, o.attach.waits ? &waits : nullptr).run(pidfd);
  if (pidfd >= 0) close(pidfd);
  return rc;
}
