/* SPDX-License-Identifier: MIT */
// populatePages(): fresh anonymous memory made present by one system call instead of a
// page fault per page. Part of the common library (header only).
//
// A page fault on this project's paravirtualised VM costs 11-16 us (an exception into the
// guest kernel, a page table write the hypervisor checks, the return); one
// madvise(MADV_POPULATE_WRITE) of a 64 KB block makes its 16 pages present for 1.4-1.8 us
// a page, and the writes that follow fault no more (docs/measurements.md, "Pages made
// present ahead, 4 KB ones"). The registry's tables, its name arenas and the host key
// index use it for memory they are about to write: the same pages, present before the
// writer needs them.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it (EINVAL)
#endif

namespace jitprov {

// The bytes populated at a time where a writer moves through a large range (a block
// fits the VM's win above and is small beside any table that needs it).
inline constexpr size_t kPopulateBlock = 64 * 1024;

// Whether this kernel populates at all (MADV_POPULATE_WRITE, Linux 5.14; a zero length
// tells), asked once.
inline bool populateSupported() noexcept {
  static const bool can = [] {
    alignas(4096) static char probe[4096];
    return madvise(probe, 0, MADV_POPULATE_WRITE) == 0;
  }();
  return can;
}

// Makes every page that holds a byte of [p, p + n) present and writable, as if written
// (contents unchanged): [p, p + n) lies in a private writable mapping (memory from
// malloc or mmap), and so does every page it touches, a mapping being whole pages. False
// where the kernel did not (no MADV_POPULATE_WRITE, no memory): those pages fault in at
// their first touch, as without this; nothing else changes.
inline bool populatePages(void* p, size_t n) noexcept {
  if (n == 0 || !populateSupported()) return false;
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n + page - 1) & ~(page - 1);
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
}

}  // namespace jitprov
