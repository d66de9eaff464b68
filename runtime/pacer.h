/* SPDX-License-Identifier: MIT */
// Pacer: the rundown's rate cap (RundownEngine::setMaxRate), a token bucket of bounded
// depth. The rundown asks, between read sections, until when it must sleep so that it
// has emitted no more than `rate` events a second; pure arithmetic on times the caller
// reads, so that it is tested without a clock.
//
// Why the depth: the schedule "event n is due at start + n / rate" gives a rundown that
// fell behind (its thread descheduled, the walk slowed by a busy machine) unbounded
// credit, which it then spends at full speed: a rundown of the sim stopped for 2 s at
// 250 000 events/s let 182 538 records out in 100 ms, several times what lttng's
// default channel holds (4 x 512 KiB a CPU). With the bucket, a rundown that fell
// behind resumes at most `burst` events ahead of the rate, never more.
#pragma once

#include <cstdint>

namespace jitprov {

class Pacer {
 public:
  // rate: events a second, 0 = unpaced. burst: the most events emitted at full speed
  // after falling behind.
  Pacer(uint64_t rate, uint64_t burst, uint64_t start_ns) noexcept
      : rate_(rate), burst_ns_(rate == 0 ? 0 : burst * 1000000000ULL / rate), base_ns_(start_ns) {}

  bool paced() const noexcept { return rate_ != 0; }

  // The time until which to sleep before emitting more, `emitted` events emitted so far,
  // at time `now` (0 when there is no need to). Rebases the schedule when it lags now by
  // more than the burst, which is how credit stays bounded.
  uint64_t dueNs(uint64_t now, uint64_t emitted) noexcept {
    if (rate_ == 0) return 0;
    uint64_t due = base_ns_ + (emitted - base_emitted_) * 1000000000ULL / rate_;
    if (due + burst_ns_ < now) {  // fell behind: drop the credit beyond the burst
      base_ns_ = now - burst_ns_;
      base_emitted_ = emitted;
      due = base_ns_;
    }
    return due > now ? due : 0;
  }

 private:
  const uint64_t rate_;
  const uint64_t burst_ns_;
  uint64_t base_ns_;
  uint64_t base_emitted_ = 0;
};

}  // namespace jitprov
