/* SPDX-License-Identifier: MIT */
// jitprov-lockwait's BPF side from user space: the skeleton opened, loaded and attached
// to the jitprov USDT probes (libbpf), and its maps read.
#pragma once

#include "report.h"

#include <string>

struct lockwait;  // the BPF skeleton (lockwait.skel.h)

namespace jitprov::lw {

struct AttachOptions {
  int pid = 0;         // 0: any process
  std::string binary;  // the object with the probes
  bool locks_only = false;
  bool verbose = false;  // libbpf's own messages on stderr
  bool waits = false;    // a record per wait into the `waits` ring buffer (--waits)
  std::string shown;     // the object's name as the target maps it, for messages ("": binary)
  int tree = 0;          // --tree: only processes that descend from this one (0: not asked)
};

// The loaded programs; detached and freed by the destructor.
class Bpf {
 public:
  Bpf() = default;
  Bpf(const Bpf&) = delete;
  Bpf& operator=(const Bpf&) = delete;
  ~Bpf();
  // Opens, loads and attaches: "" when attached, else a one-line error (without the
  // tool's name).
  std::string attach(const AttachOptions& o);
  // The probes detached (the maps kept): no wait counted, and no record made, after it.
  void detach();
  // Sums the per-CPU maps into *t; false (errno set) when a map cannot be read.
  bool readTotals(Totals* t) const;
  // The `waits` ring buffer map (records only when attached with waits).
  int waitsMapFd() const;

 private:
  lockwait* skel_ = nullptr;
};

// How the kernel runs the attached probes in process `pid`: "trampoline" when the
// process maps a [uprobes-trampoline] (uprobes on 5-byte NOPs optimized into calls),
// "int3" otherwise (traps; also before a first hit), "unknown" without a live pid.
std::string uprobePath(int pid);

}  // namespace jitprov::lw
