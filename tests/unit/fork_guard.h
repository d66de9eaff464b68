// SPDX-License-Identifier: MIT
// Tests that fork() while other threads of the test allocate and free run in the main
// build only:
// - ThreadSanitizer does not support fork() in a multi-threaded process (the child dies
//   when a thread starts, or deadlocks in TSan's runtime with die_after_fork=0).
// - GCC 12's AddressSanitizer runtime takes none of its allocator's locks around fork()
//   (LLVM added those pthread_atfork handlers in llvm/llvm-project#75290, 2023-12, after
//   the copy GCC 12 ships): a child forked while another thread refills a size class
//   from ASan's allocator inherits that class's lock held and hangs at its first
//   allocation of that size. Seen in CI on 2026-12-04 (a child of
//   ForkedChildrenNeverHangAndReclaim killed by its alarm) and here, 1 child of 60 under
//   load, its rundown thread in SizeClassAllocator64::GetFromAllocator. glibc's malloc,
//   which the main build uses, takes its arenas' locks around fork().
// The fork tests whose parent's threads stay idle at the fork (SKIP_FORK_UNDER_TSAN) run
// under ASan too.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define SKIP_FORK_UNDER_TSAN() GTEST_SKIP() << "fork() with threads is not supported under ThreadSanitizer"
#else
#define SKIP_FORK_UNDER_TSAN() (void)0
#endif

#if defined(__SANITIZE_THREAD__)
#define SKIP_FORK_WITH_BUSY_THREADS() GTEST_SKIP() << "fork() with threads is not supported under ThreadSanitizer"
#elif defined(__SANITIZE_ADDRESS__)
#define SKIP_FORK_WITH_BUSY_THREADS()                                                     \
  GTEST_SKIP() << "GCC 12's AddressSanitizer does not lock its allocator around fork(): " \
                  "a child can inherit its lock held (tests/unit/fork_guard.h)"
#else
#define SKIP_FORK_WITH_BUSY_THREADS() (void)0
#endif
