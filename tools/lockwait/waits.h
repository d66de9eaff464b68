/* SPDX-License-Identifier: MIT */
// jitprov-lockwait --waits FILE: every lock wait (an acquisition that waited), one CSV
// line each, from the BPF `waits` ring buffer (docs/spec.md "jitprov-lockwait").
#pragma once

#include "atomic_file.h"

#include <cstdint>
#include <string>

struct ring_buffer;

namespace jitprov::lw {

// The ring buffer's size (a power of 2 pages): room for about 87000 records between two
// reads, which come every 50 ms at most.
inline constexpr uint32_t kWaitsRingBytes = 4u << 20;

class WaitWriter {
 public:
  WaitWriter() = default;
  WaitWriter(const WaitWriter&) = delete;
  WaitWriter& operator=(const WaitWriter&) = delete;
  ~WaitWriter();
  // Creates FILE's temporary and writes the header: "" or why not.
  std::string open(const std::string& path);
  // Reads the ring buffer map `map_fd` from now on: "" or why not.
  std::string start(int map_fd);
  // A descriptor that polls readable when records wait (-1 before start()).
  int pollFd() const;
  // Writes the records waiting in the ring buffer: false once a write failed. After a
  // failed write the ring buffer is still drained (its descriptor would poll readable
  // for ever), its records counted as unwritten.
  bool consume();
  // Writes the rest and renames the file into place: "" or why not.
  std::string finish();
  uint64_t written() const { return written_; }
  uint64_t unwritten() const { return unwritten_; }
  // "" or the failed write's error.
  std::string error() const;

 private:
  static int onRecord(void* ctx, void* data, size_t size);
  ring_buffer* rb_ = nullptr;
  tools::AtomicFile file_;
  std::string path_;
  uint64_t written_ = 0, unwritten_ = 0;
  bool failed_ = false;
  int errno_ = 0;  // of the write that failed
};

}  // namespace jitprov::lw
