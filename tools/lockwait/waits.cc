// SPDX-License-Identifier: MIT
#include "waits.h"

#include "lockwait.h"

#include <jitprov/names.h>

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace jitprov::lw {

WaitWriter::~WaitWriter() {
  if (rb_ != nullptr) ring_buffer__free(rb_);
}

std::string WaitWriter::open(const std::string& path) {
  path_ = path;
  if (!file_.open(path)) return file_.error();
  std::fputs("begin_ns,tid,site,wait_ns,hold_ns,blocked_by,in_rundown\n", file_.file());
  return "";
}

std::string WaitWriter::start(int map_fd) {
  rb_ = ring_buffer__new(map_fd, onRecord, this, nullptr);
  if (rb_ == nullptr) return std::string("read the waits ring buffer: ") + std::strerror(errno);
  return "";
}

int WaitWriter::pollFd() const { return rb_ != nullptr ? ring_buffer__epoll_fd(rb_) : -1; }

int WaitWriter::onRecord(void* ctx, void* data, size_t size) {
  auto* self = static_cast<WaitWriter*>(ctx);
  if (size < sizeof(lw_wait)) return 0;
  if (self->failed_) {
    ++self->unwritten_;
    return 0;
  }
  lw_wait w;
  std::memcpy(&w, data, sizeof w);
  if (std::fprintf(self->file_.file(), "%llu,%u,%s,%llu,%llu,%s,%u\n", w.begin_ns, w.tid,
                   std::string(lockSiteOrUnknown(w.site)).c_str(), w.wait_ns, w.hold_ns,
                   std::string(lockSiteOrUnknown(w.blocked_by)).c_str(), unsigned(w.in_rundown)) < 0) {
    self->failed_ = true;
    self->errno_ = errno;  // the write's: other calls overwrite errno before finish()
    ++self->unwritten_;
    return 0;
  }
  ++self->written_;
  return 0;
}

bool WaitWriter::consume() {
  if (rb_ != nullptr) ring_buffer__consume(rb_);
  return !failed_;
}

std::string WaitWriter::error() const {
  return failed_ ? std::string("write: ") + std::strerror(errno_) : std::string();
}

std::string WaitWriter::finish() {
  consume();
  if (failed_) {
    file_.abort();
    return error() + " (" + std::to_string(written_) + " waits written before it, " + std::to_string(unwritten_) +
           " not written; the file removed)";
  }
  return file_.commit() ? "" : file_.error();
}

}  // namespace jitprov::lw
