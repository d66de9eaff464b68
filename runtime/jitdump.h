/* SPDX-License-Identifier: MIT */
// The jitdump sink: perf's time-stamped record of JIT code
// (tools/perf/Documentation/jitdump-specification.txt in the Linux tree), written to
// DIR/jit-PID.dump so that `perf inject --jit` names every sample by the code that was
// at its address at its time, and `perf annotate` shows the code's instructions.
//
// Ordering (docs/spec.md "The jitdump sink"): a publication takes its record's time
// stamp under the CVM lock, where it is ordered with the retirement and reuse of its
// range (registry.h P7), and writes the record after releasing that lock, under the
// writer's own mutex. Records of concurrent publications may therefore appear in the
// file out of time-stamp order; perf orders them by their stamps. Nothing here takes
// the CVM lock except open(), once, to start publications writing (registry: the
// version published under the lock before that is in the open's walk, every one after
// writes its own record).
#pragma once

#include <jitprov/result.h>
#include <jitprov/runtime.h>
#include <jitprov/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

struct iovec;

namespace jitprov {

// The file's records (the specification's record ids).
inline constexpr uint32_t kJitdumpMagic = 0x4A695444;  // "JiTD" read as a host-endian u32
inline constexpr uint32_t kJitdumpVersion = 1;
inline constexpr uint32_t kJitCodeLoad = 0;
inline constexpr uint32_t kJitCodeClose = 3;
inline constexpr uint32_t kJitCodeDebugInfo = 2;

class JitdumpWriter {
 public:
  JitdumpWriter() = default;
  ~JitdumpWriter();
  JitdumpWriter(const JitdumpWriter&) = delete;
  JitdumpWriter& operator=(const JitdumpWriter&) = delete;

  // Creates DIR/jit-PID.dump, writes the header and maps its first page PROT_EXEC (the
  // marker perf finds in the mmap events). kBusy when open; kInvalidArgument (errno in
  // stats) when the file cannot be created or mapped.
  Errc open(const JitdumpOptions& opt, uint64_t now_ns);
  // JIT_CODE_CLOSE, the marker unmapped, the file closed. No-op when closed.
  void close() noexcept;
  // One JIT_CODE_LOAD, stamped `ts_ns` (CLOCK_MONOTONIC). `copy`: the range may be read.
  // `rundown`: written by the open's walk (counted apart). `lines` (checked by the
  // caller: registry.cc): a JIT_CODE_DEBUG_INFO with the same stamp just before it, in
  // the same write (perf gives a DEBUG_INFO to the next load in the file).
  void writeLoad(const VersionView& v, uint64_t ts_ns, bool copy, bool rundown, const LineEntry* lines = nullptr,
                 size_t n_lines = 0) noexcept;
  // In the child of a fork: closes the inherited descriptor and mapping without a
  // record (the file is the parent's); the mutex is new (a parent's thread may have
  // held it at the fork).
  void forgetInChild() noexcept;
  bool copyCode() const noexcept { return copy_code_; }
  JitdumpStats stats() const;
  // The file's path while open (tests).
  std::string path() const;

 private:
  // Writes `len` bytes of iovecs at the end of the file; false (counted) on error.
  bool append(struct iovec* iov, int n, size_t len) noexcept;
  void release() noexcept;

  mutable std::mutex mu_;
  int fd_ = -1;
  void* marker_ = nullptr;
  size_t marker_len_ = 0;
  uint64_t offset_ = 0;  // the end of the last whole record
  uint32_t pid_ = 0;
  bool copy_code_ = false;
  std::string path_;
  JitdumpStats st_;
};

}  // namespace jitprov
