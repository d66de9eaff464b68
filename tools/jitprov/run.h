/* SPDX-License-Identifier: MIT */
// What the verbs of `jitprov` that run other programs share (run.cc): a command found as
// execvp would find it, a helper run with its output captured, jitprov-verify found, a
// trace found in a directory, durations formatted for a summary, a progress line.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace jitprov::cli {

// CMD as execvp would find it: the path, or "" with *err (ENOENT, EACCES).
std::string findCommand(const std::string& cmd, int* err);

// A helper's outcome: its exit status (-1: it could not be run) and what it printed.
struct Ran {
  int status = -1;       // its exit status, or 128 + N when killed by signal N
  int signal = 0;        // N when it was killed by signal N
  std::string output;    // stdout and stderr, when captured
  bool stopped = false;  // ended by `stop`'s SIGTERM (or SIGKILL) to its process group
};

// Runs argv (PATH searched) in a process group of its own, its stdin from /dev/null and
// its stdout and stderr captured (or into `out_path` when given, stderr captured). With
// `stop`: asked every 100 ms while it runs, and when it says so the helper's process group
// gets SIGTERM, and SIGKILL 5 s later (Ran::stopped when one of them ended it).
Ran run(const std::vector<std::string>& argv, const std::string& out_path = {}, const std::function<bool()>& stop = {});

// In a child just forked by `parent`: ended by SIGTERM when `parent` ends, killed
// outright included (PR_SET_PDEATHSIG), or at once (_exit 1) if it already has.
void endWithParent(pid_t parent);

// The first line of a helper's output that says something (for a one-line error).
std::string firstLine(const std::string& s);

std::string fmtSeconds(double s);  // "1.23", "12.3"
std::string fmtMs(double ns);      // "1.2 ms", "123 ms"

// Whether the directory holds a CTF trace (a `metadata` file at any depth). *open_err
// (when given): the errno of the first directory in it that could not be opened, else 0
// (a trace that may be there, unseen).
bool hasTrace(const std::string& dir, int* open_err = nullptr);

// A small regular file of ours (summary.json, a CSV) into *out: "" or why not. Never
// blocks on a FIFO or a device put in its place (opened without waiting, then required
// to be a regular file), and reads at most `max` bytes (more: an error).
std::string readRegular(const std::string& path, size_t max, std::string* out);

// Whether a `metadata` file at any depth declares one of jitprov's events.
bool declaresJitprovEvents(const std::string& dir);

// jitprov-verify: JITPROV_VERIFY when set, else beside this binary in a build tree, else
// installed, else from PATH.
std::string verifierPath();

// A progress line on a terminal for what runs more than a few seconds: when stderr is a
// terminal, from `after` on, "jitprov VERB: WHAT... N s" rewritten in place every half
// second, erased when it stops (or is destroyed); nothing at all otherwise. The line is
// cut to 79 columns, so that rewriting it never scrolls.
class Progress {
 public:
  explicit Progress(std::string what, std::chrono::milliseconds after = std::chrono::seconds(2));
  ~Progress() { stop(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void set(std::string what);  // what it says from now on
  void stop();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::string what_;
  bool stop_ = false, shown_ = false;
  std::chrono::steady_clock::time_point t0_;
  std::chrono::milliseconds after_;
  std::thread thread_;
};

}  // namespace jitprov::cli
