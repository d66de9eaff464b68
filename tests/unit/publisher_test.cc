// SPDX-License-Identifier: MIT
// hostagent::Publisher (tools/hostagent/publisher.h): the thread that publishes what a
// host client's callbacks queued. Behaviour only; no timing is asserted (every wait has
// a deadline of seconds, far beyond the periods used).
#include "publisher.h"
#include "wait_until.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using jitprov::hostagent::Publisher;
using namespace std::chrono_literals;

struct Client {
  std::mutex mu;  // the queue's
  std::vector<int> queued;
  std::vector<int> published;  // the thread's alone (joined before it is read)
  std::mutex pub_mu;           // published, read while the thread runs
  Publisher p;

  static size_t count(void* c) { return static_cast<Client*>(c)->queued.size(); }
  static void publish(void* c) {
    auto* self = static_cast<Client*>(c);
    std::vector<int> batch;
    {
      std::lock_guard<std::mutex> g(self->mu);
      batch.swap(self->queued);
    }
    std::lock_guard<std::mutex> g(self->pub_mu);
    self->published.insert(self->published.end(), batch.begin(), batch.end());
  }
  size_t publishedCount() {
    std::lock_guard<std::mutex> g(pub_mu);
    return published.size();
  }
  // Queues v as a callback does: wakes the thread when it says so.
  void queue(int v) {
    bool wake;
    {
      std::lock_guard<std::mutex> g(mu);
      queued.push_back(v);
      wake = p.mustWake(queued.size());
    }
    if (wake) p.wake();
  }
  bool waitPublished(size_t n) {
    return jitprov::test::waitUntil([&] { return publishedCount() >= n; }, std::chrono::seconds(10));
  }
};

TEST(Publisher, PublishesWhatIsQueuedInOrder) {
  Client c;
  ASSERT_TRUE(c.p.start("test", &c.mu, 1, 0, &Client::publish, &Client::count, &c));
  for (int i = 0; i < 1000; ++i) c.queue(i);
  ASSERT_TRUE(c.waitPublished(1000));
  c.p.stop();
  std::vector<int> want(1000);
  for (int i = 0; i < 1000; ++i) want[size_t(i)] = i;
  EXPECT_EQ(c.published, want);
}

// Idle, it waits untimed until a callback wakes it: the first callback to queue is told
// to wake it, the next ones are not, and the event is published.
TEST(Publisher, AnIdleThreadIsWokenOnceByTheFirstEvent) {
  Client c;
  ASSERT_TRUE(c.p.start("test", &c.mu, 1, 0, &Client::publish, &Client::count, &c));
  bool woke = false, again = true;
  for (int i = 0; i < 10000 && !woke; ++i) {  // until its waits found the queue empty
    {
      std::lock_guard<std::mutex> g(c.mu);
      woke = c.p.mustWake(1);
      if (woke) {
        c.queued.push_back(7);
        again = c.p.mustWake(2);  // a second event in the same burst wakes nobody
        c.queued.push_back(8);
      }
    }
    if (woke) c.p.wake();
    if (!woke) std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(woke) << "the thread never went idle";
  EXPECT_FALSE(again);
  ASSERT_TRUE(c.waitPublished(2));
  c.p.stop();
  EXPECT_EQ(c.published, (std::vector<int>{7, 8}));
  std::lock_guard<std::mutex> g(c.mu);
  EXPECT_EQ(c.p.woken(), 1u);
}

// With a batch size, a batch that gathers ends when that many are queued: the callback
// that queues the batch-th event is told to wake the thread (once), and the batch is
// published long before its period (an hour) ends. Without one, the period rules.
TEST(Publisher, ABatchEndsEarlyWhenItIsFull) {
  Client c;
  ASSERT_TRUE(c.p.start("test", &c.mu, 3600000, 64, &Client::publish, &Client::count, &c));
  // The thread gathers a batch for the hour from its start; the 64th event ends it
  // (a wake-up if the thread waits by then, else it finds the batch full when it looks).
  for (int i = 0; i < 64; ++i) c.queue(i);
  ASSERT_TRUE(c.waitPublished(64)) << "a full batch waited for its period";
  for (int i = 64; i < 128; ++i) c.queue(i);
  ASSERT_TRUE(c.waitPublished(128)) << "the next full batch waited for its period";
  for (int i = 128; i < 138; ++i) c.queue(i);  // not a batch: waits for the hour
  c.p.stop();
  std::vector<int> want(128);
  for (int i = 0; i < 128; ++i) want[size_t(i)] = i;
  EXPECT_EQ(c.published, want);
  EXPECT_EQ(c.queued.size(), 10u);
  EXPECT_EQ(c.p.batchEvents(), 64u);
  EXPECT_EQ(c.p.full(), 2u);  // each batch of 64, woken or found full

  Client d;  // no batch size: a full queue wakes nobody
  ASSERT_TRUE(d.p.start("test", &d.mu, 3600000, 0, &Client::publish, &Client::count, &d));
  for (int i = 0; i < 10000; ++i) {
    std::lock_guard<std::mutex> g(d.mu);
    d.queued.push_back(i);
    ASSERT_FALSE(d.p.mustWake(d.queued.size()) && i > 0) << "woken at " << i;
  }
  d.p.stop();
}

// Stopped, while idle or while a long period runs: it returns at once (joined), and
// what is still queued stays for the client to publish.
TEST(Publisher, StopJoinsAndLeavesTheQueueToTheClient) {
  Client c;
  ASSERT_TRUE(c.p.start("test", &c.mu, 3600000, 0, &Client::publish, &Client::count, &c));
  c.queue(1);  // waits an hour to be published
  c.p.stop();
  EXPECT_FALSE(c.p.running());
  EXPECT_TRUE(c.published.empty());
  EXPECT_EQ(c.queued, std::vector<int>{1});
  Publisher never_started;
  never_started.stop();  // a no-op
}

// Who publishes what a callback queues: the thread from start() to stop(), the callback
// itself before, after, and when publication is inline (a period of 0: no thread).
TEST(Publisher, DeferredFromStartToStop) {
  Client c;
  EXPECT_FALSE(c.p.deferred());
  ASSERT_FALSE(c.p.start("test", &c.mu, 0, 0, &Client::publish, &Client::count, &c));
  EXPECT_FALSE(c.p.running());
  EXPECT_FALSE(c.p.deferred());
  ASSERT_TRUE(c.p.start("test", &c.mu, 1, 0, &Client::publish, &Client::count, &c));
  {
    std::lock_guard<std::mutex> g(c.mu);
    EXPECT_TRUE(c.p.deferred());
  }
  c.p.stop();
  EXPECT_FALSE(c.p.deferred());
}

// The child of a fork() has no publisher thread (only the parent's handle of it): its
// stop() forgets the thread instead of joining one that is not there, and returns.
TEST(Publisher, StopInAForkedChildReturns) {
  Client c;
  ASSERT_TRUE(c.p.start("test", &c.mu, 1, 0, &Client::publish, &Client::count, &c));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(30);  // a hang is a failure, not a stuck test
    c.p.stop();
    _exit(c.p.running() || c.p.deferred() ? 1 : 0);  // the child's callbacks publish inline
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_TRUE(c.p.running());  // the parent's thread runs on
  c.p.stop();
}

}  // namespace

namespace {

// publish=MS[/EVENTS]|inline, both clients' option: what is set, what is refused (and
// then nothing is set).
TEST(ParsePublish, PeriodEventsInlineAndRefusals) {
  using jitprov::hostagent::parsePublish;
  uint32_t ms = 7;
  size_t events = 9;
  std::string why;
  ASSERT_TRUE(parsePublish("250", &ms, &events, &why));
  EXPECT_EQ(ms, 250u);
  EXPECT_EQ(events, 9u);  // not given: kept
  ASSERT_TRUE(parsePublish("3600000/0", &ms, &events, &why));
  EXPECT_EQ(ms, 3600000u);
  EXPECT_EQ(events, 0u);
  ASSERT_TRUE(parsePublish("1/10000000", &ms, &events, &why));
  EXPECT_EQ(ms, 1u);
  EXPECT_EQ(events, 10000000u);
  ASSERT_TRUE(parsePublish("inline", &ms, &events, &why));
  EXPECT_EQ(ms, 0u);
  for (const char* bad : {"", "0", "3600001", "5ms", "-1", "100/", "/64", "100/x", "100/-1", "100/10000001", "100/2/3",
                          " 100", "inline/5"}) {
    ms = 7;
    events = 9;
    why.clear();
    EXPECT_FALSE(parsePublish(bad, &ms, &events, &why)) << bad;
    EXPECT_EQ(ms, 7u) << bad;
    EXPECT_EQ(events, 9u) << bad;
    EXPECT_EQ(why, "inline, MS or MS/EVENTS (MS 1-3600000, EVENTS 0-10000000)") << bad;
  }
}

// hostagent::LiveCounts: a method's live versions, counted; its last dropped says so.
TEST(LiveCounts, CountsEachMethodsVersionsAndSaysWhenTheLastGoes) {
  jitprov::hostagent::LiveCounts c;
  EXPECT_EQ(c.count(7), 0u);
  EXPECT_FALSE(c.drop(7));  // none: nothing to say
  c.add(7);
  c.add(7);
  c.add(9);
  EXPECT_EQ(c.count(7), 2u);
  EXPECT_FALSE(c.drop(7));
  EXPECT_EQ(c.count(7), 1u);
  EXPECT_TRUE(c.drop(7));  // its last
  EXPECT_EQ(c.count(7), 0u);
  EXPECT_FALSE(c.drop(7));
  EXPECT_EQ(c.count(9), 1u);
  // Many methods, through the index's growth: each count its own.
  for (uint64_t m = 1; m <= 100000; ++m)
    for (uint64_t k = 0; k < m % 3 + 1; ++k) c.add(m * 16);
  for (uint64_t m = 1; m <= 100000; ++m) {
    ASSERT_EQ(c.count(m * 16), m % 3 + 1) << m;
    for (uint64_t k = 0; k < m % 3; ++k) ASSERT_FALSE(c.drop(m * 16)) << m;
    ASSERT_TRUE(c.drop(m * 16)) << m;
  }
  EXPECT_EQ(c.count(9), 1u);
}

}  // namespace
