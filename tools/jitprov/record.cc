// SPDX-License-Identifier: MIT
// `jitprov record -- CMD ARGS...` (record.h; docs/spec.md, "jitprov record"). In order:
//  1. the checks that cost nothing: the runtime (CMD's name or --runtime), CMD found in
//     PATH, the agent library, DIR new or empty and writable, lttng installed;
//  2. lttng: the lttng-sessiond that answers, else a private one, started in a private
//     mount namespace of this process with a tmpfs on /var/run/lttng (as
//     tools/lib/lttng.sh does), so that it never meets another; CMD runs in that
//     namespace too. The lossless session of docs/tracing.md (the `lttng` CLI, argv
//     arrays, no shell): rundown events in a channel that blocks rather than discards,
//     runtime events in one that never blocks, the vpid context; started before CMD;
//  3. CMD, with the agent in its environment (JAVA_TOOL_OPTIONS=... -agentpath:, or the
//     CORECLR_* variables and JITPROV_DOTNET, or NODE_OPTIONS=... --require=preload.js and
//     JITPROV_NODE), its rundowns triggered by the agent itself:
//     trigger=session (at start), every:SECS, exit (as the runtime shuts down).
//     SIGINT and SIGTERM sent to jitprov are passed on to CMD (a terminal's Ctrl-C reaches
//     CMD itself: it is in our process group); the helpers run in process groups of their
//     own so that a Ctrl-C never reaches lttng-sessiond or the lttng CLI;
//  4. the session stopped and destroyed, the private lttng-sessiond stopped by its pid,
//     jitprov-verify --json on DIR/trace, the summary printed and written as
//     DIR/summary.json. The exit status: CMD's when the trace verified (128 + N when a
//     signal N killed it), else one of record.h's.
#include "record.h"

#include "target.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace jitprov::cli {
namespace {

// The CoreCLR client's class id (docs/dotnet.md).
constexpr const char* kClrProfilerGuid = "{6A3F8F27-5C5E-4D0B-9A5C-0F3E1B2C7D41}";
// The channels of docs/tracing.md (tools/lib/lttng.sh's JITPROV_LOSSLESS_CHANNEL): the
// rundown's waits for room rather than discarding. The runtime channel never blocks a
// JIT path; larger than lttng.sh's default (1M x 4), as the JVM tests use, for the
// method_load burst of a JVM's start-up.
const std::vector<std::string> kRundownChannel = {"--subbuf-size=8M", "--num-subbuf=8", "--blocking-timeout=inf"};
const std::vector<std::string> kRuntimeChannel = {"--subbuf-size=4M", "--num-subbuf=8"};

// Set by the signal handler: the signal to pass on, and CMD's pid once it runs.
volatile sig_atomic_t g_signal = 0;
volatile sig_atomic_t g_cmd_pid = 0;

void onSignal(int sig, siginfo_t* info, void*) {
  g_signal = sig;
  // A terminal's Ctrl-C (SI_KERNEL) reaches CMD itself, in our process group: sent again,
  // a JVM would take it for a second one. One sent to jitprov alone is passed on.
  const pid_t cmd = g_cmd_pid;
  if (cmd > 0 && info != nullptr && info->si_code != SI_KERNEL) kill(cmd, sig);
}

int fail(int status, const std::string& line) {
  std::fprintf(stderr, "jitprov record: %s\n", line.c_str());
  return status;
}

std::string baseName(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

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

// A helper's outcome: its exit status (-1: it could not be run) and what it printed.
struct Ran {
  int status = -1;
  std::string output;  // stdout and stderr, when captured
};

// Runs argv (PATH searched) in a process group of its own, its stdin from /dev/null and
// its stdout and stderr captured (or into `out_path` when given, stderr captured).
Ran run(const std::vector<std::string>& argv, const std::string& out_path = {}) {
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
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int devnull = open("/dev/null", O_RDONLY);
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
  char buf[4096];
  for (;;) {
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
  return r;
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

// DIR: new, or an empty directory; created, and a file written in it. "" or the reason.
std::string prepareDir(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return dir + " exists and is not a directory";
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return dir + ": " + std::strerror(errno);
    bool empty = true;
    while (const dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        empty = false;
        break;
      }
    }
    closedir(d);
    if (!empty) return dir + " exists and is not empty (jitprov record writes a new trace only)";
  } else if (errno != ENOENT) {
    return dir + ": " + std::strerror(errno);
  } else if (mkdir(dir.c_str(), 0755) != 0) {
    return "cannot create " + dir + ": " + std::strerror(errno);
  }
  // Root passes access(W_OK) on a read-only mount's directory: a file says it all.
  const std::string probe = dir + "/.jitprov-record-probe";
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot write in " + dir + ": " + std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  return {};
}

std::string defaultDir() {
  const time_t now = time(nullptr);
  struct tm tm {};
  localtime_r(&now, &tm);
  char b[64];
  std::strftime(b, sizeof b, "jitprov-record-%Y%m%d-%H%M%S", &tm);
  return b;
}

std::string absolute(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return p;
  return std::string(cwd) + "/" + p;
}

bool sessiondAnswers() { return run({"lttng", "list"}).status == 0; }

// A private lttng-sessiond: this process (and so CMD) in a mount namespace of its own,
// a tmpfs on /var/run/lttng, the daemon in a session of its own. Its pid, or 0 with *why.
pid_t startPrivateSessiond(const std::string& log, std::string* why) {
  // Root's daemon lives in /var/run/lttng, where any root tool would find ours: hidden
  // in a namespace. A user's lives in their own $HOME/.lttng (lttng's per-user mode):
  // no namespace needed, and none allowed without CAP_SYS_ADMIN.
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNS) != 0) {
      *why = std::string("a private mount namespace (unshare): ") + std::strerror(errno);
      return 0;
    }
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      *why = std::string("mount --make-rprivate /: ") + std::strerror(errno);
      return 0;
    }
    mkdir("/var/run/lttng", 0755);  // may exist
    if (mount("none", "/var/run/lttng", "tmpfs", 0, nullptr) != 0) {
      *why = std::string("mount a tmpfs on /var/run/lttng: ") + std::strerror(errno);
      return 0;
    }
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int devnull = open("/dev/null", O_RDWR);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (devnull >= 0) dup2(devnull, 0);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execlp("lttng-sessiond", "lttng-sessiond", "--quiet", static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid < 0) {
    *why = std::string("fork: ") + std::strerror(errno);
    return 0;
  }
  for (int i = 0; i < 100; ++i) {
    if (sessiondAnswers()) return pid;
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      std::ifstream in(log);
      std::stringstream ss;
      ss << in.rdbuf();
      *why = "lttng-sessiond exited at once: " + firstLine(ss.str());
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  *why = "lttng-sessiond did not answer within 10 s";
  return 0;
}

// SIGTERM, then SIGKILL after 5 s; waited for.
void stopSessiond(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    int st = 0;
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// The session of docs/tracing.md, created and started; "" or the failing command's line.
std::string setUpSession(const std::string& name, const std::string& trace) {
  auto step = [](std::vector<std::string> argv) -> std::string {
    const Ran r = run(argv);
    if (r.status == 0) return {};
    std::string cmd;
    for (size_t i = 0; i < argv.size() && i < 4; ++i) cmd += (i ? " " : "") + argv[i];
    return cmd + ": " + firstLine(r.output);
  };
  std::string e = step({"lttng", "create", name, "--output=" + trace});
  if (!e.empty()) return e;
  std::vector<std::string> ch = {"lttng", "enable-channel", "-u", "-s", name, "jitprov_rundown"};
  ch.insert(ch.end(), kRundownChannel.begin(), kRundownChannel.end());
  if (!(e = step(ch)).empty()) return e;
  if (!(e = step({"lttng", "enable-event", "-u", "-s", name, "-c", "jitprov_rundown", "jitprov_rundown:*"})).empty())
    return e;
  ch = {"lttng", "enable-channel", "-u", "-s", name, "jitprov_runtime"};
  ch.insert(ch.end(), kRuntimeChannel.begin(), kRuntimeChannel.end());
  if (!(e = step(ch)).empty()) return e;
  if (!(e = step({"lttng", "enable-event", "-u", "-s", name, "-c", "jitprov_runtime", "jitprov_runtime:*"})).empty())
    return e;
  if (!(e = step({"lttng", "add-context", "-u", "-s", name, "-t", "vpid"})).empty()) return e;
  return step({"lttng", "start", name});
}

// Whether the directory holds a CTF trace (a `metadata` file at any depth).
bool hasTrace(const std::string& dir, int depth = 0) {
  if (depth > 8) return false;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    const std::string p = dir + "/" + n;
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && n == "metadata") found = true;
    if (S_ISDIR(st.st_mode)) found = hasTrace(p, depth + 1);
    if (found) break;
  }
  closedir(d);
  return found;
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

// The environment CMD gets: ours, with the agent's variables set.
std::vector<std::string> agentEnvironment(const std::string& runtime, const std::string& agent,
                                          const std::string& options) {
  std::map<std::string, std::string> set;
  if (runtime == "java") {
    const char* had = std::getenv("JAVA_TOOL_OPTIONS");
    const std::string mine = "-agentpath:" + agent + "=" + options;
    set["JAVA_TOOL_OPTIONS"] = had != nullptr && *had != '\0' ? std::string(had) + " " + mine : mine;
  } else if (runtime == "node") {
    // node splits NODE_OPTIONS at spaces, and takes a double-quoted word whole.
    const char* had = std::getenv("NODE_OPTIONS");
    const std::string mine = "\"--require=" + agent + "\"";
    set["NODE_OPTIONS"] = had != nullptr && *had != '\0' ? std::string(had) + " " + mine : mine;
    set["JITPROV_NODE"] = options;
  } else {
    set["CORECLR_ENABLE_PROFILING"] = "1";
    set["CORECLR_PROFILER"] = kClrProfilerGuid;
    set["CORECLR_PROFILER_PATH"] = agent;
    set["JITPROV_DOTNET"] = options;
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string k = kv.substr(0, kv.find('='));
    if (set.count(k) == 0) env.push_back(kv);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

// CMD started; its pid, or -errno when it could not be executed.
pid_t startCommand(const std::string& path, const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) return -errno;
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  const pid_t pid = fork();
  if (pid == 0) {
    // What the user gave jitprov, but SIGINT and SIGTERM: jitprov passes them on. jitprov
    // catches them, and execve() resets a caught signal to its default (a shell starts
    // background jobs with SIGINT ignored: a JVM would ignore it too); reset here already,
    // so that one pending when the mask is restored is not handled in this child.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGINT, &dfl, nullptr);
    sigaction(SIGTERM, &dfl, nullptr);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    close(errpipe[0]);
    std::vector<char*> args, envp;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    execve(path.c_str(), args.data(), envp.data());
    const int e = errno;
    (void)!write(errpipe[1], &e, sizeof e);
    _exit(127);
  }
  if (pid > 0) g_cmd_pid = pid;
  sigprocmask(SIG_SETMASK, &old, nullptr);
  close(errpipe[1]);
  if (pid < 0) {
    close(errpipe[0]);
    return -errno;
  }
  int e = 0;
  ssize_t n;
  while ((n = read(errpipe[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close(errpipe[0]);
  if (n == ssize_t(sizeof e)) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    g_cmd_pid = 0;
    return -e;
  }
  return pid;
}

// The summary from the verifier's JSON (docs/verifying.md's schema, with code_bodies).
nlohmann::json summarize(const nlohmann::json& v, const std::string& runtime_name) {
  nlohmann::json procs = nlohmann::json::array();
  nlohmann::json by_tier = nlohmann::json::object();
  uint64_t bodies = 0, lost_events = 0, lost_packets = 0, rundowns = 0;
  for (const auto& s : v.value("sessions", nlohmann::json::array())) {
    lost_events += s.value("discarded_events", uint64_t{0});
    lost_packets += s.value("discarded_packets", uint64_t{0});
    for (const auto& p : s.value("processes", nlohmann::json::array())) {
      nlohmann::json pr = {{"vpid", p.value("vpid", int64_t{0})},
                           {"runtime", runtime_name},
                           {"runtime_instance", p.value("runtime_instance", 0)}};
      const nlohmann::json cb = p.value("code_bodies", nlohmann::json::object());
      pr["code_bodies"] = cb.value("total", uint64_t{0});
      pr["code_bodies_by_tier"] = cb.value("by_tier", nlohmann::json::object());
      bodies += cb.value("total", uint64_t{0});
      for (const auto& [tier, n] : pr["code_bodies_by_tier"].items())
        by_tier[tier] = by_tier.value(tier, uint64_t{0}) + n.get<uint64_t>();
      nlohmann::json rs = nlohmann::json::array();
      for (const auto& r : p.value("rundowns", nlohmann::json::array())) {
        nlohmann::json one = {{"rundown_id", r.value("rundown_id", uint64_t{0})},
                              {"trigger", r.value("trigger", std::string())},
                              {"method_records", r.value("method_records", uint64_t{0})},
                              {"cut_short", r.value("cut_short", false)}};
        // The runtime's own measure (rundown_end.duration_ns), else end - begin.
        if (r.contains("rundown_end") && r["rundown_end"].contains("duration_ns"))
          one["duration_ns"] = r["rundown_end"]["duration_ns"];
        else
          one["duration_ns"] = r.value("end_ns", int64_t{0}) - r.value("begin_ns", int64_t{0});
        rs.push_back(one);
        ++rundowns;
      }
      pr["rundowns"] = rs;
      procs.push_back(pr);
    }
  }
  nlohmann::json out = {{"processes", procs},
                        {"code_bodies", {{runtime_name, {{"total", bodies}, {"by_tier", by_tier}}}}},
                        {"rundowns", rundowns},
                        {"events_lost", lost_events},
                        {"packets_lost", lost_packets}};
  return out;
}

void printSummary(const nlohmann::json& s) {
  std::printf("jitprov record: %s\n", s["command_line"].get<std::string>().c_str());
  std::printf("  trace:       %s (lttng session %s, %s lttng-sessiond)\n", s["trace"].get<std::string>().c_str(),
              s["session"].get<std::string>().c_str(), s["sessiond"].get<std::string>().c_str());
  if (s.contains("processes")) {
    for (const auto& [rt, c] : s["code_bodies"].items()) {
      std::string tiers;
      for (const auto& [t, n] : c["by_tier"].items())
        tiers += (tiers.empty() ? "" : ", ") + t + " " + std::to_string(n.get<uint64_t>());
      std::printf("  code bodies: %s: %llu in %zu process%s%s%s%s\n", rt.c_str(),
                  (unsigned long long)c["total"].get<uint64_t>(), s["processes"].size(),
                  s["processes"].size() == 1 ? "" : "es", tiers.empty() ? "" : " (", tiers.c_str(),
                  tiers.empty() ? "" : ")");
    }
    for (const auto& p : s["processes"]) {
      std::string rs;
      size_t n = 0;
      for (const auto& r : p["rundowns"]) {
        if (++n > 8) {
          rs += ", ...";
          break;
        }
        rs += (rs.empty() ? "" : ", ") + r["trigger"].get<std::string>() + " " +
              fmtMs(double(r["duration_ns"].get<int64_t>())) + " (" +
              std::to_string(r["method_records"].get<uint64_t>()) + " records" +
              (r["cut_short"].get<bool>() ? ", cut short" : "") + ")";
      }
      std::printf("  rundowns:    pid %lld: %zu%s%s\n", (long long)p["vpid"].get<int64_t>(), p["rundowns"].size(),
                  rs.empty() ? "" : ": ", rs.c_str());
    }
    std::printf("  events lost: %llu\n", (unsigned long long)s["events_lost"].get<uint64_t>());
  }
  std::printf("  verdict:     %s\n", s["verdict"].get<std::string>().c_str());
  std::printf("  exit:        %d (%s)\n", s["exit_status"].get<int>(), s["exit_reason"].get<std::string>().c_str());
}

}  // namespace

int record(const RecordArgs& a) {
  if (a.pid != 0)
    return fail(kRecordPidNotYet,
                "-p PID: not yet supported; use `jitprov attach PID`, then an lttng session (docs/tracing.md)");
  if (a.perf || a.lockwait)
    return fail(kRecordNotYet, std::string(a.perf ? "--perf" : "--lockwait") + ": not yet supported");
  if (a.cmd.empty()) return fail(kRecordUsage, "no command: jitprov record [OPTIONS] -- CMD ARGS... (see --help)");

  // 1. What costs nothing to check.
  const std::string name = baseName(a.cmd[0]);
  int err = 0;
  const std::string path = findCommand(a.cmd[0], &err);
  if (path.empty()) {
    if (err == ENOENT) return fail(kRecordNotFound, a.cmd[0] + ": command not found");
    return fail(kRecordCannotRun, a.cmd[0] + ": " + std::strerror(err));
  }
  std::string runtime = a.runtime;
  if (runtime.empty()) {
    if (name == "java" || name == "javac" || name == "jshell") runtime = "java";
    if (name == "dotnet") runtime = "dotnet";
    if (name == "node" || name == "nodejs") runtime = "node";
  }
  if (runtime != "java" && runtime != "dotnet" && runtime != "node")
    return fail(kRecordUnknownRuntime, "'" + name +
                                           "' is neither java (java, javac, jshell), dotnet nor node: --runtime "
                                           "java|dotnet|node says which runtime it starts");
  const bool java = runtime == "java";
  const std::string runtime_name = java ? "HotSpot" : runtime == "node" ? "V8" : "CoreCLR";
  // The Node.js client: the preload.js beside its addon (in the build tree, or installed).
  const std::string node_preload = besideInBuildTree("node", "preload.js");
  const std::string agent_wanted =
      runtime == "node"
          ? (node_preload.empty() ? std::string(JITPROV_AGENT_DIR) + "/jitprov/node/preload.js" : node_preload)
          : defaultAgentPath(java ? Runtime::kHotSpot : Runtime::kCoreClr);
  char real[4096];
  if (realpath(agent_wanted.c_str(), real) == nullptr)
    return fail(kRecordNoAgent, "the agent " + agent_wanted + ": " + std::strerror(errno) + " (not installed?)");
  const std::string agent = real;
  if (findCommand("lttng", &err).empty() || findCommand("lttng-sessiond", &err).empty())
    return fail(kRecordLttng, "lttng and lttng-sessiond are needed (Debian: lttng-tools)");
  const std::string verifier = verifierPath();
  if (findCommand(verifier, &err).empty())
    return fail(kRecordNoVerifier,
                verifier + " not found (JITPROV_VERIFY, beside jitprov in a build tree, installed, or in PATH)");
  const std::string dir = absolute(a.out.empty() ? defaultDir() : a.out);
  if (const std::string why = prepareDir(dir); !why.empty()) return fail(kRecordBadDir, why);
  const std::string trace = dir + "/trace";

  // Signals: passed on to CMD from now on (recorded before it runs: nothing starts then).
  // SIGHUP (the terminal closed) and SIGQUIT (Ctrl-\: a JVM's thread dump) too, unless
  // ignored (nohup): by their default action they would end jitprov, and leave the
  // session and a private lttng-sessiond behind.
  struct sigaction sa {};
  sa.sa_sigaction = onSignal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  for (const int sig : {SIGHUP, SIGQUIT}) {
    struct sigaction was {};
    if (sigaction(sig, nullptr, &was) == 0 && was.sa_handler != SIG_IGN) sigaction(sig, &sa, nullptr);
  }

  // 2. lttng.
  pid_t sessiond = 0;
  const bool existing = sessiondAnswers();
  if (!existing) {
    std::string why;
    sessiond = startPrivateSessiond(dir + "/lttng-sessiond.log", &why);
    if (sessiond == 0) return fail(kRecordLttng, "no lttng-sessiond answers, and a private one failed: " + why);
  }
  const std::string session = "jitprov-record-" + std::to_string(getpid());
  if (const std::string why = setUpSession(session, trace); !why.empty()) {
    run({"lttng", "destroy", session});
    stopSessiond(sessiond);
    return fail(kRecordLttng, "lttng session set-up: " + why);
  }

  // 3. CMD under the agent.
  std::string options = "trigger=session,exit";
  if (a.rundown_every > 0) {
    char b[64];
    std::snprintf(b, sizeof b, ",every:%g", a.rundown_every);
    options += b;
  }
  // The agent's counters beside the trace, when the path cannot break the option list.
  if (dir.find_first_of(", \t=") == std::string::npos) options += ",stats=" + dir + "/agent-%p.json";
  std::string cmd_line;
  for (const std::string& s : a.cmd) cmd_line += (cmd_line.empty() ? "" : " ") + s;
  if (isatty(2))
    std::fprintf(stderr, "jitprov record: %s under jitprov's %s agent, into %s (%s lttng-sessiond)\n", cmd_line.c_str(),
                 runtime_name.c_str(), trace.c_str(), existing ? "the running" : "a private");
  int status = 0;
  std::string reason;
  const auto t0 = std::chrono::steady_clock::now();
  int exec_error = 0;
  if (g_signal != 0) {
    status = 128 + g_signal;
    reason = std::string("not started: jitprov got SIG") + sigabbrev_np(g_signal) + " first";
  } else {
    const pid_t pid = startCommand(path, a.cmd, agentEnvironment(runtime, agent, options));
    if (pid < 0) {
      exec_error = int(-pid);
    } else {
      int st = 0;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      g_cmd_pid = 0;
      if (WIFEXITED(st)) {
        status = WEXITSTATUS(st);
        reason = name + " exited with status " + std::to_string(status);
      } else {
        status = 128 + WTERMSIG(st);
        reason = name + " was killed by signal " + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")";
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int got = g_signal;
  if (got != 0 && exec_error == 0) reason += std::string(" (jitprov got SIG") + sigabbrev_np(got) + ")";

  // 4. The session stopped (its data flushed), the daemon stopped, the trace verified.
  if (isatty(2))
    std::fprintf(stderr, "jitprov record: %s; stopping the session, verifying the trace...\n", reason.c_str());
  const Ran stopped = run({"lttng", "stop", session});
  const Ran destroyed = run({"lttng", "destroy", session});
  stopSessiond(sessiond);
  if (exec_error != 0)
    return fail(exec_error == ENOENT ? kRecordNotFound : kRecordCannotRun, a.cmd[0] + ": " + std::strerror(exec_error));
  if (stopped.status != 0 || destroyed.status != 0)
    return fail(kRecordLttng, "lttng stop/destroy " + session + ": " +
                                  firstLine(stopped.status != 0 ? stopped.output : destroyed.output));

  nlohmann::json s = {{"command", a.cmd},
                      {"command_line", cmd_line},
                      {"runtime", runtime},
                      {"agent", agent},
                      {"agent_options", options},
                      {"trace", trace},
                      {"session", session},
                      {"sessiond", existing ? "existing" : "private"},
                      {"seconds", std::round(seconds * 1000) / 1000},
                      {"command_status", status},
                      {"command_reason", reason},
                      {"signal", got != 0 ? nlohmann::json(std::string("SIG") + sigabbrev_np(got)) : nlohmann::json()}};
  int exit_status = status;
  std::string exit_reason = reason + ", after " + fmtSeconds(seconds) + " s";
  if (!hasTrace(trace)) {
    // Nothing registered with the session: CMD ran no traced runtime (or exited first).
    s["verdict"] = "nothing recorded: no process of " + name + " loaded jitprov's agent";
    s["verify_exit"] = nullptr;
  } else {
    const std::string vjson = dir + "/verify.json";
    const Ran v = run({verifier, "--json", trace}, vjson);
    nlohmann::json vj;
    std::ifstream in(vjson);
    try {
      in >> vj;
    } catch (const std::exception&) {
      vj = nullptr;
    }
    if (v.status < 0 || !vj.is_object())
      return fail(kRecordNotVerified, "jitprov-verify " + trace + " gave no verdict (exit " + std::to_string(v.status) +
                                          "): " + firstLine(v.output));
    s.update(summarize(vj, runtime_name));
    s["verify_exit"] = v.status;
    s["not_checked"] = vj.value("not_checked", nlohmann::json::array());
    const std::string verdict = vj.value("verdict", std::string());
    // 0: everything holds; 4: nothing violated, something not checked (a rundown a
    // runtime's exit cut short, a process without a rundown): said, not failed.
    if (v.status == 0) {
      s["verdict"] = "verified: " + verdict;
    } else if (v.status == 4) {
      s["verdict"] = "verified, not all: " + verdict + " (" + std::to_string(s["not_checked"].size()) +
                     " not checked: " + (s["not_checked"].empty() ? "" : s["not_checked"][0].get<std::string>()) + ")";
    } else {
      s["verdict"] = "NOT VERIFIED: " + (verdict.empty() ? firstLine(v.output) : verdict) + " (jitprov-verify exit " +
                     std::to_string(v.status) + ", its report: " + vjson + ")";
      exit_status = kRecordNotVerified;
      exit_reason = "the trace did not verify; " + exit_reason;
    }
  }
  s["exit_status"] = exit_status;
  s["exit_reason"] = exit_reason;
  s["summary"] = dir + "/summary.json";
  {
    const std::string tmp = dir + "/summary.json.tmp";
    std::ofstream o(tmp);
    o << s.dump(2) << "\n";
    o.close();
    if (!o || rename(tmp.c_str(), (dir + "/summary.json").c_str()) != 0)
      std::fprintf(stderr, "jitprov record: cannot write %s/summary.json\n", dir.c_str());
  }
  std::fflush(stdout);
  printSummary(s);
  std::fflush(stdout);
  return exit_status;
}

}  // namespace jitprov::cli
