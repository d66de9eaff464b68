/* SPDX-License-Identifier: MIT */
// jitprov-sim's application: methods in modules with plausible names, the JIT threads'
// calls and compiles, module unloads. A host of the public C API only.
#pragma once

#include <jitprov/jitprov.h>

#include "sim_options.h"
#include "sim_stats.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <thread>
#include <vector>

namespace jitprov::sim {

// n zero-valued atomics whose memory becomes resident only where written: calloc maps a
// large block as fresh zero pages without writing them (std::vector would write every
// element), so the compile state of a method never compiled costs the process no RSS.
template <class T>
class ZeroedArray {
  static_assert(T::is_always_lock_free && sizeof(T) == sizeof(typename T::value_type),
                "all-zero bytes must be a valid T: a lock-free atomic integer");

 public:
  explicit ZeroedArray(size_t n) : p_(static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)))) {
    if (p_ == nullptr) throw std::bad_alloc();
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  ~ZeroedArray() { std::free(p_); }
  T& operator[](size_t i) noexcept { return p_[i]; }

 private:
  T* p_;
};

// The application: methods in module-contiguous slots, so an unloaded module's slots
// are refilled by its replacement's methods.
struct App {
  jitprov_runtime* rt = nullptr;
  Options opt;
  // slot -> current method id. Written by the main thread (registration, and the
  // replacement of an unloaded module) with release; JIT threads load it with acquire.
  // A JIT thread may still use the old id for a moment: the runtime then answers
  // kMethodUnloaded, counted as a lost race.
  std::vector<std::atomic<uint64_t>> slot_method;
  // slot -> a JIT thread is compiling it (one compile per method at a time, as a
  // runtime's per-method JIT lock would). CAS acquire / store release: a try-lock.
  ZeroedArray<std::atomic<uint8_t>> compiling;
  // slot -> the version last activated for it (0 = none). Only the thread that holds
  // the slot's `compiling` try-lock reads or writes it (relaxed).
  ZeroedArray<std::atomic<uint64_t>> active_version;
  std::vector<uint32_t> zipf_perm;  // rank -> slot
  struct ModuleSlots {
    uint64_t id;
    uint64_t begin, end;
    bool collectible;
    uint32_t generation;
  };
  std::vector<ModuleSlots> modules;  // main thread only
  JitCounters counters;

  explicit App(const Options& o) : opt(o), slot_method(o.methods), compiling(o.methods), active_version(o.methods) {}
  ~App() { jitprov_runtime_destroy(rt); }

  int create();
  bool registerModuleSlots(size_t index, uint64_t begin, uint64_t end, bool collectible, uint32_t gen,
                           std::mt19937_64& rng);
  // Main thread, before ready: the modules (sizes vary, a fraction collectible), the
  // call distribution's ranks, and the warm start. False on an API error (printed).
  bool populate(std::mt19937_64& rng);
  // One JIT path for the method in `slot`, unless another thread is compiling it. A race
  // lost to an unload is counted (lost_races), any other API error too (errors).
  void compile(uint64_t slot, int tier, uint32_t cost_us, std::mt19937_64& rng, bool activate = true);
  void jitThread(uint32_t index, const std::atomic<bool>& stop);
  // Main thread: unload a random collectible module and load a replacement.
  void unloadOne(std::mt19937_64& rng);
};

// The application threads that call and JIT (--jit-threads), started at once, after
// --jit-delay or once --jit-after's file exists. Joined by the main thread after `stop`.
struct JitThreads {
  App& app;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  void start() {
    for (uint32_t i = 0; i < app.opt.jit_threads; ++i) threads.emplace_back([this, i] { app.jitThread(i, stop); });
  }
};

}  // namespace jitprov::sim
