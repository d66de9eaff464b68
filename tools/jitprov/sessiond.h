/* SPDX-License-Identifier: MIT */
// The lttng-sessiond of `jitprov record` (sessiond.cc; docs/spec.md, "jitprov record").
// A recording of CMD has a daemon of its own (record.cc: in a private mount namespace for
// root, a private LTTNG_HOME for a user). A recording of a running process (-p PID) must
// use the daemon where that process's lttng-ust looks: lttng's shared place, which other
// recordings share too. There, every `jitprov record -p` holds a shared flock(2) on
// RUNDIR/jitprov-record.lock while it uses the daemon; one at a time, under
// RUNDIR/jitprov-record.start, looks for the daemon and starts one; a daemon one of them
// started is the child of a small keeper process (`jitprov-keeper`, its pid in
// RUNDIR/jitprov-record.keeper) that stops it once no recording holds the lock: when the
// last one leaves, or when the recordings are gone (killed outright included). A
// recording that started the daemon no longer stops it under another that uses it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace jitprov::cli {

// Whether an lttng-sessiond answers (`lttng list`).
bool sessiondAnswers();

// SIGTERM, then SIGKILL after 5 s; waited for (a child of the caller).
void stopSessiond(pid_t pid);

// In a child just forked by `parent`: lttng-sessiond --quiet, in a session of its own,
// ended with `parent` (endWithParent), its output into `log` (a path made before the
// fork). Never returns.
[[noreturn]] void execSessiond(pid_t parent, const char* log);

// Waits until an lttng-sessiond answers, up to 10 s, or `child` (the daemon, or its
// keeper) ends (reaped), or `interrupted` says so (asked at each poll): *why says which
// when it does not answer.
enum class Awaited { kAnswers, kEnded, kNoAnswer, kInterrupted };
Awaited awaitSessiond(pid_t child, const std::string& log, std::string* why, const std::function<bool()>& interrupted);

// lttng's shared place for this user: /var/run/lttng for root, else $LTTNG_HOME/.lttng
// (or $HOME/.lttng), as lttng-ust and the lttng CLI find it.
std::string lttngRunDir();

// The daemon in lttng's shared place, used by one recording (see above).
class SharedSessiond {
 public:
  SharedSessiond() = default;
  SharedSessiond(const SharedSessiond&) = delete;
  SharedSessiond& operator=(const SharedSessiond&) = delete;
  ~SharedSessiond() { (void)release(); }

  // Which daemon a recording joined.
  enum class Joined {
    kNone,        // not joined (acquire failed)
    kRunning,     // one that answered, of no recording's (a user's, a system's)
    kRecordings,  // one that answered, started by another jitprov record (its keeper's)
    kStarted,     // one this recording started, under a keeper
  };

  // Joins: the shared lock taken (waiting, up to 20 s, while another recording stops the
  // daemon it was the last to use; `interrupted` asked every 20 ms); then, one recording
  // at a time (RUNDIR/jitprov-record.start), the daemon that answers used, else one
  // started under a keeper (its output in RUNDIR/jitprov-record-sessiond.log). *joined
  // says which. "" or why not (nothing held then).
  std::string acquire(const std::function<bool()>& interrupted, Joined* joined);

  // Leaves: the lock released; the last recording to leave a daemon that a recording
  // started stops it (through its keeper, waited for). True when this recording started
  // the daemon and it stays, for another that still uses it.
  bool release();

 private:
  std::string join(const std::function<bool()>& interrupted, Joined* joined);  // acquire's work

  int lock_ = -1;          // the open lock file, flock LOCK_SH while held
  int keeper_pidfd_ = -1;  // the keeper's (a daemon a jitprov record started), else -1
  pid_t keeper_ = 0;       // the keeper, when this recording started it (ours to reap)
};

}  // namespace jitprov::cli
