/* SPDX-License-Identifier: MIT */
// The two named operations of the publication protocol (docs/spec.md). Every point where
// the registry makes something visible to lock-free readers, and every point where a
// lock-free reader picks it up, goes through one of these, so `grep -n publish\(` and
// `grep -n readPublished\(` list them all.
#pragma once

#include <atomic>

namespace jitprov {

// Release store: everything the writer wrote before (the node's fields, code_size)
// becomes visible to a reader whose readPublished() returns `value`.
template <class T>
inline void publish(std::atomic<T>& slot, T value) noexcept {
  slot.store(value, std::memory_order_release);
}

// Acquire load: pairs with the publish() that stored the value it returns.
template <class T>
inline T readPublished(const std::atomic<T>& slot) noexcept {
  return slot.load(std::memory_order_acquire);
}

}  // namespace jitprov
