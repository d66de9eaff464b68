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
//     JITPROV_NODE; and libjitprov-preload.so in LD_PRELOAD), its rundowns triggered by the
//     agent itself:
//     trigger=session (at start), every:SECS, exit (as the runtime shuts down).
//     SIGINT and SIGTERM sent to jitprov are passed on to CMD (a terminal's Ctrl-C reaches
//     CMD itself: it is in our process group); the helpers run in process groups of their
//     own so that a Ctrl-C never reaches lttng-sessiond or the lttng CLI;
//  4. the session stopped and destroyed, the private lttng-sessiond stopped by its pid,
//     jitprov-verify --json on DIR/trace, the summary printed and written as
//     DIR/summary.json. The exit status: CMD's when the trace verified (128 + N when a
//     signal N killed it), else one of record.h's.
#include "record.h"

#include "attach.h"
#include "attach_process.h"
#include "report.h"
#include "run.h"
#include "sessiond.h"
#include "target.h"
#include "json_text.h"

#include <fcntl.h>
#include <ftw.h>
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
#include <algorithm>
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
// The channels of docs/tracing.md, "Sizing the channels" (tools/lib/lttng.sh's
// JITPROV_RECORD_*_CHANNEL): the rundown's waits for room rather than discarding; the
// runtime channel never blocks a JIT path, 8 sub-buffers for a start-up's burst of
// method_load events. Per CPU, and mapped into every traced process: 8 MiB x 8 and
// 4 MiB x 8 cost each process 19 ms more than these, and the first one 187 ms more
// (2 CPUs; tools/bench/channel-cost).
const std::vector<std::string> kRundownChannel = {"--subbuf-size=2M", "--num-subbuf=8", "--blocking-timeout=inf"};
const std::vector<std::string> kRuntimeChannel = {"--subbuf-size=1M", "--num-subbuf=8"};

// stdout was closed when jitprov started (it holds /dev/null since): the summary is not shown.
bool g_stdout_closed = false;

// Set by the signal handler: the signal to pass on, and CMD's pid once it runs.
volatile sig_atomic_t g_signal = 0;
volatile sig_atomic_t g_signals = 0;  // how many came (a signal during the verification stops it)
volatile sig_atomic_t g_cmd_pid = 0;
// Whether a signal came: the waits for a session daemon stop on it.
bool interrupted() { return g_signal != 0; }

// SIGINTs and SIGTERMs while CMD runs (counted together: a supervisor's SIGTERMs as a
// user's Ctrl-Cs): a CMD that ignores them (or hangs in its exit) would keep jitprov
// waiting however often they come. The second says so, the third kills
// CMD and every process it started (killTree(), from the wait: the tree is read from
// /proc, which a handler may not); jitprov then stops the session and verifies as after
// any exit. The lines are written before CMD starts (startCommand): a handler may only
// write(2).
volatile sig_atomic_t g_interrupts = 0;
char g_second_note[192], g_kill_note[192];
size_t g_second_len = 0, g_kill_len = 0;

void onSignal(int sig, siginfo_t* info, void*) {
  g_signal = sig;
  g_signals = g_signals + 1;
  // A terminal's Ctrl-C (SI_KERNEL) reaches CMD itself, in our process group: sent again,
  // a JVM would take it for a second one. One sent to jitprov alone is passed on.
  const pid_t cmd = g_cmd_pid;
  if (cmd > 0 && info != nullptr && info->si_code != SI_KERNEL) kill(cmd, sig);
  if ((sig != SIGINT && sig != SIGTERM) || cmd <= 0) return;
  const int n = g_interrupts + 1;
  g_interrupts = n;
  if (n == 2) {
    (void)!write(2, g_second_note, g_second_len);
  } else if (n == 3) {
    (void)!write(2, g_kill_note, g_kill_len);
  }
}

// `root` and the processes descended from it, by the parent links of /proc/N/stat.
std::vector<pid_t> treeOf(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  if (DIR* d = opendir("/proc")) {
    while (const dirent* e = readdir(d)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0') continue;
      std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
      std::string stat;
      std::getline(in, stat);
      const size_t paren = stat.rfind(')');  // the comm may hold anything
      char state = 0;
      long ppid = 0;
      if (paren != std::string::npos && std::sscanf(stat.c_str() + paren + 1, " %c %ld", &state, &ppid) == 2)
        children.emplace(pid_t(ppid), pid_t(pid));
    }
    closedir(d);
  }
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i)
    for (auto [it, end] = children.equal_range(tree[i]); it != end; ++it) tree.push_back(it->second);
  return tree;
}

// The third Ctrl-C or SIGTERM: CMD and what it started (a wrapper script's JVMs, perf's workload),
// stopped first (SIGSTOP: none forks while the tree is read again), then killed. Only
// what is still descended from CMD: a process whose parent ended before went to init.
void killTree(pid_t root) {
  std::vector<pid_t> stopped;
  for (int pass = 0; pass < 4; ++pass) {
    bool more = false;
    for (const pid_t p : treeOf(root))
      if (std::find(stopped.begin(), stopped.end(), p) == stopped.end()) {
        kill(p, SIGSTOP);
        stopped.push_back(p);
        more = true;
      }
    if (!more) break;
  }
  for (const pid_t p : stopped) kill(p, SIGKILL);
}

// summary.json's "attach" of a -p PID whose agent an earlier attach loaded.
constexpr const char* kLoadedAlready =
    "jitprov's agent was loaded already (its own options hold: a rundown for this session if they say "
    "trigger=session)";

int fail(int status, const std::string& line) {
  std::fprintf(stderr, "jitprov record: %s\n", line.c_str());
  return status;
}

std::string baseName(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// DIR: new, or an empty directory; created, and a file written in it. "" or the reason.
std::string prepareDir(const std::string& dir, bool* made) {
  *made = false;
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
  } else {
    *made = true;
  }
  // Root passes access(W_OK) on a read-only mount's directory: a file says it all.
  const std::string probe = dir + "/.jitprov-record-probe";
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot write in " + dir + ": " + std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  return {};
}

// jitprov-record-YYYYmmdd-HHMMSS, claimed by its mkdir: a second recording started in the
// same second gets -2 (and so on), never the first one's directory.
std::string defaultDir() {
  const time_t now = time(nullptr);
  struct tm tm {};
  localtime_r(&now, &tm);
  char b[64];
  std::strftime(b, sizeof b, "jitprov-record-%Y%m%d-%H%M%S", &tm);
  for (int n = 1; n < 1000; ++n) {
    const std::string dir = n == 1 ? std::string(b) : std::string(b) + "-" + std::to_string(n);
    if (mkdir(dir.c_str(), 0755) == 0 || errno != EEXIST) return dir;  // prepareDir says why not
  }
  return b;
}

std::string absolute(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return p;
  return std::string(cwd) + "/" + p;
}

// A private lttng-sessiond: for root, this process (and so CMD) in a mount namespace of
// its own, a tmpfs on /var/run/lttng; the daemon in a session of its own, ours until we
// stop it. Its pid, or 0 with *why. (-p PID: the daemon in lttng's shared place,
// SharedSessiond, where the target looks.)
pid_t startPrivateSessiond(const std::string& log, std::string* why) {
  // Root's daemon lives in /var/run/lttng, where any root tool would find ours: hidden
  // in a namespace. A user's lives in $LTTNG_HOME/.lttng (lttng's per-user mode; a
  // private LTTNG_HOME, setUpLttng): no namespace needed, and none allowed without
  // CAP_SYS_ADMIN.
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
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) execSessiond(parent, log.c_str());
  if (pid < 0) {
    *why = std::string("fork: ") + std::strerror(errno);
    return 0;
  }
  const Awaited a = awaitSessiond(pid, log, why, interrupted);
  if (a == Awaited::kAnswers) return pid;
  if (a == Awaited::kNoAnswer || a == Awaited::kInterrupted) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return 0;
}

// The session of docs/tracing.md, created and started; "" or the failing command's line.
// `vpid` > 0 (-p): only that process recorded (others with the agent would take a rundown
// for the session too: trigger=session).
std::string setUpSession(const std::string& name, const std::string& trace, pid_t vpid) {
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
  // The pid namespace beside the vpid: jitprov-verify tells apart processes of two
  // namespaces that have one vpid (containers), and a vpid's later process by its ids.
  if (!(e = step({"lttng", "add-context", "-u", "-s", name, "-t", "vpid", "-t", "pid_ns"})).empty()) return e;
  if (vpid > 0 && !(e = step({"lttng", "track", "-u", "-s", name, "--vpid=" + std::to_string(vpid)})).empty()) return e;
  return step({"lttng", "start", name});
}

// The session's buffers created before CMD starts (docs/tracing.md, "What an agent's start
// waits for"). lttng-sessiond creates a session's buffers for a user when the first
// process of that user registers, and that process waits for them in lttng-ust's
// constructor: node's main thread 28-33 ms (`node -e 0`, record's channels, 2 CPUs),
// against 3.5-4.3 ms once they exist. So a process of ours registers first: true(1) with
// liblttng-ust preloaded, which waits in the same constructor (up to 10 s, not the 3 s
// default: one that ends halfway through its registration can leave the channels without
// their metadata) and ends. The milliseconds it took; -1 with *why when it could not be
// run or said anything (a liblttng-ust the loader cannot find).
double warmSession(std::string* why) {
  const auto t0 = std::chrono::steady_clock::now();
  const Ran ran = run({"env", "LD_PRELOAD=liblttng-ust.so.1", "LTTNG_UST_REGISTER_TIMEOUT=10000",
                       "LTTNG_UST_WITHOUT_BADDR_STATEDUMP=1", "LTTNG_UST_WITHOUT_PROCNAME_STATEDUMP=1", "true"});
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (ran.status != 0 || ran.output.find_first_not_of(" \t\n") != std::string::npos) {
    *why = "env LD_PRELOAD=liblttng-ust.so.1 true: " +
           (ran.status < 0 ? std::string("could not be run")
                           : "exit " + std::to_string(ran.status) + ", " + firstLine(ran.output));
    return -1;
  }
  if (ms >= 9500) {  // lttng-ust gave up waiting, silently: the daemon did not answer
    *why = "no registration with the session daemon within 10 s";
    return -1;
  }
  return std::round(ms * 10) / 10;
}

// The environment CMD gets: ours, with the agent's variables set, and `preload`
// (libjitprov-preload.so, unless "") added to LD_PRELOAD: the process registers for
// membarrier while it has one thread, so that the agent's liburcu and lttng-ust do not
// wait for the kernel's RCU grace period when they load (tools/preload/preload.c). Last:
// a sanitizer's runtime the user preloads must come first, and the loader runs the
// preloaded libraries' constructors last to first, so this one's runs before theirs.
std::vector<std::string> agentEnvironment(const std::string& runtime, const std::string& agent,
                                          const std::string& options, const std::string& preload) {
  std::map<std::string, std::string> set;
  if (!preload.empty()) {
    const char* had = std::getenv("LD_PRELOAD");
    set["LD_PRELOAD"] = had != nullptr && *had != '\0' ? std::string(had) + ":" + preload : preload;
  }
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
    // CoreCLR takes the first of CORECLR_PROFILER_PATH_64 (ARM64 on arm64) and
    // CORECLR_PROFILER_PATH that is set: an APM's CORECLR_PROFILER_PATH_64 would have
    // loaded its library under jitprov's class id (nothing recorded, nothing said).
    set["CORECLR_PROFILER_PATH"] = agent;
    set["CORECLR_PROFILER_PATH_64"] = agent;
    set["CORECLR_PROFILER_PATH_ARM64"] = agent;
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
  // A signal that came after the caller's last look, before the mask: CMD not started
  // (it would not have been forwarded: no CMD's pid yet), as when it came earlier.
  if (g_signal != 0) {
    sigprocmask(SIG_SETMASK, &old, nullptr);
    close(errpipe[0]);
    close(errpipe[1]);
    return -EINTR;
  }
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
  if (pid > 0) {
    const int a =
        std::snprintf(g_second_note, sizeof g_second_note,
                      "jitprov record: %s (pid %d) still runs; a third Ctrl-C or SIGTERM kills it (SIGKILL)\n",
                      baseName(path).c_str(), int(pid));
    const int b = std::snprintf(g_kill_note, sizeof g_kill_note, "jitprov record: %s (pid %d) killed (SIGKILL)\n",
                                baseName(path).c_str(), int(pid));
    g_second_len = a > 0 ? std::min(size_t(a), sizeof g_second_note - 1) : 0;
    g_kill_len = b > 0 ? std::min(size_t(b), sizeof g_kill_note - 1) : 0;
    g_interrupts = 0;
    g_cmd_pid = pid;
  }
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
  uint64_t bodies = 0, rundowns = 0;
  for (const auto& s : v.value("sessions", nlohmann::json::array())) {
    for (const auto& p : s.value("processes", nlohmann::json::array())) {
      nlohmann::json pr = {{"vpid", p.value("vpid", int64_t{0})},
                           {"label", p.value("label", "process " + std::to_string(p.value("vpid", int64_t{0})))},
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
        one["duration_ns"] = rundownDuration(r);  // null: unfinished (no end in the trace)
        rs.push_back(one);
        ++rundowns;
      }
      pr["rundowns"] = rs;
      procs.push_back(pr);
    }
  }
  nlohmann::json out = {{"processes", procs},
                        {"code_bodies", {{runtime_name, {{"total", bodies}, {"by_tier", by_tier}}}}},
                        {"rundowns", rundowns}};
  out.update(lossFigures(v));
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
        rs += (rs.empty() ? "" : ", ") + r["trigger"].get<std::string>() + " " + durationText(r["duration_ns"]) + " (" +
              std::to_string(r["method_records"].get<uint64_t>()) + " records" +
              (r["cut_short"].get<bool>() ? ", cut short" : "") + ")";
      }
      std::printf("  rundowns:    %s: %zu%s%s\n", p["label"].get<std::string>().c_str(), p["rundowns"].size(),
                  rs.empty() ? "" : ": ", rs.c_str());
    }
    std::printf("  events lost: %s\n", lossLine(s).c_str());
  }
  if (s.contains("lock_waits")) std::printf("  lock waits:  %s\n", lockwaitLine(s["lock_waits"]).c_str());
  if (s.contains("lock_waits_error"))
    std::printf("  lock waits:  NOT MEASURED: %s\n", s["lock_waits_error"].get<std::string>().c_str());
  if (s.contains("perf")) {
    const auto& f = s["perf"];
    std::string hot;
    if (!f["hottest"].empty()) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f %%", f["hottest"][0]["percent"].get<double>());
      hot = "; hottest: " + f["hottest"][0]["name"].get<std::string>() + " (" + pct + ")";
    }
    std::printf("  perf:        %llu samples, %llu in JIT code (%llu methods)%s; perf report -i %s\n",
                (unsigned long long)f["samples"].get<uint64_t>(), (unsigned long long)f["jit_samples"].get<uint64_t>(),
                (unsigned long long)f["jit_methods"].get<uint64_t>(), hot.c_str(),
                f["perf_data"].get<std::string>().c_str());
  }
  if (s.contains("perf_error")) std::printf("  perf:        FAILED: %s\n", s["perf_error"].get<std::string>().c_str());
  std::printf("  verdict:     %s\n", s["verdict"].get<std::string>().c_str());
  std::printf("  exit:        %d (%s)\n", s["exit_status"].get<int>(), s["exit_reason"].get<std::string>().c_str());
}

// --- the tools beside CMD: jitprov-lockwait (--lockwait), perf (--perf) --------------

// A program found as the verifier is: `env` when set, else beside this binary in a build
// tree, else installed, else from PATH.
std::string toolPath(const char* env, const std::string& subdir, const std::string& name) {
  if (const char* e = std::getenv(env); e != nullptr && *e != '\0') return e;
  std::string p = besideInBuildTree(subdir, name);
  if (!p.empty()) return p;
  p = std::string(JITPROV_BIN_DIR) + "/" + name;
  if (access(p.c_str(), X_OK) == 0) return p;
  return name;
}

// The libjitprov the agent loads (its RUNPATH).
std::string libjitprovOf(const std::string& agent) {
  const std::string dir = agent.substr(0, agent.rfind('/'));
  char real[4096];
  // A build tree (tools/X/agent, runtime/libjitprov.so.1), or installed: LIBDIR/jitprov/agent
  // or LIBDIR/jitprov/node/preload.js beside LIBDIR/libjitprov.so.1.
  for (const std::string& p : {dir + "/../../runtime/libjitprov.so.1", dir + "/libjitprov.so.1",
                               dir + "/../libjitprov.so.1", dir + "/../../libjitprov.so.1"})
    if (realpath(p.c_str(), real) != nullptr) return real;
  return {};
}

// argv started in a process group of its own (a terminal's Ctrl-C is not for it), stdin
// from /dev/null, stdout into `out` and stderr into `err`. Its pid, or 0.
pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    // Ended with us, also when we are killed outright: jitprov-lockwait's uprobes and
    // perf -p must not outlive the recording.
    endWithParent(parent);
    const int in = open("/dev/null", O_RDONLY);
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || o < 0 || e < 0) _exit(127);
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> args;
    for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    dprintf(2, "%s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  return pid > 0 ? pid : 0;
}

// Its status (as run() gives it) once it exits: `sig` first, SIGKILL after `grace`.
int stopHelper(pid_t pid, int sig, std::chrono::seconds grace) {
  if (pid <= 0) return -1;
  kill(pid, sig);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int st = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last line of a helper's log that says something.
std::string lastLine(const std::string& s) {
  std::istringstream in(s);
  std::string line, last = "no output";
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  return last;
}

// jitprov-lockwait on the library the agent loads (and on PID with -p), its final report
// (--json) into DIR/lockwait.json, every wait into DIR/lockwait-waits.csv, its log
// DIR/lockwait.log; waited for until it says it
// attached. Its pid, or 0 with *why.
pid_t startLockwait(const std::string& dir, const std::string& lib, pid_t target, std::string* why) {
  const std::string tool = toolPath("JITPROV_LOCKWAIT", "lockwait", "jitprov-lockwait");
  int err = 0;
  if (findCommand(tool, &err).empty()) {
    *why = tool + " not found (JITPROV_LOCKWAIT, beside jitprov in a build tree, installed, or in PATH)";
    return 0;
  }
  // --waits: every wait, for the timeline `jitprov report` plots (plots.h).
  std::vector<std::string> argv = {tool, "--json", "--waits", dir + "/lockwait-waits.csv", "-b", lib};
  // CMD and what it starts, never another process that maps the same library: the
  // processes descending from this one (CMD is started after the attach).
  if (target > 0)
    argv.insert(argv.end(), {"-p", std::to_string(target)});
  else
    argv.insert(argv.end(), {"--tree", std::to_string(getpid())});
  const std::string log = dir + "/lockwait.log";
  const pid_t pid = spawn(argv, dir + "/lockwait.json", log);
  if (pid == 0) {
    *why = std::string("fork: ") + std::strerror(errno);
    return 0;
  }
  // Loading the BPF programs takes a second or two; the probes must be in place before
  // the runtime takes its first lock.
  for (int i = 0; i < 300; ++i) {
    if (readFile(log).find("jitprov-lockwait: attached to") != std::string::npos) return pid;
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      *why = lastLine(readFile(log));
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stopHelper(pid, SIGKILL, std::chrono::seconds(1));
  *why = tool + " did not attach within 30 s";
  return 0;
}

// perf report of DIR/perf.jit.data: every sample by DSO and symbol; the JIT's (DSOs
// `jitted-PID-N.so`, one per code load, that perf inject --jit wrote) added up by name.
nlohmann::json perfFigures(const std::string& out, size_t top) {
  std::istringstream in(out);
  std::string line;
  uint64_t total = 0, jit = 0;
  std::map<std::string, uint64_t> by_name;
  while (std::getline(in, line)) {
    // "    12.34%           123  jitted-1234-56.so  [.] jitwork.Gen3::m17"
    std::istringstream f(line);
    std::string pct, dso, kind;
    uint64_t samples = 0;
    if (!(f >> pct >> samples >> dso >> kind) || pct.empty() || pct.back() != '%') continue;
    std::string sym;
    std::getline(f, sym);
    sym.erase(0, sym.find_first_not_of(' '));
    while (!sym.empty() && (sym.back() == ' ' || sym.back() == '\r')) sym.pop_back();
    total += samples;
    if (dso.rfind("jitted-", 0) == 0) {
      jit += samples;
      by_name[sym] += samples;
    }
  }
  std::vector<std::pair<std::string, uint64_t>> v(by_name.begin(), by_name.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  nlohmann::json hot = nlohmann::json::array();
  for (size_t i = 0; i < v.size() && i < top; ++i)
    hot.push_back({{"name", v[i].first},
                   {"samples", v[i].second},
                   {"percent", total ? std::round(10000.0 * double(v[i].second) / double(total)) / 100 : 0.0}});
  return {{"samples", total}, {"jit_samples", jit}, {"jit_methods", by_name.size()}, {"hottest", hot}};
}

// perf inject --jit into DIR/perf.jit.data and the hottest JIT methods from it, into
// DIR/perf.json. "" or why not. perf copies every file it injects into its build-id
// cache (~/.debug, 100 000 files a long run): a cache of the run's own, removed after.
std::string injectPerf(const std::string& dir, nlohmann::json* figures) {
  const std::string cache = dir + "/.perf-buildid";
  const Ran inj =
      run({"perf", "--buildid-dir", cache, "inject", "--jit", "-i", dir + "/perf.data", "-o", dir + "/perf.jit.data"});
  if (inj.status != 0) {
    run({"rm", "-rf", cache});
    return "perf inject --jit: " + lastLine(inj.output);
  }
  const Ran rep = run({"perf", "--buildid-dir", cache, "report", "-i", dir + "/perf.jit.data", "--stdio", "-q",
                       "--no-children", "-g", "none", "-F", "overhead,sample,dso,sym"},
                      dir + "/perf-report.txt");
  run({"rm", "-rf", cache});
  if (rep.status != 0) return "perf report: " + lastLine(rep.output);
  *figures = perfFigures(readFile(dir + "/perf-report.txt"), 10);
  (*figures)["perf_data"] = dir + "/perf.jit.data";
  std::ofstream o(dir + "/perf.json");
  o << figures->dump(1) << "\n";
  return o ? "" : "cannot write " + dir + "/perf.json";
}

// --- the recording, whichever way it started ------------------------------------------

// What a recording set up, for its end.
struct Recording {
  std::string dir, trace, session, verifier, runtime_name;
  pid_t sessiond = 0;     // a private lttng-sessiond's, else 0
  SharedSessiond shared;  // the daemon in lttng's shared place (-p), while used
  // summary.json's "sessiond": private (this recording's own), existing (a running one),
  // started (-p: started by this recording in lttng's shared place, for others too),
  // shared (started there by another jitprov record)
  std::string sessiond_kind = "private";
  std::string lttng_home;       // a user's private lttng-sessiond's LTTNG_HOME, removed at the end
  bool beside_running = false;  // CMD's private daemon, though one was running
  pid_t lockwait = 0;           // --lockwait: jitprov-lockwait's
  bool dir_made = false;        // DIR made by this recording (else it was there, empty)
};

// The daemon, for the line that says where the recording goes.
const char* sessiondShown(const Recording& r) {
  return r.sessiond_kind == "private"   ? "a private"
         : r.sessiond_kind == "started" ? "a shared"
         : r.sessiond_kind == "shared"  ? "another jitprov record's"
                                        : "the running";
}

// A directory and all it holds (symbolic links removed, not followed).
void removeTree(const std::string& dir) {
  nftw(
      dir.c_str(), [](const char* p, const struct stat*, int, FTW*) { return remove(p); }, 16, FTW_DEPTH | FTW_PHYS);
}

// A user's private LTTNG_HOME, once its daemon has stopped (its sockets and files).
void removeLttngHome(Recording& r) {
  if (r.lttng_home.empty()) return;
  removeTree(r.lttng_home);
  r.lttng_home.clear();
}

// Every helper stopped and the session torn down (after a failure too).
void tearDown(Recording& r) {
  if (r.lockwait > 0) stopHelper(r.lockwait, SIGKILL, std::chrono::seconds(1));
  r.lockwait = 0;
  if (!r.session.empty()) run({"lttng", "destroy", r.session});
  stopSessiond(r.sessiond);
  r.sessiond = 0;
  (void)r.shared.release();
  removeLttngHome(r);
}

// A recording that failed before CMD ran (or before the attach): torn down, and what it
// wrote in DIR removed (DIR too when it made it), so that the same -o can be given again
// (it was refused, 123, for the logs left there); the line says why. The exit status.
int abandon(Recording& r, int status, const std::string& line) {
  tearDown(r);
  if (r.dir_made) {
    removeTree(r.dir);
  } else if (DIR* d = opendir(r.dir.c_str())) {
    std::vector<std::string> names;
    while (const dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    closedir(d);
    for (const std::string& n : names) removeTree(r.dir + "/" + n);
  }
  return fail(status, line);
}

// The recording's session on the daemon set up: "" or the line of the failure (torn down).
std::string startSession(Recording& r, pid_t vpid) {
  r.session = "jitprov-record-" + std::to_string(getpid());
  if (const std::string why = setUpSession(r.session, r.trace, vpid); !why.empty()) {
    tearDown(r);
    return "lttng session set-up: " + why;
  }
  return {};
}

// The daemon in lttng's shared place joined (SharedSessiond::acquire: one started if none
// answers), r.sessiond_kind said by it: "" or the line of the failure.
std::string joinShared(Recording& r) {
  using Joined = SharedSessiond::Joined;
  Joined joined = Joined::kNone;
  if (std::string why = r.shared.acquire(interrupted, &joined); !why.empty()) return "lttng-sessiond: " + why;
  r.sessiond_kind = joined == Joined::kStarted ? "started" : joined == Joined::kRecordings ? "shared" : "existing";
  return {};
}

// lttng: with `private_ns` (CMD), a private lttng-sessiond (root's in a private mount
// namespace, a user's in a private LTTNG_HOME); without (-p: the target must find it), the one in
// lttng's shared place, started if none answers, shared with other recordings there
// (SharedSessiond); and the session (of process `vpid` alone when > 0). "" or the line
// of the failure (torn down).
std::string setUpLttng(Recording& r, bool private_ns, pid_t vpid = 0) {
  if (!private_ns) {
    if (std::string why = joinShared(r); !why.empty()) return why;
    return startSession(r, vpid);
  }
  // A running daemon takes every process with an agent, and a recording of CMD would
  // hold them all (two recordings at once, each the other's CMD). CMD is recorded with a
  // daemon of its own all the same, that CMD's processes alone see: root's in a private
  // mount namespace, a user's in an LTTNG_HOME of its own.
  r.beside_running = sessiondAnswers();
  if (geteuid() != 0) {
    // An LTTNG_HOME that CMD and the lttng commands inherit: lttng-ust looks for the
    // user's daemon there, not in $HOME/.lttng, where a daemon of the user's (a `record
    // -p`'s, say) takes the user's other processes with an agent. $HOME may not be
    // writable, either.
    char home[] = "/tmp/jitprov-lttng-XXXXXX";  // short: the daemon's sockets are in it
    if (mkdtemp(home) == nullptr) return std::string("a directory for lttng in /tmp: ") + std::strerror(errno);
    r.lttng_home = home;
    setenv("LTTNG_HOME", home, 1);
    // A daemon answers there before ours runs: root's, which liblttng-ctl asks first for
    // a member of the Unix tracing group (a distribution's lttng-sessiond.service). Such
    // a user's lttng-sessiond refuses to start beside it ("already running"), and the
    // user's lttng and CMD's processes reach root's: used, with what that costs said.
    // (Not joinShared(): no keeper of ours stops root's daemon. The LTTNG_HOME stays,
    // for the lttng client's .lttngrc: $HOME may not be writable.)
    if (sessiondAnswers()) {
      r.sessiond_kind = "existing";
      r.beside_running = false;
      std::fprintf(stderr,
                   "jitprov record: lttng-sessiond: a member of the Unix tracing group cannot run one of its own "
                   "beside root's: recorded by root's, which records this user's other processes with an agent too\n");
      return startSession(r, vpid);
    }
  }
  std::string why;
  r.sessiond = startPrivateSessiond(r.dir + "/lttng-sessiond.log", &why);
  if (r.sessiond == 0) {
    removeLttngHome(r);
    return "a private lttng-sessiond failed: " + why;
  }
  return startSession(r, vpid);
}

// The end of every recording: jitprov-lockwait stopped, the session stopped (its data
// flushed) and destroyed, the daemon stopped, perf's data injected, the trace verified;
// the summary `s` completed, written and printed. The exit status.
int finishRecording(Recording& r, nlohmann::json s, int status, const std::string& reason, double seconds, bool perf) {
  Progress progress("jitprov record: stopping the session");
  int lockwait_exit = -1;
  if (r.lockwait > 0) lockwait_exit = stopHelper(r.lockwait, SIGINT, std::chrono::seconds(10));
  r.lockwait = 0;
  const Ran stopped = run({"lttng", "stop", r.session});
  const Ran destroyed = run({"lttng", "destroy", r.session});
  stopSessiond(r.sessiond);
  r.sessiond = 0;
  if (r.shared.release())
    std::fprintf(stderr,
                 "jitprov record: the lttng-sessiond this recording started stays, for another jitprov record -p "
                 "that uses it; it stops when the last one ends\n");
  removeLttngHome(r);
  // lttng that failed to stop or destroy the session: its data may not all be on disk.
  // Not verified, said in the summary, which is still written (CMD's status, the lock
  // waits and perf's figures are in it).
  std::string lttng_error;
  if (stopped.status != 0 || destroyed.status != 0)
    lttng_error = "lttng " + std::string(stopped.status != 0 ? "stop" : "destroy") + " " + r.session + ": " +
                  firstLine(stopped.status != 0 ? stopped.output : destroyed.output);
  int exit_status = status;
  std::string exit_reason = reason + ", after " + fmtSeconds(seconds) + " s";
  if (lockwait_exit >= 0) {
    std::string bad;
    const std::string lw = readFile(r.dir + "/lockwait.json");
    nlohmann::json last, figures;
    try {
      last = nlohmann::json::parse(lastLine(lw));
      if (last.is_object()) figures = lockwaitFigures(last);  // throws on a field of another type
    } catch (const std::exception&) {
      last = nullptr;
    }
    s["lockwait_exit"] = lockwait_exit;
    if (figures.is_object()) s["lock_waits"] = figures;
    if (!figures.is_object() || (lockwait_exit != 0 && lockwait_exit != 3)) {
      s["lock_waits_error"] =
          "jitprov-lockwait exit " + std::to_string(lockwait_exit) + ": " + lastLine(readFile(r.dir + "/lockwait.log"));
    }
  }
  if (perf) {
    progress.set("jitprov record: perf inject --jit");
    nlohmann::json figures;
    if (const std::string why = injectPerf(r.dir, &figures); !why.empty())
      s["perf_error"] = why;
    else
      s["perf"] = figures;
  }
  if (!lttng_error.empty()) {
    std::fprintf(stderr, "jitprov record: %s\n", lttng_error.c_str());
    s["verdict"] = "NOT VERIFIED: " + lttng_error;
    s["verify_exit"] = nullptr;
    exit_status = kRecordLttng;
    exit_reason = "lttng failed; " + exit_reason;
  } else if (!declaresJitprovEvents(r.trace)) {
    // No process with the agent registered with the session (ours, before CMD, declares
    // none): CMD ran no traced runtime (or exited first).
    s["verdict"] = "nothing recorded: no process loaded jitprov's agent";
    s["verify_exit"] = nullptr;
    if (s.contains("pid")) {
      // -p: the agent is in PID, but its lttng-ust never found the session daemon (the
      // target in another mount namespace: a container), or it exited at once.
      s["verdict"] = "nothing recorded: the agent in " + s["command_line"].get<std::string>() +
                     " did not register with the lttng-sessiond (a process in another mount namespace, or gone)";
      exit_status = kRecordNotVerified;
      exit_reason = "nothing recorded; " + exit_reason;
    }
  } else {
    progress.set("jitprov record: verifying the trace");
    const std::string vjson = r.dir + "/verify.json";
    // A signal now (Ctrl-C on a long verification) stops the verifier: the summary says so.
    const sig_atomic_t signals_before = g_signals;
    const Ran v = run({r.verifier, "--json", r.trace}, vjson, [signals_before] { return g_signals != signals_before; });
    nlohmann::json vj;
    std::ifstream in(vjson);
    try {
      in >> vj;
    } catch (const std::exception&) {
      vj = nullptr;
    }
    if (v.stopped) {
      const std::string why = std::string("stopped by SIG") + sigabbrev_np(g_signal) +
                              " during the verification (to verify it: jitprov-verify " + r.trace + ")";
      std::fprintf(stderr, "jitprov record: %s\n", why.c_str());
      s["verdict"] = "NOT VERIFIED: " + why;
      s["verify_exit"] = nullptr;
      exit_status = kRecordNotVerified;
      exit_reason = "the trace was not verified; " + exit_reason;
    } else if (v.status < 0 || !vj.is_object()) {
      // Killed (the OOM killer on a large trace, a crash), or no JSON: the summary still
      // written, with CMD's status and what else was measured, and the verdict says it.
      const std::string why =
          "jitprov-verify " +
          (v.signal != 0 ? "was killed by signal " + std::to_string(v.signal) + " (" + strsignal(v.signal) + ")"
                         : "gave no verdict (exit " + std::to_string(v.status) + ")") +
          (v.output.empty() ? std::string() : ": " + firstLine(v.output));
      std::fprintf(stderr, "jitprov record: %s\n", why.c_str());
      s["verdict"] = "NOT VERIFIED: " + why;
      s["verify_exit"] = nullptr;
      exit_status = kRecordNotVerified;
      exit_reason = "the trace was not verified; " + exit_reason;
    } else {
      s.update(summarize(vj, r.runtime_name));
      s["verify_exit"] = v.status;
      s["not_checked"] = vj.value("not_checked", nlohmann::json::array());
      const std::string verdict = vj.value("verdict", std::string());
      // 0: everything holds; 4: nothing violated, something not checked (a rundown a
      // runtime's exit cut short, a process without a rundown): said, not failed.
      if (v.status == 0) {
        s["verdict"] = "verified: " + verdict;
      } else if (v.status == 4) {
        s["verdict"] = "verified, not all: " + verdict + " (" + std::to_string(s["not_checked"].size()) +
                       " not checked: " + (s["not_checked"].empty() ? "" : s["not_checked"][0].get<std::string>()) +
                       ")";
        // -p on a process whose agent an earlier attach loaded: the code it published
        // before this session has no method_load here, which is what went unchecked.
        if (s.contains("attach") && s["attach"] == kLoadedAlready)
          s["verdict"] = s["verdict"].get<std::string>() +
                         "; the agent was loaded before this recording: what it published earlier has no "
                         "method_load in this trace, only its records in the rundowns";
      } else {
        s["verdict"] = "NOT VERIFIED: " + (verdict.empty() ? firstLine(v.output) : verdict) + " (jitprov-verify exit " +
                       std::to_string(v.status) + ", its report: " + vjson + ")";
        exit_status = kRecordNotVerified;
        exit_reason = "the trace did not verify; " + exit_reason;
      }
    }
  }
  progress.stop();
  s["exit_status"] = exit_status;
  s["exit_reason"] = exit_reason;
  s["summary"] = r.dir + "/summary.json";
  {
    const std::string tmp = r.dir + "/summary.json.tmp";
    std::ofstream o(tmp);
    o << jitprov::tools::jsonText(s, 2) << "\n";
    o.close();
    if (!o || rename(tmp.c_str(), (r.dir + "/summary.json").c_str()) != 0)
      std::fprintf(stderr, "jitprov record: cannot write %s/summary.json\n", r.dir.c_str());
  }
  std::fflush(stdout);
  // A reader of stdout gone (`| head -1`): the write fails (EPIPE, said below) instead of
  // killing jitprov. Not earlier: CMD would inherit SIGPIPE ignored.
  signal(SIGPIPE, SIG_IGN);
  printSummary(s);
  if (g_stdout_closed || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "jitprov record: the summary could not be written to stdout (%s); it is in %s/summary.json\n",
                 g_stdout_closed ? "closed" : std::strerror(errno), r.dir.c_str());
    if (exit_status == 0) return kRecordNoStdout;
  }
  return exit_status;
}

// The signals jitprov passes on (to CMD), or notes (with -p), from now on. SIGHUP (the
// terminal closed) and SIGQUIT (Ctrl-\: a JVM's thread dump) too, unless ignored
// (nohup): by their default action they would end jitprov, and leave the session and a
// private lttng-sessiond behind.
void catchSignals() {
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
}

// The checks of the tools --perf and --lockwait need, before anything starts: "" or why.
std::string checkExtras(const RecordArgs& a) {
  int err = 0;
  if (a.perf && findCommand("perf", &err).empty())
    return "--perf: perf is not installed (Debian: linux-perf); record without --perf, or install it";
  // perf record as record runs it, on `true`: where it may not open its events (a user
  // under kernel.perf_event_paranoid 3, Debian's default; a container), it would fail
  // before CMD ran, and CMD's status would be perf's 255.
  if (a.perf) {
    const Ran probe = run({"perf", "record", "-k", "1", "-F", "999", "-N", "-q", "-o", "/dev/null", "--", "true"});
    if (probe.status != 0)
      return "--perf: perf record cannot run here (exit " + std::to_string(probe.status) +
             "): " + firstLine(probe.output);
  }
  if (a.lockwait && geteuid() != 0) return "--lockwait: jitprov-lockwait attaches BPF uprobes, which needs root";
  return {};
}

// Whether a path can go into the agents' options (KEY=VALUE items split at ',', and the
// JVM's -agentpath in JAVA_TOOL_OPTIONS split at blanks).
bool fitsOptions(const std::string& path) { return path.find_first_of(", \t=") == std::string::npos; }

// --perf needs the agent's jitdump in DIR: "" or why DIR cannot hold it.
std::string checkPerfDir(const RecordArgs& a, const std::string& dir) {
  if (!a.perf || fitsOptions(dir)) return {};
  return "--perf: " + dir +
         " holds a ',', '=', blank or tab, which the agent's options cannot carry, and its jitdump goes there: "
         "-o a path without them";
}

// The agent's options: its triggers, every:SECS, jitdump (--perf), its counters.
std::string agentOptions(const RecordArgs& a, const std::string& dir, const std::string& triggers) {
  std::string options = "trigger=" + triggers;
  if (a.rundown_every > 0) {
    char b[64];
    std::snprintf(b, sizeof b, ",every:%g", a.rundown_every);
    options += b;
  }
  // The agent's counters and the jitdump beside the trace, when the path cannot break
  // the option list (--perf refuses such a DIR: checkPerfDir).
  if (fitsOptions(dir)) {
    if (a.perf) options += ",jitdump=" + dir + "/jitdump";
    options += ",stats=" + dir + "/agent-%p.json";
  } else {
    std::fprintf(stderr,
                 "jitprov record: the agent's counters are not kept (%s holds a ',', '=', blank or tab, which its "
                 "options cannot carry)\n",
                 dir.c_str());
  }
  return options;
}

// How long record -p waits for the target's registration (waitRegistered).
constexpr std::chrono::milliseconds kRegisterWait{8000};

// Waits until `lttng list -u` (the session daemon's registered applications) names vpid,
// every 50 ms, up to kRegisterWait, a signal or the target's end: the milliseconds it
// took, -1 if it did not come.
double waitRegistered(pid_t vpid, const TargetInfo& t) {
  const auto start = std::chrono::steady_clock::now();
  const std::string line = "PID: " + std::to_string(vpid) + " ";
  for (;;) {
    const Ran l = run({"lttng", "list", "-u"});
    if (l.status == 0 && (l.output.starts_with(line) || l.output.find("\n" + line) != std::string::npos))
      return std::round(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() *
                        10) /
             10;
    if (g_signal != 0 || !targetAlive(t) || std::chrono::steady_clock::now() - start >= kRegisterWait) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// `jitprov record -p PID [-d SECS]`: the agent attached to a running process, recorded
// until SECS pass, a signal comes or the process exits.
int recordPid(const RecordArgs& a) {
  int err = 0;
  if (findCommand("lttng", &err).empty() || findCommand("lttng-sessiond", &err).empty())
    return fail(kRecordLttng, "lttng and lttng-sessiond are needed (Debian: lttng-tools)");
  Recording r;
  r.verifier = verifierPath();
  if (findCommand(r.verifier, &err).empty())
    return fail(kRecordNoVerifier,
                r.verifier + " not found (JITPROV_VERIFY, beside jitprov in a build tree, installed, or in PATH)");
  if (const std::string why = checkExtras(a); !why.empty()) return fail(kRecordExtra, why);
  TargetInfo t;
  if (const AttachOutcome o = findStartedTarget(pid_t(a.pid), &t, std::chrono::seconds(10), interrupted);
      o.status != kAttached)
    return fail(kRecordAttach, "-p " + std::to_string(a.pid) + ": " + o.line);
  const bool java = t.target.runtime == Runtime::kHotSpot;
  r.runtime_name = java ? "HotSpot" : t.target.runtime == Runtime::kNode ? "V8" : "CoreCLR";
  if (a.perf && !java)
    return fail(kRecordExtra,
                "--perf with -p: HotSpot only (a .NET process or node reads its jitdump option at start)");
  r.dir = absolute(a.out.empty() ? defaultDir() : a.out);
  if (const std::string why = checkPerfDir(a, r.dir); !why.empty()) return fail(kRecordBadDir, why);
  if (const std::string why = prepareDir(r.dir, &r.dir_made); !why.empty()) return fail(kRecordBadDir, why);
  if (a.perf && mkdir((r.dir + "/jitdump").c_str(), 0755) != 0)
    return abandon(r, kRecordBadDir, "cannot create " + r.dir + "/jitdump: " + std::strerror(errno));
  r.trace = r.dir + "/trace";
  catchSignals();
  // The target is not in our mount namespace's private copy: a private lttng-sessiond
  // must be where it looks for one, in the namespace we share with it.
  if (const std::string why = setUpLttng(r, false, t.target.nspid > 0 ? t.target.nspid : t.target.pid); !why.empty())
    return abandon(r, kRecordLttng, why);
  const std::string options = agentOptions(a, r.dir, "session");
  const std::string who = describe(t);
  if (a.lockwait) {
    std::string why;
    const std::string lib = libjitprovOf(defaultAgentPath(t.target.runtime));
    // libjitprov is mapped once the agent is in: by the library's path (-b), so that the
    // probes are in place before the attach, and of PID alone (-p).
    r.lockwait = lib.empty() ? 0 : startLockwait(r.dir, lib, t.target.pid, &why);
    if (r.lockwait == 0)
      return abandon(r, kRecordExtra, "--lockwait: " + (lib.empty() ? "no libjitprov.so.1 beside the agent" : why));
  }
  pid_t perf = 0;
  if (a.perf) {
    // perf must record the agent's mmap of its jitdump: started before the attach.
    perf = spawn({"perf", "record", "-k", "1", "-F", "999", "-N", "-o", r.dir + "/perf.data", "-p",
                  std::to_string(t.target.pid)},
                 "/dev/null", r.dir + "/perf.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    int st = 0;
    if (perf == 0 || waitpid(perf, &st, WNOHANG) == perf)
      return abandon(
          r, kRecordExtra,
          "--perf: perf record -p " + std::to_string(t.target.pid) + ": " + lastLine(readFile(r.dir + "/perf.log")));
  }
  if (g_signal != 0) {  // Ctrl-C during the set-up: nothing is loaded into the target
    if (perf > 0) stopHelper(perf, SIGINT, std::chrono::seconds(10));
    tearDown(r);
    std::fprintf(stderr, "jitprov record: SIG%s before the attach: nothing loaded into %s\n", sigabbrev_np(g_signal),
                 who.c_str());
    return 128 + g_signal;
  }
  AttachRequest req;
  TargetInfo t2;
  const AttachOutcome o =
      attachProcess(t.target.pid, "", options, std::chrono::seconds(10), &t2, &req, interrupted, t.target.start_ticks);
  std::string attached;
  const bool loaded_already = o.status == kAlreadyLoaded;
  if (loaded_already) {
    attached = kLoadedAlready;
    // Its options are the earlier attach's: what this one asked for is not applied, said
    // when the user asked for it (the summary keeps it apart: agent_options_not_applied).
    std::string asked;
    if (a.rundown_every > 0) asked = "--rundown-every " + fmtSeconds(a.rundown_every);
    if (a.perf) asked += std::string(asked.empty() ? "" : ", ") + "--perf's jitdump (JIT samples go unnamed)";
    if (!asked.empty())
      std::fprintf(stderr,
                   "jitprov record: %s: jitprov's agent was loaded already and keeps its own options: %s not applied\n",
                   who.c_str(), asked.c_str());
  } else if (o.status != kAttached) {
    if (perf > 0) stopHelper(perf, SIGINT, std::chrono::seconds(10));
    if (g_signal != 0 && o.not_yet != AttachOutcome::NotYet::kNo)  // Ctrl-C while it waited for a starting runtime
      return abandon(r, 128 + g_signal,
                     std::string("SIG") + sigabbrev_np(g_signal) + " while " + who +
                         " was starting: nothing loaded into it (" + o.line + ")");
    return abandon(r, o.status == kNoAgent ? kRecordNoAgent : kRecordAttach,
                   "-p " + std::to_string(a.pid) + ": " + o.line);
  } else {
    attached = "attached: " + r.runtime_name + " " + (o.version.empty() ? "(version unknown)" : o.version);
  }
  // The recording starts once the target's lttng-ust is registered with the session
  // daemon: an agent loaded by an earlier recording registered with that one's daemon,
  // and its lttng-ust finds the new one only when it next tries, up to 5 s later (a
  // second `record -p -d 2` recorded nothing: exit 119). Its vpid, as the tracker's.
  const double registered_ms = waitRegistered(t.target.nspid > 0 ? t.target.nspid : t.target.pid, t);
  if (registered_ms < 0 && g_signal == 0 && targetAlive(t))
    std::fprintf(stderr, "jitprov record: %s is not registered with the lttng-sessiond after %.0f s: recording on\n",
                 who.c_str(), kRegisterWait.count() / 1000.0);
  const auto t0 = std::chrono::steady_clock::now();  // -d's clock: from the registration
  if (isatty(2))
    std::fprintf(stderr, "jitprov record: %s %s, into %s (%s lttng-sessiond); Ctrl-C stops\n", who.c_str(),
                 attached.c_str(), r.trace.c_str(), sessiondShown(r));
  // Until -d SECS, a signal, or the target's exit.
  Progress progress("jitprov record: recording " + who +
                    (a.duration > 0 ? " for " + fmtSeconds(a.duration) + " s" : std::string(", Ctrl-C stops")));
  std::string reason;
  for (;;) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (g_signal != 0) {
      reason = std::string("stopped by SIG") + sigabbrev_np(g_signal);
      break;
    }
    if (!targetAlive(t)) {
      reason = who + " exited";
      break;
    }
    if (a.duration > 0 && s >= a.duration) {
      reason = "recorded for " + fmtSeconds(a.duration) + " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  progress.stop();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (perf > 0) stopHelper(perf, SIGINT, std::chrono::seconds(30));
  const std::string runtime = java ? "java" : t.target.runtime == Runtime::kNode ? "node" : "dotnet";
  nlohmann::json s = {
      {"command", nlohmann::json::array()},
      {"command_line", who},
      {"pid", t.target.pid},
      {"attach", attached},
      {"runtime", runtime},
      {"agent", req.agent},
      {"agent_options", loaded_already ? nlohmann::json() : nlohmann::json(options)},
      {"agent_options_not_applied", loaded_already ? nlohmann::json(options) : nlohmann::json()},
      {"preload", nullptr},          // nothing is preloaded into a running process
      {"session_warm_ms", nullptr},  // its session tracks PID alone: a process of ours would not register in it
      {"registered_ms", registered_ms < 0 ? nlohmann::json() : nlohmann::json(registered_ms)},
      {"trace", r.trace},
      {"session", r.session},
      {"sessiond", r.sessiond_kind},
      {"seconds", std::round(seconds * 1000) / 1000},
      {"command_status", nullptr},
      {"command_reason", reason},
      {"signal", g_signal != 0 ? nlohmann::json(std::string("SIG") + sigabbrev_np(g_signal)) : nlohmann::json()}};
  return finishRecording(r, s, 0, reason, seconds, a.perf);
}

}  // namespace

int record(const RecordArgs& a) {
  // SIGCHLD ignored (inherited) would make the kernel reap CMD itself: its status lost.
  signal(SIGCHLD, SIG_DFL);
  // A descriptor 0, 1 or 2 closed (`>&-`): the first file opened would take it, and the
  // summary (or CMD's output, or lttng's) would go into a trace file. /dev/null takes it;
  // a closed stdout is said at the end, where the summary would have gone.
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      if (fd == 1) g_stdout_closed = true;
      const int n = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (n >= 0 && n != fd) {
        (void)dup2(n, fd);  // (dup2 leaves the copy inheritable)
        close(n);
      } else if (n == fd) {
        (void)fcntl(fd, F_SETFD, 0);
      }
    }
  if (a.pid != 0 && !a.cmd.empty())
    return fail(kRecordUsage, "-p PID or CMD, not both: jitprov record -p PID [-d SECS], or jitprov record -- CMD");
  if (a.pid != 0 && !a.runtime.empty())
    return fail(kRecordUsage, "--runtime is for CMD: with -p PID the runtime is the one the process runs");
  if (a.pid != 0) return recordPid(a);
  if (a.duration_given) return fail(kRecordUsage, "-d SECS is for -p PID (CMD's own end stops a recording of CMD)");
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
      runtime == "node" ? (node_preload.empty() ? std::string(JITPROV_AGENT_DIR) + "/node/preload.js" : node_preload)
                        : defaultAgentPath(java ? Runtime::kHotSpot : Runtime::kCoreClr);
  char real[4096];
  if (realpath(agent_wanted.c_str(), real) == nullptr)
    return fail(kRecordNoAgent, "the agent " + agent_wanted + ": " + std::strerror(errno) +
                                    " (not installed? the package " +
                                    agentPackage(java                ? Runtime::kHotSpot
                                                 : runtime == "node" ? Runtime::kNode
                                                                     : Runtime::kCoreClr) +
                                    ")");
  const std::string agent = real;
  if (findCommand("lttng", &err).empty() || findCommand("lttng-sessiond", &err).empty())
    return fail(kRecordLttng, "lttng and lttng-sessiond are needed (Debian: lttng-tools)");
  Recording r;
  r.runtime_name = runtime_name;
  r.verifier = verifierPath();
  if (findCommand(r.verifier, &err).empty())
    return fail(kRecordNoVerifier,
                r.verifier + " not found (JITPROV_VERIFY, beside jitprov in a build tree, installed, or in PATH)");
  if (const std::string why = checkExtras(a); !why.empty()) return fail(kRecordExtra, why);
  r.dir = absolute(a.out.empty() ? defaultDir() : a.out);
  if (const std::string why = checkPerfDir(a, r.dir); !why.empty()) return fail(kRecordBadDir, why);
  if (const std::string why = prepareDir(r.dir, &r.dir_made); !why.empty()) return fail(kRecordBadDir, why);
  if (a.perf && mkdir((r.dir + "/jitdump").c_str(), 0755) != 0)
    return abandon(r, kRecordBadDir, "cannot create " + r.dir + "/jitdump: " + std::strerror(errno));
  r.trace = r.dir + "/trace";
  const std::string& dir = r.dir;
  const std::string& trace = r.trace;

  // Signals: passed on to CMD from now on (recorded before it runs: nothing starts then).
  catchSignals();

  // 2. lttng, and jitprov-lockwait on the library the agent loads (--lockwait).
  if (const std::string why = setUpLttng(r, true); !why.empty()) return abandon(r, kRecordLttng, why);
  if (a.lockwait) {
    std::string why;
    const std::string lib = libjitprovOf(agent);
    r.lockwait = lib.empty() ? 0 : startLockwait(dir, lib, 0, &why);
    if (r.lockwait == 0)
      return abandon(r, kRecordExtra, "--lockwait: " + (lib.empty() ? "no libjitprov.so.1 beside " + agent : why));
  }

  // 3. CMD under the agent (under perf record with --perf: perf must be recording when
  // the agent maps its jitdump, and follows CMD's children).
  const std::string options = agentOptions(a, dir, "session,exit");
  std::vector<std::string> argv = a.cmd;
  std::string exe = path;
  if (a.perf) {
    argv = {"perf", "record", "-k", "1", "-F", "999", "-N", "-q", "-o", dir + "/perf.data", "--"};
    argv.insert(argv.end(), a.cmd.begin(), a.cmd.end());
    exe = findCommand("perf", &err);
  }
  const std::string preload = preloadLibraryPath();  // "": CMD runs without it
  std::string warm_why;
  const double warm_ms = warmSession(&warm_why);
  if (warm_ms < 0)
    std::fprintf(
        stderr,
        "jitprov record: the session's buffers not created ahead (%s): CMD's first registration waits for them\n",
        warm_why.c_str());
  std::string cmd_line;
  for (const std::string& s : a.cmd) cmd_line += (cmd_line.empty() ? "" : " ") + s;
  if (isatty(2))
    std::fprintf(stderr, "jitprov record: %s under jitprov's %s agent, into %s (%s lttng-sessiond)%s%s\n",
                 cmd_line.c_str(), runtime_name.c_str(), trace.c_str(), sessiondShown(r),
                 a.lockwait ? ", jitprov-lockwait beside it" : "", a.perf ? ", under perf record" : "");
  int status = 0;
  std::string reason;
  const auto t0 = std::chrono::steady_clock::now();
  int exec_error = 0;
  if (g_signal != 0) {
    status = 128 + g_signal;
    reason = std::string("not started: jitprov got SIG") + sigabbrev_np(g_signal) + " first";
  } else {
    const pid_t pid = startCommand(exe, argv, agentEnvironment(runtime, agent, options, preload));
    if (pid == -EINTR) {
      status = 128 + g_signal;
      reason = std::string("not started: jitprov got SIG") + sigabbrev_np(g_signal) + " first";
    } else if (pid < 0) {
      exec_error = int(-pid);
    } else {
      int st = 0;
      bool killed = false;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        if (g_interrupts >= 3 && !killed) {
          killTree(pid);
          killed = true;
        }
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
    std::fprintf(stderr, "jitprov record: %s; stopping the session, verifying the trace\n", reason.c_str());
  if (exec_error != 0)  // (its trace: the metadata of record's own registration alone, warmSession)
    return abandon(r, exec_error == ENOENT ? kRecordNotFound : kRecordCannotRun,
                   a.cmd[0] + ": " + std::strerror(exec_error));
  nlohmann::json s = {{"command", a.cmd},
                      {"command_line", cmd_line},
                      {"runtime", runtime},
                      {"agent", agent},
                      {"agent_options", options},
                      {"preload", preload.empty() ? nlohmann::json() : nlohmann::json(preload)},
                      {"session_warm_ms", warm_ms < 0 ? nlohmann::json() : nlohmann::json(warm_ms)},
                      {"trace", trace},
                      {"session", r.session},
                      {"sessiond", r.sessiond_kind},
                      {"sessiond_running_beside", r.beside_running},
                      {"seconds", std::round(seconds * 1000) / 1000},
                      {"command_status", status},
                      {"command_reason", reason},
                      {"signal", got != 0 ? nlohmann::json(std::string("SIG") + sigabbrev_np(got)) : nlohmann::json()}};
  return finishRecording(r, s, status, reason, seconds, a.perf);
}
}  // namespace jitprov::cli
