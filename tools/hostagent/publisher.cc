// SPDX-License-Identifier: MIT
#include "publisher.h"

#include "host_agent.h"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <system_error>

namespace jitprov::hostagent {

bool Publisher::start(std::mutex* mu, uint32_t ms, Publish publish, Empty empty, void* ctx, std::string* why) {
  mu_ = mu;
  ms_ = ms;
  publish_ = publish;
  empty_ = empty;
  ctx_ = ctx;
  owner_pid_ = int(getpid());
  try {
    thread_ = std::thread([this] { main(); });
  } catch (const std::system_error& e) {
    *why = e.what();
    return false;
  }
  return true;
}

void Publisher::main() {
  pthread_setname_np(pthread_self(), kPublishThread);
  std::unique_lock<std::mutex> q(*mu_);
  bool found_empty = false;  // the last wait of ms_ found nothing queued
  while (!stop_) {
    if (empty_(ctx_)) {
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
    cv_.wait_for(q, std::chrono::milliseconds(ms_), [this] { return stop_; });  // a batch gathers
    if (stop_ || empty_(ctx_)) continue;  // stopped: what is queued is the client's
    q.unlock();
    publish_(ctx_);
    q.lock();
  }
}

void Publisher::stop() {
  if (!thread_.joinable()) return;
  if (int(getpid()) != owner_pid_) {  // a forked child: no such thread here (nor its lock)
    thread_.detach();
    return;
  }
  {
    std::lock_guard<std::mutex> g(*mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace jitprov::hostagent
