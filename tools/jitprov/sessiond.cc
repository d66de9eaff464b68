// SPDX-License-Identifier: MIT
// The lttng-sessiond of `jitprov record` (sessiond.h).
#include "sessiond.h"

#include "run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace jitprov::cli {

bool sessiondAnswers() { return run({"lttng", "list"}).status == 0; }

void stopSessiond(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 500; ++i) {  // it ends in 30-40 ms
    int st = 0;
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) return;
    const timespec ts{0, 10'000'000};
    nanosleep(&ts, nullptr);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

void execSessiond(pid_t parent, const char* log) {
  setsid();
  // The parent's handlers and ignored signals gone first: the death signal below must end
  // this child before the exec too (a handler would only note it), and the daemon starts
  // with every signal's default.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Stopped with its parent, also when that is killed (SIGKILL: no handler runs): it
  // stops its consumer daemons, and nothing is left behind.
  endWithParent(parent);
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  const int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (devnull >= 0) dup2(devnull, 0);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
  }
  execlp("lttng-sessiond", "lttng-sessiond", "--quiet", static_cast<char*>(nullptr));
  _exit(127);
}

Awaited awaitSessiond(pid_t child, const std::string& log, std::string* why, const std::function<bool()>& interrupted) {
  // It answers within 10-20 ms here: asked again after 5 ms, then half as long again each
  // time up to 100 ms (a poll every 100 ms cost every recording 85 ms on average).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int wait_ms = 5; std::chrono::steady_clock::now() < deadline; wait_ms = std::min(100, wait_ms * 3 / 2)) {
    if (sessiondAnswers()) return Awaited::kAnswers;
    if (interrupted()) {
      *why = "interrupted";
      return Awaited::kInterrupted;
    }
    int st = 0;
    if (waitpid(child, &st, WNOHANG) == child) {
      std::ifstream in(log);
      std::stringstream ss;
      ss << in.rdbuf();
      *why = "lttng-sessiond exited at once: " + firstLine(ss.str());
      return Awaited::kEnded;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
  *why = "lttng-sessiond did not answer within 10 s";
  return Awaited::kNoAnswer;
}

std::string lttngRunDir() {
  if (geteuid() == 0) return "/var/run/lttng";
  const char* home = std::getenv("LTTNG_HOME");
  if (home == nullptr || *home == '\0') home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.lttng";
}

namespace {

constexpr const char* kKeeperName = "jitprov-keeper";  // its comm (15 characters at most)

volatile sig_atomic_t g_keeper_stop = 0;
void onKeeperStop(int) { g_keeper_stop = 1; }

// The pid the keeper file names (decimal, a newline), or 0. Async-signal-safe: the keeper
// reads it too.
pid_t readKeeperFile(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char b[24];
  const ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  pid_t pid = 0;
  for (ssize_t i = 0; i < n && b[i] >= '0' && b[i] <= '9' && pid < 100'000'000; ++i) pid = pid * 10 + (b[i] - '0');
  return pid;
}

// The keeper, in the child just forked by the recording that starts the daemon, which
// holds the shared lock: the daemon forked as its child, then, every 100 ms, whether a
// recording holds the lock still (an exclusive lock not granted), until SIGTERM (from the
// last recording, which holds the lock exclusively) or the daemon's own end. Then the
// daemon stopped, the keeper file removed if it names this keeper. Only async-signal-safe
// calls: the recording may have threads.
[[noreturn]] void keeperMain(const char* lock_path, const char* keeper_path, const char* log) {
  setsid();
  prctl(PR_SET_NAME, kKeeperName);
  struct sigaction sa {};
  sa.sa_handler = onKeeperStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  for (const int sig : {SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // The recording's descriptors closed: its locks with them (a lock belongs to the open
  // file, which this copy would keep held after the recording is gone), and its stdin,
  // stdout and stderr (a caller reading its output, `$(jitprov record -p ...)`, would wait
  // for this keeper's end); its directory left.
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0)
    for (int fd = 0; fd < 3; ++fd) dup2(devnull, fd);
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
    for (int fd = 3; fd < 1024; ++fd) close(fd);
  if (chdir("/") != 0) {
  }
  const int lock = open(lock_path, O_RDWR | O_CLOEXEC);
  const pid_t self = getpid();
  const pid_t daemon = fork();
  if (daemon == 0) execSessiond(self, log);
  bool ended = daemon < 0;
  while (!ended && g_keeper_stop == 0) {
    int st = 0;
    if (waitpid(daemon, &st, WNOHANG) == daemon) ended = true;
    if (ended || (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)) break;
    const timespec ts{0, 100'000'000};
    nanosleep(&ts, nullptr);
  }
  if (!ended) stopSessiond(daemon);
  if (readKeeperFile(keeper_path) == self) unlink(keeper_path);
  _exit(0);
}

// A pidfd of the keeper that the keeper file names, when it is a keeper (its comm), else -1.
int openKeeper(const std::string& keeper_path) {
  const pid_t pid = readKeeperFile(keeper_path.c_str());
  if (pid <= 0) return -1;
  const int fd = int(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return -1;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  if (name != kKeeperName) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the process of `pidfd` ended within `ms`.
bool waitExit(int pidfd, int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{pidfd, POLLIN, 0};
    const int n = poll(&p, 1, int(std::max<long long>(0, left)));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

}  // namespace

namespace {
// flock(fd, op | LOCK_NB) until it is granted (""), `interrupted` says so, or 20 s pass.
std::string takeLock(int fd, int op, const std::string& path, const std::function<bool()>& interrupted) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (flock(fd, op | LOCK_NB) != 0) {
    if (interrupted()) return "interrupted";
    if (std::chrono::steady_clock::now() >= deadline)
      return path + " held for 20 s: another jitprov record starting or stopping its lttng-sessiond?";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}
}  // namespace

std::string SharedSessiond::acquire(const std::function<bool()>& interrupted, Joined* joined) {
  std::string why = join(interrupted, joined);
  if (!why.empty()) (void)release();  // nothing held, a keeper started for nothing stopped
  return why;
}

std::string SharedSessiond::join(const std::function<bool()>& interrupted, Joined* joined) {
  *joined = Joined::kNone;
  const std::string dir = lttngRunDir();
  if (mkdir(dir.c_str(), geteuid() == 0 ? 0755 : 0700) != 0 && errno != EEXIST)
    return "cannot create " + dir + ": " + std::strerror(errno);
  const std::string lock_path = dir + "/jitprov-record.lock", keeper_path = dir + "/jitprov-record.keeper",
                    start_path = dir + "/jitprov-record.start", log = dir + "/jitprov-record-sessiond.log";
  lock_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_ < 0) return "cannot open " + lock_path + ": " + std::strerror(errno);
  // Held exclusively only while a keeper or the last recording stops the daemon.
  if (std::string why = takeLock(lock_, LOCK_SH, lock_path, interrupted); !why.empty()) return why;
  // One recording at a time looks for the daemon and starts one: two at once would each
  // start one (the second exits at once, its keeper with it).
  const int start = open(start_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (start < 0) return "cannot open " + start_path + ": " + std::strerror(errno);
  struct Unlock {
    int fd;
    ~Unlock() { close(fd); }
  } unlock{start};
  if (std::string why = takeLock(start, LOCK_EX, start_path, interrupted); !why.empty()) return why;
  if (sessiondAnswers()) {
    keeper_pidfd_ = openKeeper(keeper_path);  // -1: not a recording's (a user's, a system's)
    *joined = keeper_pidfd_ >= 0 ? Joined::kRecordings : Joined::kRunning;
    return {};
  }
  // What the keeper needs, made before the fork (it may not allocate).
  const std::string tmp = keeper_path + ".tmp";
  const pid_t keeper = fork();
  if (keeper == 0) keeperMain(lock_path.c_str(), keeper_path.c_str(), log.c_str());
  if (keeper < 0) return std::string("fork: ") + std::strerror(errno);
  keeper_ = keeper;
  keeper_pidfd_ = int(syscall(SYS_pidfd_open, keeper, 0));
  // Named before its daemon answers: a recording that finds the daemon finds the keeper.
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fprintf(f, "%d\n", int(keeper));
    const bool ok = std::fclose(f) == 0;
    if (!ok || std::rename(tmp.c_str(), keeper_path.c_str()) != 0) std::remove(tmp.c_str());
  }
  std::string why;
  const Awaited a = awaitSessiond(keeper, log, &why, interrupted);
  if (a == Awaited::kAnswers) {
    *joined = Joined::kStarted;
    return {};
  }
  if (a == Awaited::kEnded) keeper_ = 0;  // reaped: the daemon ended, so did its keeper
  return why;
}

bool SharedSessiond::release() {
  if (lock_ < 0) return false;
  // The last to leave when no other recording holds the lock. A conversion frees the
  // lock before it asks again: a keeper may take it then (it stops the daemon), another
  // recording may leave meanwhile (asked once more).
  bool last = false, stays = false, keeper_stops = false;
  for (int tries = 0; tries < 3 && !last && !keeper_stops && !stays; ++tries) {
    last = flock(lock_, LOCK_EX | LOCK_NB) == 0;
    if (!last && flock(lock_, LOCK_SH | LOCK_NB) != 0) keeper_stops = true;  // the keeper holds it
    if (!last && !keeper_stops && tries == 2) stays = true;                  // others use the daemon
    if (!last && !keeper_stops && !stays) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (keeper_pidfd_ >= 0) {
    int wait_ms = keeper_stops ? 15000 : 0;
    if (last && syscall(SYS_pidfd_send_signal, keeper_pidfd_, SIGTERM, nullptr, 0) == 0) wait_ms = 15000;
    if (wait_ms > 0) (void)waitExit(keeper_pidfd_, wait_ms);
    close(keeper_pidfd_);
    keeper_pidfd_ = -1;
  }
  stays = stays && keeper_ > 0;  // said by the recording that started it
  if (keeper_ > 0 && !stays) {
    if (waitpid(keeper_, nullptr, WNOHANG) == 0) {  // not ended after 15 s: killed, with its daemon
      kill(keeper_, SIGKILL);
      waitpid(keeper_, nullptr, 0);
    }
  }
  keeper_ = 0;
  close(lock_);
  lock_ = -1;
  return stays;
}

}  // namespace jitprov::cli
