/* SPDX-License-Identifier: MIT */
// jitprov-sim's options and their command line (docs/spec.md "jitprov-sim").
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace jitprov::sim {

struct Options {
  uint64_t methods = 100000;
  uint32_t modules = 100;
  uint32_t jit_threads = 2;
  double duration = 0;
  std::string rundown = "lockfree";
  std::string triggers = "session,signal";
  uint64_t seed = 1;
  std::string stats_json;
  std::string ready_file;
  uint32_t threshold = 30;
  double warm = 1.0;       // fraction of methods compiled at tier 0 before ready
  double hot = 0.1;        // fraction of those also at tier 1 before ready
  uint32_t tier0_us = 40;  // simulated compile cost
  uint32_t tier1_us = 300;
  double osr_rate = 0.0002;  // per call
  double rejit_rate = 0.00002;
  double unload_rate = 0.5;     // collectible module unloads per second
  double collectible = 0.2;     // fraction of modules that are collectible
  uint32_t calls_per_ms = 200;  // per JIT thread
  double jit_delay = 0;         // seconds between ready and the JIT threads' start
  std::string jit_after;        // or: they, and the rundown thread, start once this file exists
  std::string fault = "none";   // test build only: RundownFault
  // Rundown events per second: what lttng's default non-blocking channel drains with
  // room to spare (docs/tracing.md); 0 = unpaced, for the dedicated blocking channel.
  uint64_t rundown_rate = 100000;
  // After a tier-up replaced a method's code, retire the replaced version with this
  // probability (HotSpot flushes replaced code one version at a time).
  double retire_replaced = 0.5;
  // In-process lock statistics (--stats-json's "lock"); off, the runtime times an
  // acquisition only while a tracer is attached to jitprov:lock_released.
  bool lock_stats = true;
};

// Declares every option of `o` on `cli`, with its validator (--inject-fault in the
// test build only).
void addOptions(CLI::App& cli, Options& o);

}  // namespace jitprov::sim
