// SPDX-License-Identifier: MIT
// What the verbs that run other programs share (run.h).
#include "run.h"

#include "target.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace jitprov::cli {

// CMD as execvp would find it: the path, or "" with *err (ENOENT, EACCES).
std::string findCommand(const std::string& cmd, int* err) {
  auto usable = [err](const std::string& p) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) {
      *err = errno;
      return false;
    }
    if (S_ISDIR(st.st_mode) || access(p.c_str(), X_OK) != 0) {
      *err = EACCES;
      return false;
    }
    return true;
  };
  *err = ENOENT;
  if (cmd.empty()) return {};
  if (cmd.find('/') != std::string::npos) return usable(cmd) ? cmd : std::string();
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  int found_err = ENOENT;
  size_t pos = 0;
  while (pos <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', pos), dirs.size());
    std::string d = dirs.substr(pos, colon - pos);
    pos = colon + 1;
    if (d.empty()) d = ".";
    const std::string p = d + "/" + cmd;
    if (usable(p)) return p;
    if (*err == EACCES) found_err = EACCES;  // there, but not executable: said if nothing else is
  }
  *err = found_err;
  return {};
}

// Runs argv (PATH searched) in a process group of its own, its stdin from /dev/null and
// its stdout and stderr captured (or into `out_path` when given, stderr captured).
Ran run(const std::vector<std::string>& argv, const std::string& out_path, const std::function<bool()>& stop) {
  Ran r;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return r;
  int out_fd = -1;
  if (!out_path.empty()) {
    out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) {
      close(pipefd[0]);
      close(pipefd[1]);
      r.output = out_path + ": " + std::strerror(errno);
      return r;
    }
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    // Ended with us, also when we are killed or interrupted without a handler (jitprov
    // report's Ctrl-C): a verifier of a large trace must not run on alone.
    endWithParent(parent);
    const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_fd >= 0 ? out_fd : pipefd[1], 1);
    dup2(pipefd[1], 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    dprintf(2, "%s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  close(pipefd[1]);
  if (out_fd >= 0) close(out_fd);
  if (pid < 0) {
    close(pipefd[0]);
    return r;
  }
  setpgid(pid, pid);  // as the child does: its group exists before a stop signals it
  char buf[4096];
  std::chrono::steady_clock::time_point stop_sent{};
  bool sent = false, killed = false;
  for (;;) {
    if (stop) {  // asked every 100 ms and at each signal: SIGTERM once it says so, SIGKILL 5 s after
      pollfd p{pipefd[0], POLLIN, 0};
      const int ready = poll(&p, 1, 100);
      if (!sent && stop()) {
        if (kill(-pid, SIGTERM) != 0) kill(pid, SIGTERM);
        sent = true;
        stop_sent = std::chrono::steady_clock::now();
      } else if (sent && !killed && std::chrono::steady_clock::now() - stop_sent >= std::chrono::seconds(5)) {
        if (kill(-pid, SIGKILL) != 0) kill(pid, SIGKILL);
        killed = true;
      }
      if (ready <= 0) continue;  // nothing yet, or a signal
    }
    const ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n > 0) {
      if (r.output.size() < (1 << 20)) r.output.append(buf, size_t(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipefd[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  // Stopped when the stop's signal ended it (one that had finished first keeps its outcome).
  r.stopped = sent && (r.signal == SIGTERM || r.signal == SIGKILL);
  return r;
}

void endWithParent(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(1);  // it ended before the line above
}

// The first line of a helper's output that says something (for a one-line error).
std::string firstLine(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
  return "no output";
}

std::string fmtSeconds(double s) {
  char b[64];
  std::snprintf(b, sizeof b, s < 10 ? "%.2f" : "%.1f", s);
  return b;
}

std::string fmtMs(double ns) {
  char b[64];
  std::snprintf(b, sizeof b, ns < 10e6 ? "%.1f ms" : "%.0f ms", ns / 1e6);
  return b;
}

namespace {
// Whether a file named `metadata` at any depth of `dir` (8 levels at most, symbolic links
// not followed) satisfies `pred` (its path). *open_err: the first opendir's errno.
bool anyMetadata(const std::string& dir, const std::function<bool(const std::string&)>& pred, int* open_err,
                 int depth = 0) {
  if (depth > 8) return false;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (*open_err == 0) *open_err = errno;
    return false;
  }
  bool found = false;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    const std::string p = dir + "/" + n;
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && n == "metadata") found = pred(p);
    if (S_ISDIR(st.st_mode)) found = anyMetadata(p, pred, open_err, depth + 1);
    if (found) break;
  }
  closedir(d);
  return found;
}
}  // namespace

// Whether the directory holds a CTF trace (a `metadata` file at any depth).
bool hasTrace(const std::string& dir, int* open_err) {
  int e = 0;
  const bool found = anyMetadata(
      dir, [](const std::string&) { return true; }, &e);
  if (open_err != nullptr) *open_err = found ? 0 : e;
  return found;
}

std::string readRegular(const std::string& path, size_t max, std::string* out) {
  out->clear();
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return path + ": " + std::strerror(errno);
  struct stat st {};
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = path + ": " + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = path + ": not a regular file";
  } else {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        if (out->size() + size_t(n) > max) {
          why = path + ": larger than " + std::to_string(max >> 20) + " MiB";
          break;
        }
        out->append(buf, size_t(n));
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        why = path + ": " + std::strerror(errno);
        break;
      }
    }
  }
  close(fd);
  if (!why.empty()) out->clear();
  return why;
}

// Whether a `metadata` file at any depth of the directory declares one of jitprov's
// events: a session's metadata exists once any process has registered with it (`jitprov
// record` has one of its own register before CMD starts), and declares jitprov's events
// once a process with the agent has. Its text is cut into packets (4 KiB in lttng's), so
// each file is read whole: one of the declarations is found intact.
bool declaresJitprovEvents(const std::string& dir) {
  int open_err = 0;
  return anyMetadata(
      dir,
      [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        // An event's name has its provider's: not the environment's `hostname = "jitprov_x"`.
        return text.find("name = \"jitprov_rundown:") != std::string::npos ||
               text.find("name = \"jitprov_runtime:") != std::string::npos;
      },
      &open_err);
}

// JITPROV_VERIFY when set, else beside this binary in a build tree, else installed,
// else from PATH.
std::string verifierPath() {
  if (const char* e = std::getenv("JITPROV_VERIFY"); e != nullptr && *e != '\0') return e;
  std::string p = besideInBuildTree("verify", "jitprov-verify");
  if (!p.empty()) return p;
  p = std::string(JITPROV_BIN_DIR) + "/jitprov-verify";
  if (access(p.c_str(), X_OK) == 0) return p;
  return "jitprov-verify";  // from PATH
}

Progress::Progress(std::string what, std::chrono::milliseconds after)
    : what_(std::move(what)), t0_(std::chrono::steady_clock::now()), after_(after) {
  if (isatty(2)) thread_ = std::thread([this] { loop(); });
}

void Progress::set(std::string what) {
  std::lock_guard<std::mutex> l(mu_);
  what_ = std::move(what);
}

void Progress::stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Progress::loop() {
  std::unique_lock<std::mutex> l(mu_);
  if (cv_.wait_for(l, after_, [this] { return stop_; })) return;
  while (!stop_) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0_).count();
    std::string line = what_ + "... " + std::to_string(s) + " s";
    if (line.size() > 79) line = line.substr(0, 76) + "...";
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);
    shown_ = true;
    cv_.wait_for(l, std::chrono::milliseconds(500), [this] { return stop_; });
  }
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

}  // namespace jitprov::cli
