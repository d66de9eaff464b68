/* SPDX-License-Identifier: MIT */
// A version's event record as the rundown's walk fills it in place (registry.cc) and
// trace::rundownRecord emits it: the provider's record (jitprov_records.h) and the
// lengths of its three names, which the registry knows and the record does not carry,
// so that overlong names are found without a strlen. Internal: the core library, its
// tests and benchmarks.
#pragma once

#include "jitprov_records.h"
#include "trace.h"

#include <atomic>
#include <cstdint>

namespace jitprov::trace {

struct VersionRecord {
  jitprov_method_record r;  // not zeroed: every filler writes every field
  uint32_t ns_len = 0, name_len = 0, sig_len = 0;
};

// The rundown engine's emission of the records its walk fills in place
// (Runtime::walkCompleteRecords): a concrete type, so that the walk inlines emit() and a
// version costs no indirect call (docs/measurements.md, "The walk at the emission
// floor"). emit() is the engine's per-version step: nothing once the rundown is
// cancelled (counted as abandoned), else the event into the rundown's sessions, and
// every window_mask + 1 events `window(ctx)` (the engine's stall detection).
class RecordEmitter {
 public:
  using WindowFn = void (*)(void* ctx);
  RecordEmitter(const Rundown& to, const std::atomic<bool>& cancel, uint64_t window_mask, WindowFn window,
                void* ctx) noexcept
      : to_(to), cancel_(cancel), window_mask_(window_mask), window_(window), ctx_(ctx) {
    rec.r.runtime_instance = to.instance;
  }
  RecordEmitter(const RecordEmitter&) = delete;
  RecordEmitter& operator=(const RecordEmitter&) = delete;

  // Whether the version was emitted: the walk's counts are of those.
  bool emit() {
    if (cancel_.load(std::memory_order_relaxed)) [[unlikely]] {
      ++abandoned;
      return false;
    }
    rundownRecord(to_, rec);
    if ((++emitted & window_mask_) == 0) [[unlikely]]
      window_(ctx_);
    return true;
  }

  VersionRecord rec;  // the walk fills every field but runtime_instance (set here)
  uint64_t emitted = 0;
  uint64_t abandoned = 0;  // versions not emitted after a cancel

 private:
  const Rundown& to_;
  const std::atomic<bool>& cancel_;
  const uint64_t window_mask_;
  const WindowFn window_;
  void* const ctx_;
};

}  // namespace jitprov::trace
