/* SPDX-License-Identifier: MIT */
// The thread that publishes what a host client's callbacks queued (the JVM agent's
// CompiledMethodLoad/Unload, node's JIT code events): docs/jvm-agent.md, "Publication
// off the Service Thread". The client owns the queue and its mutex; this owns the
// thread and when it wakes:
//   - while events come, it publishes every `ms` (a batch gathers in between) and
//     nobody wakes it, unless `batch` events are queued first: the callback that queues
//     the batch-th wakes it, so that a burst is published in batches of about that many
//     instead of waiting out the period;
//   - a wait of `ms` that finds nothing queued ends that: the thread waits untimed, and
//     the callback that queues the next event wakes it (one wake-up a burst, not one a
//     batch: a wake-up and a timed wait cost 30-50 us on this project's VM).
// A batch's first events cost the most (the registry's, lttng-ust's and the client's
// data and code are cold after the host's own threads ran): docs/jvm-agent.md.
#pragma once

#include "host_agent.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace jitprov::hostagent {

class Publisher;

// Who published a batch: the publisher thread, a rundown's prepare, a callback (inline).
enum class By { kThread, kPrepare, kInline };

// The batches a client published, for its stats file. Guarded by the client's mutex of
// the publication.
struct BatchStats {
  uint64_t by[3] = {0, 0, 0};  // By
  uint64_t events = 0, largest = 0;
  Hist ns;  // a batch's publication (wall time)
  void add(By who, size_t n, uint64_t batch_ns);
  // `  "publish": {...},` (mode "batch" when the publisher ran, else "inline") and
  // `  "publish_batch": {...},`, each with a newline.
  void json(FILE* f, const Publisher& p, size_t queued_now) const;
};

// Publishes a client's queue in its order: swaps `queued` (qmu held for the swap alone,
// so that the callbacks queue on) with the empty `publishing`, calls each(publishing,
// event) for every event, counts the batch and clears it. The caller holds the mutex of
// the publication (lock order: it, then qmu). Queue: `events` and clear().
template <class Queue, class Each>
void publishBatch(std::mutex& qmu, Queue& queued, Queue& publishing, BatchStats& stats, By who, Each each) {
  {
    std::lock_guard<std::mutex> q(qmu);
    if (queued.events.empty()) return;
    std::swap(queued, publishing);  // the callbacks get the cleared buffers
  }
  const uint64_t t0 = nowNs();
  for (const auto& ev : publishing.events) each(publishing, ev);
  stats.add(who, publishing.events.size(), nowNs() - t0);
  publishing.clear();
}

class Publisher {
 public:
  using Publish = void (*)(void* ctx);  // publishes the queue; called without `mu` held
  using Count = size_t (*)(void* ctx);  // the events queued; called with `mu` held

  // Starts the thread (named kPublishThread), which publishes every `ms` while events
  // come, or as soon as `batch` are queued (0: the period alone). False: not started
  // (ms == 0, or the thread could not be made: `who`, the client's name, says so on
  // stderr); the client's callbacks publish inline.
  bool start(const char* who, std::mutex* mu, uint32_t ms, size_t batch, Publish publish, Count count, void* ctx);
  // With `mu` held: whether what a callback queues is the thread's to publish (started,
  // not stopped); false: the callback publishes it itself (inline).
  bool deferred() const { return deferred_; }
  // The period the thread publishes at (`ms`), 0 if it never started: the mode of the
  // client's stats, after stop() too; and the count that ends a batch early (0: none).
  uint32_t periodMs() const { return ms_; }
  size_t batchEvents() const { return batch_; }
  // With `mu` held, after queueing an event (`queued`: the events queued now): true when
  // the thread must be woken, by wake() once `mu` is released: it waits untimed (only
  // the first such caller gets true), or it gathers a batch and `queued` reached `batch`
  // (the first caller to reach it).
  bool mustWake(size_t queued) {
    if (idle_) {
      idle_ = false;
      return true;
    }
    if (!gathering_ || full_ || batch_ == 0 || queued < batch_) return false;
    full_ = true;
    return true;
  }
  void wake() { cv_.notify_one(); }
  // From here the callbacks publish inline (deferred() false); stops and joins the
  // thread (what is still queued is the client's to publish). In the child of a fork()
  // (the thread is the parent's): forgets it.
  void stop();
  ~Publisher() { stop(); }
  bool running() const { return thread_.joinable(); }
  // Its wake-ups by a callback from an untimed wait (mustWake() true), which are its
  // waits that found the queue empty and turned untimed; `mu` held.
  uint64_t woken() const { return woken_; }
  // Its batches ended early by `batch` events queued (a wake-up, mustWake() true, or
  // found full when the thread looked) and not empty when it went to publish them (a
  // rundown's prepare may still publish them first); `mu` held.
  uint64_t full() const { return full_batches_; }

 private:
  void main();

  // First: what a callback reads (deferred(), mustWake()), in the line it reaches first.
  // Guarded by *mu_: idle_ (an untimed wait), gathering_ (a timed wait for a batch),
  // full_ (that wait's batch is full: woken).
  bool idle_ = false, gathering_ = false, full_ = false, deferred_ = false, stop_ = false;
  size_t batch_ = 0;
  std::mutex* mu_ = nullptr;
  uint32_t ms_ = 0;
  Publish publish_ = nullptr;
  Count count_ = nullptr;
  void* ctx_ = nullptr;
  std::condition_variable cv_;
  std::thread thread_;
  int owner_pid_ = 0;                      // the process that started the thread
  uint64_t woken_ = 0, full_batches_ = 0;  // guarded by *mu_
};

}  // namespace jitprov::hostagent
