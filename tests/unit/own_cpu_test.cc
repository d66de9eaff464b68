// SPDX-License-Identifier: MIT
// hostagent::OwnCpu, the agents' account of their own CPU time (stats files): what it
// counts, what it leaves out, and the threads it names.
#include "host_agent.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

namespace {

using jitprov::hostagent::OwnCpu;
using jitprov::hostagent::threadCpuNs;

std::string jsonOf(OwnCpu& own) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  own.json(f);
  std::fclose(f);
  std::string s(buf, len);
  free(buf);
  return s;
}

// Burns at least `ns` of this thread's CPU.
void burn(uint64_t ns) {
  const uint64_t t0 = threadCpuNs();
  volatile uint64_t x = 0;
  while (threadCpuNs() - t0 < ns) x = x + 1;
}

TEST(OwnCpu, OffCountsNothing) {
  OwnCpu own;  // on == false: stats not asked for
  {
    OwnCpu::Span start(own, true);
    OwnCpu::Span cb(own, false);
    burn(1000000);
  }
  EXPECT_EQ(own.callbacks.load(), 0u);
  EXPECT_EQ(own.start_ns.load(), 0u);
  EXPECT_EQ(own.callbacks_wall_ns.load(), 0u);
}

TEST(OwnCpu, EveryCallbackCountedWithItsTime) {
  OwnCpu own;
  own.on = true;
  for (int i = 0; i < 50; ++i) {
    OwnCpu::Span cb(own, false);
    burn(20000);
  }
  EXPECT_EQ(own.callbacks.load(), 50u);
  // Their wall time: at least the CPU they burnt, 50 x 20 us.
  EXPECT_GE(own.callbacks_wall_ns.load(), 50u * 20000u);
  EXPECT_EQ(own.start_ns.load(), 0u);
}

TEST(OwnCpu, ASpanInsideAnotherCountsOnce) {
  // A callback that runs inside the start (the JVM agent ends its start span before the
  // replays, so that theirs count as callbacks): its time is the start's, and it is not
  // a callback of its own.
  OwnCpu own;
  own.on = true;
  {
    OwnCpu::Span start(own, true);
    for (int i = 0; i < 40; ++i) {
      OwnCpu::Span cb(own, false);
      burn(10000);
    }
  }
  EXPECT_EQ(own.callbacks.load(), 0u);
  EXPECT_EQ(own.callbacks_wall_ns.load(), 0u);
  EXPECT_GE(own.start_ns.load(), 40u * 10000u);
  // Nesting unwound: the next callback is an outermost one again.
  { OwnCpu::Span cb(own, false); }
  EXPECT_EQ(own.callbacks.load(), 1u);
}

TEST(OwnCpu, NamesTheAgentsThreadsOnly) {
  OwnCpu own;
  own.on = true;
  std::atomic<int> stage{0};
  auto named = [&stage](const char* name) {
    return std::thread([&stage, name] {
      pthread_setname_np(pthread_self(), name);
      burn(2000000);
      stage.fetch_add(1);
      while (stage.load() < 100) std::this_thread::yield();
    });
  };
  std::thread rundown = named("jitprov-rundown"), ust = named("java-ust"), other = named("C2 CompilerThre");
  while (stage.load() < 3) std::this_thread::yield();
  own.snapshotThreads();
  stage = 100;
  rundown.join();
  ust.join();
  other.join();
  const std::string j = jsonOf(own);  // the snapshot, not now (the threads are gone)
  EXPECT_NE(j.find("\"total_ns\": "), std::string::npos) << j;
  EXPECT_NE(j.find("{\"name\": \"jitprov-rundown\", \"ns\": "), std::string::npos) << j;
  EXPECT_NE(j.find("{\"name\": \"lttng-ust\", \"ns\": "), std::string::npos) << j;
  EXPECT_EQ(j.find("C2"), std::string::npos) << j;
  // Two threads, each at least the 2 ms it burnt.
  const size_t at = j.find("\"threads_ns\": ");
  ASSERT_NE(at, std::string::npos) << j;
  EXPECT_GE(std::stoull(j.substr(at + 14)), 4000000u) << j;
}

}  // namespace
