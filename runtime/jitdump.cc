// SPDX-License-Identifier: MIT
// The jitdump sink (jitdump.h): the file, its records, and the runtime's side of it
// (open with the walk of code loaded before, close after publications in flight).
#include "jitdump.h"

#include <jitprov/clock.h>

#include "registry.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <cerrno>
#include <cstring>
#include <thread>

namespace jitprov {

namespace {

// One jit-PID.dump per process: a second runtime (or a second open) is refused.
std::atomic<bool> g_file_taken{false};

struct FileHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t total_size;
  uint32_t elf_mach;
  uint32_t pad1;
  uint32_t pid;
  uint64_t timestamp;
  uint64_t flags;  // 0: time stamps are CLOCK_MONOTONIC (no JITDUMP_FLAGS_ARCH_TIMESTAMP)
};
static_assert(sizeof(FileHeader) == 40);

struct RecordPrefix {
  uint32_t id;
  uint32_t total_size;
  uint64_t timestamp;
};

struct CodeLoad {
  RecordPrefix p;
  uint32_t pid;
  uint32_t tid;
  uint64_t vma;
  uint64_t code_addr;
  uint64_t code_size;
  uint64_t code_index;
};
static_assert(sizeof(CodeLoad) == 56);

struct DebugInfo {
  RecordPrefix p;
  uint64_t code_addr;
  uint64_t nr_entry;
};
static_assert(sizeof(DebugInfo) == 32);

struct DebugEntry {  // then the file name, NUL-terminated
  uint64_t addr;
  int32_t lineno;
  int32_t discrim;
};
static_assert(sizeof(DebugEntry) == 16);

constexpr uint32_t kElfMachine =
#if defined(__x86_64__)
    EM_X86_64;
#elif defined(__aarch64__)
    EM_AARCH64;
#else
    EM_NONE;
#endif

uint32_t threadId() noexcept {
  thread_local uint32_t tid = 0;
  if (tid == 0) tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

// Zeros for the code of a record whose bytes are not read.
alignas(64) const unsigned char kZeros[65536] = {};

// Writes the iovecs at `pos`, all of them (partial writes continued; the iovecs are
// consumed). False with errno on an error.
bool writeAllAt(int fd, uint64_t pos, iovec* iov, int n) noexcept {
  while (n > 0) {
    const ssize_t w = pwritev(fd, iov, std::min(n, IOV_MAX), static_cast<off_t>(pos));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (w == 0) {
      errno = EIO;
      return false;
    }
    pos += static_cast<uint64_t>(w);
    size_t left = static_cast<size_t>(w);
    for (; n > 0 && left >= iov->iov_len; --n, ++iov) left -= iov->iov_len;
    if (n > 0 && left > 0) {  // a partial write ended inside this iovec
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return true;
}

}  // namespace

JitdumpWriter::~JitdumpWriter() { close(); }

Errc JitdumpWriter::open(const JitdumpOptions& opt, uint64_t now_ns) {
  std::lock_guard<std::mutex> g(mu_);
  if (fd_ >= 0) return Errc::kBusy;
  bool expected = false;
  if (!g_file_taken.compare_exchange_strong(expected, true)) return Errc::kBusy;
  pid_ = static_cast<uint32_t>(getpid());
  path_ = (opt.dir.empty() ? std::string(".") : opt.dir) + "/jit-" + std::to_string(pid_) + ".dump";
  const int fd = ::open(path_.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0644);
  const long page = sysconf(_SC_PAGESIZE);
  FileHeader h{kJitdumpMagic, kJitdumpVersion, sizeof(FileHeader), kElfMachine, 0, pid_, now_ns, 0};
  void* marker = MAP_FAILED;
  if (fd >= 0 && pwrite(fd, &h, sizeof h, 0) == ssize_t(sizeof h))
    // The marker: perf finds the file by this executable mapping of it in its mmap events.
    marker = mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (marker == MAP_FAILED) {
    st_.last_errno = errno;
    if (fd >= 0) ::close(fd);
    g_file_taken.store(false);
    return Errc::kInvalidArgument;
  }
  fd_ = fd;
  marker_ = marker;
  marker_len_ = static_cast<size_t>(page);
  offset_ = sizeof h;
  copy_code_ = opt.copy_code;
  const int last_errno = st_.last_errno;
  st_ = JitdumpStats{};
  st_.open = true;
  st_.bytes = offset_;
  st_.last_errno = last_errno;
  return Errc::kOk;
}

void JitdumpWriter::close() noexcept {
  std::lock_guard<std::mutex> g(mu_);
  if (fd_ < 0) return;
  RecordPrefix r{kJitCodeClose, sizeof(RecordPrefix), monotonicNs()};
  iovec iov{&r, sizeof r};
  append(&iov, 1, sizeof r);
  if (ftruncate(fd_, static_cast<off_t>(offset_)) != 0) {  // a failed record's tail, if any
    ++st_.write_errors;
    st_.last_errno = errno;
  }
  release();
}

// The marker mapping and the file let go, and the process's one file free again.
void JitdumpWriter::release() noexcept {
  munmap(marker_, marker_len_);
  ::close(fd_);
  fd_ = -1;
  marker_ = nullptr;
  st_.open = false;
  g_file_taken.store(false);
}

void JitdumpWriter::forgetInChild() noexcept {
  new (&mu_) std::mutex();
  if (fd_ < 0) return;
  release();
}

bool JitdumpWriter::append(iovec* iov, int n, size_t len) noexcept {
  if (!writeAllAt(fd_, offset_, iov, n)) {
    ++st_.write_errors;
    ++st_.dropped;
    st_.last_errno = errno;
    return false;
  }
  offset_ += len;
  st_.bytes = offset_;
  return true;
}

namespace {

// `len` zeros at `pos`.
bool writeZerosAt(int fd, uint64_t pos, uint64_t len) noexcept {
  while (len > 0) {
    iovec z{const_cast<unsigned char*>(kZeros), static_cast<size_t>(std::min<uint64_t>(len, sizeof kZeros))};
    if (!writeAllAt(fd, pos, &z, 1)) return false;
    pos += sizeof kZeros;
    len -= std::min<uint64_t>(len, sizeof kZeros);
  }
  return true;
}

}  // namespace

namespace {

// The JIT_CODE_DEBUG_INFO record of `lines` into `out` (the specification's layout:
// the prefix, code_addr, nr_entry, then per entry addr, lineno, discrim and the file
// name with its NUL, written out whole each time: perf 6.1 reads no "\xff\0" for "the
// previous name"), and one entry more, at the code's end with the last entry's line:
// perf ends the DWARF line sequence at the last entry's address, so without it the
// last line would cover no code (a one-line method none at all). False when it would
// not fit a record (total_size is a u32) or memory ran out.
bool debugRecord(std::string& out, uint64_t code_addr, uint32_t code_size, uint64_t ts_ns, const LineEntry* lines,
                 size_t n) noexcept {
  try {
    out.clear();
    uint64_t total = sizeof(DebugInfo);
    const char* file = "";
    for (size_t i = 0; i < n; ++i) {
      if (lines[i].file != nullptr) file = lines[i].file;
      total += sizeof(DebugEntry) + std::strlen(file) + 1;
    }
    total += sizeof(DebugEntry) + std::strlen(file) + 1;  // the end
    if (total > UINT32_MAX) return false;
    out.reserve(total);
    const DebugInfo h{{kJitCodeDebugInfo, static_cast<uint32_t>(total), ts_ns}, code_addr, n + 1};
    out.append(reinterpret_cast<const char*>(&h), sizeof h);
    for (size_t i = 0; i <= n; ++i) {
      const LineEntry& l = lines[i < n ? i : n - 1];
      if (i < n && l.file != nullptr) file = l.file;
      const DebugEntry e{i < n ? l.code_addr : code_addr + code_size, static_cast<int32_t>(l.line),
                         static_cast<int32_t>(l.discriminator)};
      out.append(reinterpret_cast<const char*>(&e), sizeof e);
      out.append(file, std::strlen(file) + 1);
    }
    return true;
  } catch (...) {  // std::bad_alloc
    out.clear();
    return false;
  }
}

}  // namespace

void JitdumpWriter::writeLoad(const VersionView& v, uint64_t ts_ns, bool copy, bool rundown, const LineEntry* lines,
                              size_t n_lines) noexcept {
  // The name perf shows: "namespace::name", or the name alone (as the perf map).
  const bool has_ns = !v.name_space.empty();
  const size_t name_len = v.name_space.size() + (has_ns ? 2 : 0) + v.name.size() + 1;
  const uint64_t head_len = sizeof(CodeLoad) + name_len;
  CodeLoad r{};
  r.p = {kJitCodeLoad, static_cast<uint32_t>(head_len + v.code_size), ts_ns};
  r.tid = threadId();
  r.vma = r.code_addr = v.code_start;
  r.code_size = v.code_size;
  r.code_index = v.version_id;  // unique in the file: one runtime writes it, ids are never reused
  // The debug record, built before the writer's mutex (this thread's buffer).
  thread_local std::string debug;
  const bool with_debug = n_lines != 0 && debugRecord(debug, v.code_start, v.code_size, ts_ns, lines, n_lines);
  const size_t debug_len = with_debug ? debug.size() : 0;
  static const char kSep[] = "::";
  iovec head[6];
  int n = 0;
  if (with_debug) head[n++] = {debug.data(), debug.size()};
  head[n++] = {&r, sizeof r};
  if (has_ns) {
    head[n++] = {const_cast<char*>(v.name_space.data()), v.name_space.size()};
    head[n++] = {const_cast<char*>(kSep), 2};
  }
  head[n++] = {const_cast<char*>(v.name.data()), v.name.size()};
  head[n++] = {const_cast<char*>(kSep + 2), 1};  // the NUL
  std::lock_guard<std::mutex> g(mu_);
  if (fd_ < 0) return;  // closed meanwhile (close waits for publications in flight)
  r.pid = pid_;
  if (n_lines != 0 && !with_debug) ++st_.debug_dropped;
  if (head_len + v.code_size > UINT32_MAX) {  // total_size is a u32
    ++st_.dropped;
    if (with_debug) ++st_.debug_dropped;
    return;
  }
  const auto failed = [&] {
    ++st_.write_errors;
    ++st_.dropped;
    if (with_debug) ++st_.debug_dropped;
    st_.last_errno = errno;
  };
  bool ok = false;
  if (copy) {
    // The kernel reads the host's range: an unmapped one fails (EFAULT), never faults.
    iovec iov[7];
    std::copy(head, head + n, iov);
    iov[n] = {reinterpret_cast<void*>(static_cast<uintptr_t>(v.code_start)), v.code_size};
    ok = writeAllAt(fd_, offset_, iov, n + 1);
    if (!ok && errno != EFAULT) return failed();
    if (ok) st_.code_bytes += v.code_size;
    if (!ok) ++st_.unreadable;
  }
  if (!ok) {
    ok = writeAllAt(fd_, offset_, head, n) && writeZerosAt(fd_, offset_ + debug_len + head_len, v.code_size);
    if (!ok) return failed();
    ++st_.loads_without_code;
  }
  offset_ += debug_len + head_len + v.code_size;
  st_.bytes = offset_;
  ++(rundown ? st_.rundown_loads : st_.loads);
  if (with_debug) {
    ++st_.debug_records;
    st_.debug_entries += n_lines + 1;
  }
}

JitdumpStats JitdumpWriter::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return st_;
}

std::string JitdumpWriter::path() const {
  std::lock_guard<std::mutex> g(mu_);
  return path_;
}

// --- the runtime's side ------------------------------------------------------------

JitdumpWriter* Runtime::State::jitdumpEnter() noexcept {
  JitdumpWriter* w = jitdump.load(std::memory_order_relaxed);  // relaxed: CVM lock held, as its writers
  if (w != nullptr) jitdump_inflight.fetch_add(1, std::memory_order_relaxed);
  return w;
}

void Runtime::State::jitdumpWrite(JitdumpWriter* w, const VersionView& v, uint64_t ts_ns, const LineEntry* lines,
                                  size_t n_lines) noexcept {
  w->writeLoad(v, ts_ns, w->copyCode() && code_mode == CodeMode::kHost, false, lines, n_lines);
  jitdump_inflight.fetch_sub(1, std::memory_order_release);  // close() waits for 0 (acquire)
}

void Runtime::State::jitdumpForgetInChild() noexcept {
  new (&jitdump_mu) std::mutex();
  jitdump.store(nullptr, std::memory_order_relaxed);
  jitdump_inflight.store(0, std::memory_order_relaxed);  // the parent's publications
  if (jitdump_writer) jitdump_writer->forgetInChild();
}

Result<void> Runtime::jitdumpOpen(const JitdumpOptions& opt) {
  std::lock_guard<std::mutex> g(s_->jitdump_mu);
  if (s_->jitdump.load(std::memory_order_relaxed) != nullptr) return Errc::kBusy;
  if (!s_->jitdump_writer) s_->jitdump_writer = std::make_unique<JitdumpWriter>();
  JitdumpWriter* w = s_->jitdump_writer.get();
  if (const Errc e = w->open(opt, monotonicNs()); e != Errc::kOk) return e;
  // Under the CVM lock: a version published before this is in the walk below (its
  // publish_seq <= seq), every one after writes its own record (jitdumpEnter()).
  uint64_t seq = 0, ts = 0;
  {
    CvmLock::Guard lock(s_->lock, LockSite::kRundown, 0);
    s_->jitdump.store(w, std::memory_order_relaxed);
    seq = s_->seq.load(std::memory_order_relaxed);
    ts = monotonicNs();
  }
  const bool copy = w->copyCode() && s_->code_mode == CodeMode::kHost;
  walk(WalkLocking::kNone, [&](const VersionView& v) {
    if (v.publish_seq <= seq) w->writeLoad(v, ts, copy, true);
  });
  return {};
}

void Runtime::jitdumpClose() noexcept {
  std::lock_guard<std::mutex> g(s_->jitdump_mu);
  JitdumpWriter* w = s_->jitdump.load(std::memory_order_relaxed);
  if (w == nullptr) return;
  {
    CvmLock::Guard lock(s_->lock, LockSite::kRundown, 0);
    s_->jitdump.store(nullptr, std::memory_order_relaxed);
  }
  // Publications that saw the writer under the lock write their record first.
  while (s_->jitdump_inflight.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  w->close();
}

JitdumpStats Runtime::jitdumpStats() const {
  std::lock_guard<std::mutex> g(s_->jitdump_mu);
  return s_->jitdump_writer ? s_->jitdump_writer->stats() : JitdumpStats{};
}

}  // namespace jitprov
