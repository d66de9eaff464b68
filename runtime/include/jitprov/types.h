/* SPDX-License-Identifier: MIT */
// Identifiers and enumerations shared by the runtime, the tracepoint provider and the
// tools. The numeric values of Tier and LockSite are trace ABI (they appear in CTF
// traces and USDT probe arguments): never renumber them, only append.
#pragma once

#include <jitprov/names.h>
#include <jitprov/trace_abi.h>

#include <cstdint>
#include <string_view>

namespace jitprov {

using ModuleId = uint64_t;   // > 0, unique in the process, never reused (registry.h P9)
using MethodId = uint64_t;   // > 0, unique in the process, never reused
using VersionId = uint64_t;  // > 0, unique in the process, never reused
using RejitId = uint32_t;    // 0 = the original IL

// The trace ABI's enumerations (Tier, LockSite, RundownMode, RundownTrigger) and their
// names: jitprov/names.h, in the common library; values and labels: trace_abi.h.

inline constexpr size_t kMaxNameBytes = 64 * 1024;

// What a registration supplies for a method. The strings are copied.
struct MethodDesc {
  uint32_t token = 0;
  uint32_t flags = 0;
  std::string_view name_space;
  std::string_view name;
  std::string_view signature;
  // The host's own identity for the method (e.g. a jmethodID), 0 = none. Unique among
  // live methods; findMethod() maps it back to the method id.
  uint64_t host_key = 0;
};

// Who owns code addresses (RuntimeConfig::code_mode).
enum class CodeMode : uint8_t {
  kModelHeap = 0,  // jitprov's simulated code heap hands out ranges (beginJit/publishCode)
  kHost = 1,       // the host supplies its real ranges (publishHostCode)
};

// One source line of host code: the code from code_addr to the next entry's comes
// from `line` of `file` (nullptr: the previous entry's). The C API's jitprov_line_entry.
struct LineEntry {
  uint64_t code_addr = 0;
  uint32_t line = 0;
  uint32_t discriminator = 0;
  const char* file = nullptr;
};

// A native version the host compiled: its real code range and tiers (host mode).
struct HostCode {
  uint64_t code_start = 0;  // != 0
  uint32_t code_size = 0;   // > 0
  Tier tier = Tier::kTier0;
  uint16_t host_tier = 0;  // the host's own tier number (HotSpot: comp level 0-4)
  uint32_t osr_il_offset = 0;
  uint32_t host_version = 0;  // the host's own id of the version (CoreCLR: native code version id)
  // Optional: its source lines, for the jitdump sink (read during publishHostCode only).
  // The first has a file; each code_addr in the range, in non-decreasing order.
  const LineEntry* lines = nullptr;
  size_t n_lines = 0;
  // Also make it the active version of its IL version (as activate), under the same
  // lock acquisition; not for kTier1Osr (kInvalidArgument). A replay activates nothing.
  bool activate = false;
};

// A code range handed out by the simulated code heap.
struct CodeRange {
  uint64_t start = 0;
  uint32_t size = 0;
  uint64_t publish_seq = 0;  // the publication's sequence number (registry.h P8)
};

// One published native code version, as the lock-free walk sees it. The string views
// point into registry memory that stays valid until the walk's callback returns.
struct VersionView {
  MethodId method_id;
  ModuleId module_id;
  VersionId version_id;
  RejitId rejit_id;
  Tier tier;
  uint32_t osr_il_offset;
  uint16_t host_tier;     // the host's tier number (host mode); the Tier value otherwise
  uint32_t host_version;  // the host's id of the version (host mode); 0 otherwise
  uint64_t code_start;
  uint32_t code_size;
  uint32_t method_token;
  uint32_t method_flags;
  std::string_view name_space;
  std::string_view name;
  std::string_view signature;
  uint64_t publish_seq;  // its publication's sequence number (registry.h P8)
};

struct ModuleView {
  ModuleId module_id;
  bool collectible;
  std::string_view path;
};

}  // namespace jitprov
