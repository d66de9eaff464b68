// SPDX-License-Identifier: MIT
// The events of one rundown as the engine emits them. A normal engine calls the
// tracepoints (trace.h) directly; an engine given a RundownEmitter (tests only:
// jitprov_internal_inject_fault, jitprov-sim-faults) emits through it instead, so that
// verifiers can be tested on real traces of broken rundowns while the engine's own code
// and public header carry no test scaffolding. Called on the rundown's thread.
#pragma once

#include <jitprov/rundown.h>

#include "trace.h"

#include <memory>
#include <string_view>

namespace jitprov {

class RundownEmitter {
 public:
  virtual ~RundownEmitter() = default;
  virtual void begin(const trace::Rundown& ev, RundownMode mode, RundownTrigger trigger, uint64_t method_count,
                     uint64_t publish_seq) = 0;
  // One version's record. False when it was not emitted: the rundown does not count it.
  virtual bool method(const trace::Rundown& ev, const VersionView& v) = 0;
  // rundown_end into `whole`'s sessions, and with cut_short set into `restarted`'s.
  virtual void end(const trace::Rundown& whole, const trace::Rundown& restarted, const trace::RundownEnd& e) = 0;
};

// An emitter that breaks every rundown in the named way: "duplicate" (one version's
// record twice), "torn" (one record with a wrong code_size), "torn-name" (one record's
// signature changed, same length), "skip" (one record neither emitted nor counted),
// "no-end" (no rundown_end), "begin-twice" (rundown_begin again after rundown_end, with
// the same id), "end-twice" (rundown_end twice). Null for any other name. rundown_faults.cc.
std::unique_ptr<RundownEmitter> faultyEmitter(std::string_view fault);

}  // namespace jitprov
