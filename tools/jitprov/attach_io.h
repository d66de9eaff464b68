/* SPDX-License-Identifier: MIT */
// The plumbing both attach protocols share (hotspot_attach.cc, clr_attach.cc), written
// once because root runs it against files and sockets the target chooses:
//   - runAsTarget: the exchange with the target in a forked child that has dropped to the
//     target's ids completely (no supplementary groups, no saved root uid), its outcome
//     sent back over a pipe, the child killed at the deadline (kTimedOut);
//   - readSmall: a file the target may have planted read without following a symlink,
//     without blocking on a FIFO, only when it is a regular file of the expected owner,
//     and at most so many bytes;
//   - connectUnix / sendAll / recvAll: a Unix socket's I/O bounded by a deadline (a full
//     backlog or a stuck peer gives kTimedOut, never a hang) and a byte cap;
//   - peerPidIs: the connected peer is the target (SO_PEERCRED), not a socket planted
//     under its name;
//   - printable: target-chosen text made safe for the user's terminal.
#pragma once

#include "attach.h"
#include "target.h"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace jitprov::cli {

using AttachDeadline = std::chrono::steady_clock::time_point;

// Runs fn() in a child process that holds the target's ids: when our effective uid or
// gid differ from the target's euid/egid, the child calls setgroups(0, NULL),
// setresgid(g, g, g) and setresuid(u, u, u) first (as root: all of them, so nothing of
// root is left; kPermission when one fails). fn's outcome (status, line, version) comes
// back over a pipe. The parent waits until the deadline (plus 200 ms for the child's own
// last report): a child still running then is killed and the outcome is kTimedOut; a
// child that died without an outcome is kError. Nothing leaks when pipe or fork fail.
// netns_fd, when not -1: a network namespace (an open /proc/PID/ns/net) the child enters
// with setns() before it drops the ids, so that fn's sockets are the target's, as its
// loopback (node's inspector); kPermission when it cannot (CAP_SYS_ADMIN is needed).
// The child then closes it, and after the ids drop holds no capability at all (and
// PR_SET_NO_NEW_PRIVS), whatever the target's ids.
AttachOutcome runAsTarget(const TargetInfo& t, AttachDeadline deadline, const std::function<AttachOutcome()>& fn,
                          int netns_fd = -1);

// 0 when this process may enter the network namespace netns_fd (tried with setns() in a
// child that exits at once); setns's errno when not (EPERM without CAP_SYS_ADMIN over
// it); -errno when it could not be tried (fork, waitpid).
int tryEnterNetns(int netns_fd);

// A file descriptor closed when it goes out of scope (-1: none).
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
};

// Whether runAsTarget's child would switch ids for `t` (our euid or egid differ).
bool needsIdSwitch(const Target& t);

// Reads at most `max` bytes of `path` into *out: opened O_RDONLY|O_NOFOLLOW|O_NONBLOCK|
// O_CLOEXEC (a symlink as last component is refused, a FIFO does not block), then fstat:
// a regular file owned by `owner` (kAnyOwner: not checked). A larger file gives its first
// `max` bytes. When `root` is given, `path` is resolved inside it (openat2 with
// RESOLVE_IN_ROOT and RESOLVE_NO_MAGICLINKS: absolute symlinks and ".." stay under the
// target's root). "" when read, else why not (for a line).
inline constexpr uid_t kAnyOwner = uid_t(-1);
std::string readSmall(const std::string& path, uid_t owner, size_t max, std::string* out, const std::string& root = {});

// `s` with every byte below 0x20 and 0x7f replaced by '?', cut to `max` bytes ("..."
// appended when cut). For any text the target chose (comm, replies, paths, versions)
// before it reaches a terminal.
std::string printable(const std::string& s, size_t max = 200);

// The outcomes of the socket helpers below.
enum class IoStatus {
  kOk,
  kTimedOut,  // the deadline passed
  kClosed,    // the peer closed (EPIPE, ECONNRESET; for recvAll: EOF before any byte when allow_empty is false)
  kTooLarge,  // recvAll: more than the cap
  kError,     // errno says which
};

// A non-blocking AF_UNIX SOCK_STREAM connect to `path`, retried while the listener's
// backlog is full (EAGAIN) and polled while in progress, until the deadline. *fd: the
// connected socket, O_NONBLOCK and O_CLOEXEC (use sendAll/recvAll); the caller closes it.
// *err: errno when kError (ECONNREFUSED, EACCES, ENOENT ...).
IoStatus connectUnix(const std::string& path, AttachDeadline deadline, int* fd, int* err);

// Whether the peer of the connected Unix socket `fd` is process `pid` (SO_PEERCRED,
// pid as our pid namespace sees it). *peer: the peer's pid (0 when unknown).
bool peerPidIs(int fd, pid_t pid, pid_t* peer = nullptr);

// Sends all of `data` on the non-blocking socket `fd` before the deadline (MSG_NOSIGNAL).
IoStatus sendAll(int fd, const std::string& data, AttachDeadline deadline, int* err);

// Reads until EOF (the peer's close) into *out, at most `cap` bytes (kTooLarge beyond),
// before the deadline. EOF is kOk (even with nothing read); ECONNRESET is kClosed.
IoStatus recvAll(int fd, size_t cap, AttachDeadline deadline, std::string* out, int* err);

}  // namespace jitprov::cli
