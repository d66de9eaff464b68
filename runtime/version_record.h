/* SPDX-License-Identifier: MIT */
// A version's event record as the rundown's walk fills it in place (registry.cc) and
// trace::rundownRecord emits it: the provider's record (jitprov_records.h) and the
// lengths of its three names, which the registry knows and the record does not carry,
// so that overlong names are found without a strlen. Internal: the core library, its
// tests and benchmarks.
#pragma once

#include "jitprov_records.h"

#include <cstdint>

namespace jitprov::trace {

struct VersionRecord {
  jitprov_method_record r;  // not zeroed: every filler writes every field
  uint32_t ns_len = 0, name_len = 0, sig_len = 0;
};

}  // namespace jitprov::trace
