// SPDX-License-Identifier: MIT
// A test's wait for what another thread (or the engine's) brings about: the condition
// polled every millisecond, bounded by the clock so that a hang fails the test rather
// than the run. A fixed sleep can end before the condition on a loaded 2-core machine,
// where a thread is descheduled for longer; a bound by the clock says what it waits
// (a count of 1 ms sleeps waits longer than it says on such a machine, never shorter).
#pragma once

#include <chrono>
#include <thread>

namespace jitprov::test {

// Polls `cond` every millisecond until it holds (true) or `limit` has passed by the
// steady clock (false, after one last look).
template <class Cond>
bool waitUntil(Cond&& cond, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!cond()) {
    if (std::chrono::steady_clock::now() >= end) return cond();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace jitprov::test
