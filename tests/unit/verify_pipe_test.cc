// SPDX-License-Identifier: MIT
// jitprov-verify's pipe between its reading and checking threads (tools/verify/verify_pipe.h):
// every batch consumed once, in order, and what the consumer wrote visible after drain();
// a consumer's failure stops the producer without a hang. Run under ThreadSanitizer by
// tools/check (the tsan setup), where a missing happens-before is a reported race.
#include "verify_pipe.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using jitprov::verify::BatchPipe;

struct Numbers {
  std::vector<uint64_t> v;
  void clear() { v.clear(); }
};

// What the consumer builds: plain fields, read by the test thread after drain() only.
struct Seen {
  uint64_t next = 0;  // the number expected next
  uint64_t batches = 0;
  bool in_order = true;
};

void produce(BatchPipe<Numbers>& pipe, uint64_t from, uint64_t to, size_t per_batch) {
  for (uint64_t i = from; i < to; ++i) {
    pipe.current().v.push_back(i);
    if (pipe.current().v.size() == per_batch) pipe.push();
  }
}

TEST(BatchPipe, EveryBatchConsumedOnceInOrderAndVisibleAfterDrain) {
  for (const bool threaded : {true, false}) {
    Seen seen;
    BatchPipe<Numbers> pipe(threaded, 2, [&](Numbers& b) {
      ++seen.batches;
      for (uint64_t x : b.v) {
        if (x != seen.next) seen.in_order = false;
        seen.next = x + 1;
      }
    });
    produce(pipe, 0, 100000, 97);
    pipe.drain();  // the last, partial batch too
    EXPECT_EQ(seen.next, 100000u) << "threaded " << threaded;
    EXPECT_TRUE(seen.in_order);
    const uint64_t batches = seen.batches;
    EXPECT_GE(batches, 100000u / 97);
    // The pipe goes on after a drain, and a second drain with nothing new changes nothing.
    produce(pipe, 100000, 150000, 1000);
    pipe.drain();
    pipe.drain();
    EXPECT_EQ(seen.next, 150000u);
    EXPECT_TRUE(seen.in_order);
  }
}

TEST(BatchPipe, AFailingConsumerStopsTheProducerWithoutAHang) {
  for (const bool threaded : {true, false}) {
    uint64_t consumed = 0;
    BatchPipe<Numbers> failing(threaded, 1, [&](Numbers& b) {
      consumed += b.v.size();
      if (consumed >= 1000) failing.fail();
    });
    uint64_t pushed = 0;
    for (uint64_t i = 0; i < 1000000 && !failing.failed(); ++i) {
      failing.current().v.push_back(i);
      if (failing.current().v.size() == 100) {
        failing.push();  // never blocks for good: a failed pipe takes batches and drops them
        pushed += 100;
      }
    }
    failing.drain();
    EXPECT_TRUE(failing.failed());
    EXPECT_EQ(consumed, 1000u) << "threaded " << threaded << ": nothing consumed after the failure";
    EXPECT_LT(pushed, 1000000u) << "the producer saw the failure and stopped";
    // More pushes after the failure are dropped.
    failing.current().v.push_back(1);
    failing.drain();
    EXPECT_EQ(consumed, 1000u);
  }
}

}  // namespace
