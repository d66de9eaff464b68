// SPDX-License-Identifier: MIT
#include "publisher.h"

#include "host_agent.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <system_error>

namespace jitprov::hostagent {

bool Publisher::start(const char* who, std::mutex* mu, uint32_t ms, size_t batch, Publish publish, Count count,
                      void* ctx) {
  if (ms == 0) return false;
  mu_ = mu;
  ms_ = ms;
  batch_ = batch;
  publish_ = publish;
  count_ = count;
  ctx_ = ctx;
  owner_pid_ = int(getpid());
  try {
    thread_ = std::thread([this] { main(); });
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "%s: start the publisher thread: %s: events are published inline\n", who, e.what());
    ms_ = 0;
    batch_ = 0;
    return false;
  }
  std::lock_guard<std::mutex> g(*mu_);
  deferred_ = true;
  return true;
}

void Publisher::main() {
  pthread_setname_np(pthread_self(), kPublishThread);
  std::unique_lock<std::mutex> q(*mu_);
  bool found_empty = false;  // the last wait of ms_ found nothing queued
  while (!stop_) {
    const size_t n = count_(ctx_);
    if (n == 0) {
      if (found_empty) {
        idle_ = true;
        cv_.wait(q, [this] { return stop_ || !idle_; });  // mustWake() cleared idle_
        if (!stop_) ++woken_;
        found_empty = false;
        continue;
      }
      found_empty = true;
    } else {
      found_empty = false;
    }
    bool full = true;                 // full before the thread looked (queued while it published)
    if (batch_ == 0 || n < batch_) {  // a batch gathers, for the period or `batch` events
      gathering_ = true;
      full_ = false;
      cv_.wait_for(q, std::chrono::milliseconds(ms_), [this] { return stop_ || full_; });
      full = full_;
      gathering_ = false;
    }
    if (stop_ || count_(ctx_) == 0) continue;  // stopped: what is queued is the client's
    if (full) ++full_batches_;                 // ended early: whoever publishes it (a rundown's prepare may)
    q.unlock();
    publish_(ctx_);
    q.lock();
  }
}

void Publisher::stop() {
  if (!thread_.joinable()) return;
  if (int(getpid()) != owner_pid_) {  // a forked child: no such thread here (nor its lock)
    deferred_ = false;
    thread_.detach();
    return;
  }
  {
    std::lock_guard<std::mutex> g(*mu_);
    deferred_ = false;
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BatchStats::add(By who, size_t n, uint64_t batch_ns) {
  ++by[static_cast<int>(who)];
  events += n;
  largest = std::max<uint64_t>(largest, n);
  ns.add(batch_ns);
}

void BatchStats::json(FILE* f, const Publisher& p, size_t queued_now) const {
  const uint32_t ms = p.periodMs();
  std::fprintf(f,
               "  \"publish\": {\"mode\": \"%s\", \"ms\": %u, \"batch_events\": %zu, \"batches\": {\"thread\": %" PRIu64
               ", \"prepare\": %" PRIu64 ", \"inline\": %" PRIu64 "}, \"events\": %" PRIu64 ", \"largest\": %" PRIu64
               ", \"queued_now\": %zu, \"woken\": %" PRIu64 ", \"full\": %" PRIu64 "},\n",
               ms != 0 ? "batch" : "inline", ms, p.batchEvents(), by[0], by[1], by[2], events, largest, queued_now,
               p.woken(), p.full());
  histJson(f, "publish_batch", ns);
}

}  // namespace jitprov::hostagent
