/* SPDX-License-Identifier: MIT */
// The JVM agent's perf map (perfmap=DIR): DIR/perf-PID.map rewritten whole at every
// rundown, from the rundown's own walk (a sink of jitprov's rundown engine, on its
// thread), "START SIZE NAME" a line, for perf and bpftrace's ustack.
#pragma once

#include <jitprov/jitprov.h>

#include "atomic_file.h"

#include <cstdint>
#include <string>

namespace jitprov::jvmti {

struct PerfMap {
  std::string dir;                  // empty: off
  jitprov::tools::AtomicFile file;  // open between a rundown's BEGIN and END
  bool open = false;
  std::string final_path;
  uint64_t stub_module = 0;
  uint64_t written = 0, lines = 0, errors = 0;
  std::string last_error;
};

// The perf map sink: one line per live version of every rundown, "START SIZE NAME".
void perfMapSink(void* ctx, const jitprov_sink_record* r);

}  // namespace jitprov::jvmti
