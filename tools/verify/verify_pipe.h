/* SPDX-License-Identifier: MIT */
// A single-producer, single-consumer pipe of batches between two threads: jitprov-verify
// reads a trace through babeltrace2 on one thread (decoding is most of its time) and
// applies what it read to its tables on another (a cache miss per version at 10 M
// methods). No babeltrace2 here; unit-tested, also under ThreadSanitizer, in
// tests/unit/verify_pipe_test.cc.
//
// The producer fills current() and hands it over with push(); the consumer thread calls
// `consume` on each batch in order, then clears it and returns it for reuse. At most
// `depth` batches wait, so a producer that runs ahead blocks instead of buffering the
// trace. drain() returns when every batch pushed so far has been consumed: what the
// consumer wrote is then the producer's to read (the pipe's mutex orders it). A consumer
// that fails calls fail(): failed() tells the producer to stop reading, and batches
// pushed after it are dropped, not consumed.
// Without a thread (threaded = false), push() consumes the batch on the caller's thread:
// the same code, for readers that need each event handled at once (a live session).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace jitprov::verify {

template <class Batch>
class BatchPipe {
 public:
  // Batch: default-constructible, with clear(). `consume` runs on the consumer thread.
  BatchPipe(bool threaded, size_t depth, std::function<void(Batch&)> consume)
      : consume_(std::move(consume)), depth_(depth < 1 ? 1 : depth), current_(std::make_unique<Batch>()) {
    if (threaded) thread_ = std::thread([this] { run(); });
  }
  BatchPipe(const BatchPipe&) = delete;
  BatchPipe& operator=(const BatchPipe&) = delete;
  ~BatchPipe() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  Batch& current() { return *current_; }

  // Hands current() to the consumer and starts a new one (blocks while `depth` wait).
  void push() {
    if (!thread_.joinable()) {
      if (!failed_) consume_(*current_);
      current_->clear();
      return;
    }
    std::unique_ptr<Batch> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return queue_.size() < depth_ || failed_; });
      if (failed_) {  // nothing more is consumed: reuse the batch
        current_->clear();
        return;
      }
      queue_.push_back(std::move(current_));
      ++pushed_;
      if (!spare_.empty()) {
        next = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    cv_.notify_all();
    current_ = next ? std::move(next) : std::make_unique<Batch>();
  }

  // Pushes current() and waits until the consumer has done every batch pushed.
  void drain() {
    push();
    if (!thread_.joinable()) return;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return consumed_ == pushed_ || failed_; });
    // After a failure the consumer may still be inside a batch: wait for it to leave.
    cv_.wait(lock, [&] { return !busy_; });
  }

  // From the consumer (or anywhere): stop; later batches are dropped.
  void fail() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      failed_ = true;
    }
    cv_.notify_all();
  }
  bool failed() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;  // closing, and everything consumed
      std::unique_ptr<Batch> b = std::move(queue_.front());
      queue_.pop_front();
      const bool skip = failed_;
      busy_ = true;
      lock.unlock();
      cv_.notify_all();  // room in the queue
      if (!skip) consume_(*b);
      b->clear();
      lock.lock();
      busy_ = false;
      ++consumed_;
      spare_.push_back(std::move(b));
      cv_.notify_all();
    }
  }

  std::function<void(Batch&)> consume_;
  const size_t depth_;
  std::unique_ptr<Batch> current_;  // the producer's
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Batch>> queue_;
  std::vector<std::unique_ptr<Batch>> spare_;
  size_t pushed_ = 0, consumed_ = 0;
  bool failed_ = false, closing_ = false, busy_ = false;
  std::thread thread_;
};

}  // namespace jitprov::verify
