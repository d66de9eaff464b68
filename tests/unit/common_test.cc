// SPDX-License-Identifier: MIT
// The common library (common/): list splitting, the log2 quantile, the site names.
#include <jitprov/hist.h>
#include <jitprov/names.h>
#include <jitprov/split.h>

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace jitprov {
namespace {

using Pieces = std::vector<std::string_view>;

TEST(Common, SplitListKeepsEmptyPieces) {
  EXPECT_EQ(splitList("locked,lockfree"), (Pieces{"locked", "lockfree"}));
  EXPECT_EQ(splitList(""), (Pieces{""}));
  EXPECT_EQ(splitList("a,,b,"), (Pieces{"a", "", "b", ""}));
  EXPECT_EQ(splitList("k=v;x", ';'), (Pieces{"k=v", "x"}));
}

TEST(Common, Log2QuantileOnAPlainArray) {
  uint64_t b[kHistBuckets] = {};
  EXPECT_EQ(log2QuantileUpperBound(b, kHistBuckets, 0, 0, 0.5), 0u);
  b[log2Bucket(100)] = 99;
  b[log2Bucket(5000)] = 1;
  EXPECT_EQ(log2QuantileUpperBound(b, kHistBuckets, 100, 5000, 0.5), 127u);
  EXPECT_EQ(log2QuantileUpperBound(b, kHistBuckets, 100, 5000, 1.0), 5000u);  // capped by the maximum
  EXPECT_EQ(log2Bucket(~0ULL), JITPROV_HIST_BUCKETS - 1);
}

TEST(Common, SiteNamesAndRanges) {
  EXPECT_EQ(lockSiteOrUnknown(0), "unknown");
  EXPECT_EQ(lockSiteOrUnknown(JITPROV_BLOCKED_BY_UNKNOWN), "unknown");
  EXPECT_EQ(lockSiteOrUnknown(kRundownSite), "rundown");
  EXPECT_EQ(lockSiteOrUnknown(kLockSiteMax + 1), "invalid");
  EXPECT_EQ(lockSiteName(LockSite(kLastJitSite)), "unload");
}

}  // namespace
}  // namespace jitprov
