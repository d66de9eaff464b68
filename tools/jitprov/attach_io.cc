// SPDX-License-Identifier: MIT
#include "attach_io.h"

#include "json_text.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace jitprov::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left to the deadline, at least 0, at most INT_MAX-ish for poll().
int msLeft(AttachDeadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return int(std::clamp<long long>(left, 0, 1 << 30));
}

bool writeAll(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// The outcome across the pipe: "STATUS\0VERSION\0LINE", each part capped.
constexpr size_t kMaxOutcome = 8192;

std::string encode(const AttachOutcome& o) {
  std::string s = std::to_string(o.status) + (o.not_yet == AttachOutcome::NotYet::kYoung      ? "+"
                                              : o.not_yet == AttachOutcome::NotYet::kStarting ? "*"
                                                                                              : "");
  s.push_back('\0');
  s += o.version.substr(0, 256);
  s.push_back('\0');
  s += o.line.substr(0, kMaxOutcome - 512);
  return s;
}

bool decode(const std::string& s, AttachOutcome* o) {
  const size_t a = s.find('\0');
  const size_t b = a == std::string::npos ? a : s.find('\0', a + 1);
  if (b == std::string::npos) return false;
  char* end = nullptr;
  const long st = std::strtol(s.c_str(), &end, 10);
  const bool young = *end == '+', starting = *end == '*';
  o->not_yet = young      ? AttachOutcome::NotYet::kYoung
               : starting ? AttachOutcome::NotYet::kStarting
                          : AttachOutcome::NotYet::kNo;
  if (end + (young || starting ? 1 : 0) != s.c_str() + a || a == 0 || end == s.c_str()) return false;
  o->status = int(st);
  o->version = s.substr(a + 1, b - a - 1);
  o->line = s.substr(b + 1);
  return true;
}

// The drop, in the child: "" or why not.
std::string dropTo(const Target& t) {
  if (setgroups(0, nullptr) != 0) return std::string("setgroups(0): ") + std::strerror(errno);
  if (setresgid(t.egid, t.egid, t.egid) != 0)
    return "setresgid(" + std::to_string(t.egid) + "): " + std::strerror(errno);
  if (setresuid(t.euid, t.euid, t.euid) != 0)
    return "setresuid(" + std::to_string(t.euid) + "): " + std::strerror(errno);
  return {};
}

std::string secs(std::chrono::steady_clock::duration d) {
  const double s = std::chrono::duration<double>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

}  // namespace

int tryEnterNetns(int netns_fd) {
  const pid_t child = fork();
  if (child < 0) return -errno;
  if (child == 0) _exit(setns(netns_fd, CLONE_NEWNET) == 0 ? 0 : (errno & 0x7f) != 0 ? errno & 0x7f : EPERM);
  int st = 0;
  while (waitpid(child, &st, 0) < 0)
    if (errno != EINTR) return -errno;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
}

Fd::~Fd() {
  if (fd >= 0) close(fd);
}

bool needsIdSwitch(const Target& t) { return geteuid() != t.euid || getegid() != t.egid; }

AttachOutcome runAsTarget(const TargetInfo& t, AttachDeadline deadline, const std::function<AttachOutcome()>& fn,
                          int netns_fd) {
  const std::string who = describe(t);
  const auto start = Clock::now();
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return AttachOutcome{kError, std::string("pipe: ") + std::strerror(errno), {}};
  const pid_t child = fork();
  if (child < 0) {
    const int err = errno;
    close(p[0]);
    close(p[1]);
    return AttachOutcome{kError, std::string("fork: ") + std::strerror(err), {}};
  }
  if (child == 0) {
    close(p[0]);
    AttachOutcome o;
    // Before the drop: entering a namespace needs CAP_SYS_ADMIN, which the drop ends.
    if (netns_fd >= 0) {
      if (setns(netns_fd, CLONE_NEWNET) != 0) {
        const int err = errno;
        o = AttachOutcome{err == EPERM || err == EACCES ? kPermission : kError,
                          who + ": cannot enter its network namespace: " + std::strerror(err) +
                              (err == EPERM ? " (it takes CAP_SYS_ADMIN: run as root)" : ""),
                          {}};
        (void)writeAll(p[1], encode(o));
        _exit(0);
      }
      close(netns_fd);
    }
    if (needsIdSwitch(t.target)) {
      if (const std::string why = dropTo(t.target); !why.empty()) {
        o = AttachOutcome{kPermission,
                          who + ": cannot take its ids (uid " + std::to_string(t.target.euid) + ", gid " +
                              std::to_string(t.target.egid) + "): " + why,
                          {}};
        (void)writeAll(p[1], encode(o));
        _exit(0);
      }
    }
    // In another network namespace (a container's), the child talks to what the target
    // serves there holding no capability at all, even when the target's ids are root's:
    // the exchange needs none, and a flaw in it must not reach beyond the target's ids.
    if (netns_fd >= 0) {
      __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
          prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 || syscall(SYS_capset, &h, none) != 0) {
        o = AttachOutcome{kError, who + ": cannot drop the capabilities: " + std::strerror(errno), {}};
        (void)writeAll(p[1], encode(o));
        _exit(0);
      }
    }
    // Set after the drop, which clears it: the child does not outlive us.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(1);
    o = fn();
    (void)writeAll(p[1], encode(o));
    _exit(0);
  }
  close(p[1]);
  std::string msg;
  bool killed = false;
  const AttachDeadline hard = deadline + std::chrono::milliseconds(200);
  for (;;) {
    pollfd pf{p[0], POLLIN, 0};
    const int pr = poll(&pf, 1, msLeft(hard));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) {
      kill(child, SIGKILL);  // our own child, past its deadline
      killed = true;
      break;
    }
    char buf[1024];
    const ssize_t n = read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg.append(buf, size_t(n));
    if (msg.size() > kMaxOutcome) break;
  }
  close(p[0]);
  int ws = 0;
  while (waitpid(child, &ws, 0) < 0 && errno == EINTR) {
  }
  if (killed)
    return AttachOutcome{
        kTimedOut, who + ": no answer within " + secs(deadline - start) + " (the attach was abandoned)", {}};
  AttachOutcome o;
  if (!decode(msg, &o)) {
    const std::string how = WIFSIGNALED(ws) ? "killed by signal " + std::to_string(WTERMSIG(ws))
                                            : "exit " + std::to_string(WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    return AttachOutcome{kError, who + ": the attach helper process failed (" + how + ")", {}};
  }
  return o;
}

std::string readSmall(const std::string& path, uid_t owner, size_t max, std::string* out, const std::string& root) {
  out->clear();
  constexpr int kFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  int fd = -1;
  if (root.empty()) {
    fd = open(path.c_str(), kFlags);
  } else {
    const int rfd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) return root + ": " + std::strerror(errno);
    open_how how{};
    how.flags = uint64_t(kFlags);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    fd = int(syscall(SYS_openat2, rfd, path.c_str(), &how, sizeof how));
    const int err = errno;
    close(rfd);
    errno = err;
  }
  const std::string shown = printable(root + path);
  if (fd < 0) {
    if (errno == ELOOP) return shown + ": a symbolic link: not followed";
    return shown + ": " + std::strerror(errno);
  }
  struct stat st {};
  std::string why;
  if (fstat(fd, &st) != 0)
    why = shown + ": fstat: " + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    why = shown + ": not a regular file";
  else if (owner != kAnyOwner && st.st_uid != owner)
    why = shown + ": owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(owner);
  while (why.empty() && out->size() < max) {
    char buf[4096];
    const ssize_t n = read(fd, buf, std::min(sizeof buf, max - out->size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) why = shown + ": read: " + std::strerror(errno);
    if (n <= 0) break;
    out->append(buf, size_t(n));
  }
  close(fd);
  if (!why.empty()) out->clear();
  return why;
}

std::string printable(const std::string& s, size_t max) {
  return tools::terminalText(s.substr(0, max)) + (s.size() > max ? "..." : "");
}

IoStatus connectUnix(const std::string& path, AttachDeadline deadline, int* fd, int* err) {
  *fd = -1;
  *err = 0;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    *err = ENAMETOOLONG;
    return IoStatus::kError;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  for (int backoff = 5;; backoff = std::min(backoff * 2, 50)) {
    const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) {
      *err = errno;
      return IoStatus::kError;
    }
    int rc;
    do rc = connect(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    while (rc != 0 && errno == EINTR);
    if (rc == 0) {
      *fd = s;
      return IoStatus::kOk;
    }
    const int e = errno;
    if (e == EINPROGRESS) {
      pollfd pf{s, POLLOUT, 0};
      int pr;
      do pr = poll(&pf, 1, msLeft(deadline));
      while (pr < 0 && errno == EINTR);
      int soerr = 0;
      socklen_t len = sizeof soerr;
      if (pr > 0 && getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0) {
        *fd = s;
        return IoStatus::kOk;
      }
      close(s);
      if (pr == 0) return IoStatus::kTimedOut;
      *err = soerr != 0 ? soerr : errno;
      return IoStatus::kError;
    }
    close(s);
    if (e != EAGAIN) {  // AF_UNIX: EAGAIN is a full backlog; try again
      *err = e;
      return IoStatus::kError;
    }
    if (msLeft(deadline) == 0) return IoStatus::kTimedOut;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(backoff, msLeft(deadline) + 1)));
  }
}

bool peerPidIs(int fd, pid_t pid, pid_t* peer) {
  ucred cr{};
  socklen_t len = sizeof cr;
  const bool ok = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && len == sizeof cr;
  if (peer != nullptr) *peer = ok ? cr.pid : 0;
  return ok && cr.pid == pid && pid > 0;
}

IoStatus sendAll(int fd, const std::string& data, AttachDeadline deadline, int* err) {
  *err = 0;
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      done += size_t(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET) {
      *err = errno;
      return IoStatus::kClosed;
    }
    if (errno != EAGAIN) {
      *err = errno;
      return IoStatus::kError;
    }
    pollfd pf{fd, POLLOUT, 0};
    const int pr = poll(&pf, 1, msLeft(deadline));
    if (pr == 0) return IoStatus::kTimedOut;
    if (pr < 0 && errno != EINTR) {
      *err = errno;
      return IoStatus::kError;
    }
  }
  return IoStatus::kOk;
}

IoStatus recvAll(int fd, size_t cap, AttachDeadline deadline, std::string* out, int* err) {
  *err = 0;
  for (;;) {
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return IoStatus::kOk;
    if (n > 0) {
      if (out->size() + size_t(n) > cap) return IoStatus::kTooLarge;
      out->append(buf, size_t(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) {
      *err = errno;
      return IoStatus::kClosed;
    }
    if (errno != EAGAIN) {
      *err = errno;
      return IoStatus::kError;
    }
    pollfd pf{fd, POLLIN, 0};
    const int pr = poll(&pf, 1, msLeft(deadline));
    if (pr == 0) return IoStatus::kTimedOut;
    if (pr < 0 && errno != EINTR) {
      *err = errno;
      return IoStatus::kError;
    }
  }
}

}  // namespace jitprov::cli
