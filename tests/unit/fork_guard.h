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

#include <dirent.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <initializer_list>

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

// In a forked child: SIGALRM after `seconds` ends it (status: killed by SIGALRM, which the
// test reports as a hang) after writing its only thread's stack to stderr, so that a hang
// seen once in CI says where it was (the frames of libjitprov's hidden functions as
// offsets: addr2line -e libjitprov.so.1 -f OFFSET names them). backtrace() is called
// once here first: its first call loads libgcc's unwinder, which is not safe in a signal
// handler.
inline void armHangReport(unsigned seconds) {
  void* warm[1];
  (void)backtrace(warm, 1);
  struct sigaction sa {};
  sa.sa_handler = [](int) {
    static const char kHead[] = "fork test child hung; its stack:\n";
    (void)!write(2, kHead, sizeof kHead - 1);
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    // Its other threads (those it started after the fork): name and the system call each
    // is in (/proc/self/task/TID/syscall: number, arguments). Not async-signal-safe
    // (opendir), which a process hung for seconds can afford.
    if (DIR* d = opendir("/proc/self/task")) {
      while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char path[320], buf[256];
        for (const char* what : {"comm", "syscall"}) {
          snprintf(path, sizeof path, "/proc/self/task/%s/%s", e->d_name, what);
          const int fd = open(path, O_RDONLY);
          if (fd < 0) continue;
          const ssize_t n = read(fd, buf, sizeof buf - 1);
          close(fd);
          if (n <= 0) continue;
          char line[400];
          const int len = snprintf(line, sizeof line, "  task %s %s: %.*s", e->d_name, what, int(n), buf);
          (void)!write(2, line, size_t(len < int(sizeof line) ? len : int(sizeof line) - 1));
        }
      }
      closedir(d);
    }
    signal(SIGALRM, SIG_DFL);
    raise(SIGALRM);  // killed by SIGALRM, as before
  };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  alarm(seconds);
}
