/* SPDX-License-Identifier: MIT */
// The clock every jitprov duration and timestamp is read from: CLOCK_MONOTONIC, in
// nanoseconds (the runtime's measurements, the rundown results' begin_ns, and
// bpf_ktime_get_ns() in jitprov-lockwait's BPF programs). Part of the common library.
#pragma once

#include <cstdint>
#include <ctime>

namespace jitprov {

inline uint64_t monotonicNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ULL + uint64_t(ts.tv_nsec);
}

}  // namespace jitprov
