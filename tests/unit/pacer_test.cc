// SPDX-License-Identifier: MIT
// Unit tests of the rundown's rate cap (pacer.h) on made-up times: the rate holds, and a
// rundown that fell behind gets back at most the burst, not the whole lag.
#include "pacer.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace jitprov {
namespace {

constexpr uint64_t kSec = 1000000000ULL;

TEST(Pacer, Unpaced) {
  Pacer p(0, 4096, 0);
  EXPECT_FALSE(p.paced());
  EXPECT_EQ(p.dueNs(5, 1000000), 0u);
}

TEST(Pacer, HoldsTheRate) {
  Pacer p(1000, 100, 10 * kSec);  // 1000 events/s
  EXPECT_EQ(p.dueNs(10 * kSec, 0), 0u);
  // 500 events emitted at once: not before half a second after the start.
  EXPECT_EQ(p.dueNs(10 * kSec + 1000, 500), 10 * kSec + kSec / 2);
  // On schedule, nothing to wait for.
  EXPECT_EQ(p.dueNs(10 * kSec + kSec / 2, 500), 0u);
}

TEST(Pacer, CreditAfterAStallIsTheBurstOnly) {
  Pacer p(1000, 100, 0);
  EXPECT_EQ(p.dueNs(kSec, 1000), 0u);  // on schedule at 1 s
  // Descheduled for 10 s. The unbounded schedule would let 10 000 events out at once;
  // the bucket lets 100 (the burst), then the rate again.
  const uint64_t now = 11 * kSec;
  EXPECT_EQ(p.dueNs(now, 1000), 0u);
  EXPECT_EQ(p.dueNs(now, 1100), 0u);               // the burst
  EXPECT_EQ(p.dueNs(now, 1200), now + kSec / 10);  // 100 more: a tenth of a second
  EXPECT_EQ(p.dueNs(now, 11000), now + 9900 * kSec / 1000);
}

TEST(Pacer, AWalkSlowerThanTheRateIsNotHeldBack) {
  Pacer p(1000, 100, 0);
  // 500 events a second, half the rate: never a wait, and never more than the burst
  // ahead once the walk speeds up.
  for (uint64_t s = 1; s <= 20; ++s) EXPECT_EQ(p.dueNs(s * kSec, s * 500), 0u);
  EXPECT_EQ(p.dueNs(20 * kSec, 10000 + 100), 0u);
  EXPECT_GT(p.dueNs(20 * kSec, 10000 + 200), 20 * kSec);
}

}  // namespace
}  // namespace jitprov
