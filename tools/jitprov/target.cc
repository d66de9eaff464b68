// SPDX-License-Identifier: MIT
#include "target.h"

#include "attach_io.h"
#include "thread_names.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#ifndef JITPROV_AGENT_DIR
#error "JITPROV_AGENT_DIR: the directory the agents are installed in (tools/jitprov/meson.build)"
#endif

namespace jitprov::cli {
namespace {

constexpr int kCapSysPtrace = 19;

std::string baseName(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string dirName(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}

// The fields of a /proc/PID/status line after "Key:", split on blanks.
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line.substr(line.find(':') + 1));
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

AttachOutcome fail(int status, std::string line) { return AttachOutcome{status, std::move(line), {}}; }

}  // namespace

unsigned long long processStartTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t p = stat.rfind(')');  // the command in parentheses may hold anything
  if (p == std::string::npos) return 0;
  std::istringstream fields(stat.substr(p + 1));
  std::string tok;
  for (int field = 3; fields >> tok; ++field)
    if (field == 22) return std::strtoull(tok.c_str(), nullptr, 10);
  return 0;
}

long long processAgeMs(unsigned long long start_ticks) {
  std::ifstream up("/proc/uptime");
  double uptime_s = -1;
  if (!(up >> uptime_s) || start_ticks == 0) return -1;
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? static_cast<long long>(uptime_s * 1000) - static_cast<long long>(start_ticks * 1000 / hz) : -1;
}

std::string describe(const TargetInfo& t) {
  return "PID " + std::to_string(t.target.pid) + (t.comm.empty() ? "" : " (" + printable(t.comm, 64) + ")");
}

int signalTarget(const TargetInfo& t, int sig) {
  const int rc = t.pidfd ? int(syscall(SYS_pidfd_send_signal, *t.pidfd, sig, nullptr, 0)) : kill(t.target.pid, sig);
  return rc == 0 ? 0 : errno;
}

bool targetAlive(const TargetInfo& t) {
  const int err = signalTarget(t, 0);
  if (err != 0 && err != EPERM) return false;
  const char s = processState(t.target.pid);
  return s != '\0' && s != 'Z' && s != 'X';
}

bool havePtraceCapability() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("CapEff:", 0) == 0) {
      const auto f = fields(line);
      return !f.empty() && (std::strtoull(f[0].c_str(), nullptr, 16) >> kCapSysPtrace & 1) != 0;
    }
  return false;
}

bool parseProcStatus(const std::string& status, TargetInfo* t) {
  bool have_uid = false;
  std::istringstream in(status);
  for (std::string line; std::getline(in, line);) {
    const auto f = fields(line);
    if (f.empty()) continue;
    if (line.rfind("Tgid:", 0) == 0) {
      t->tgid = pid_t(std::atoi(f[0].c_str()));
    } else if (line.rfind("NSpid:", 0) == 0) {
      t->target.nspid = pid_t(std::atoi(f.back().c_str()));
    } else if (line.rfind("Uid:", 0) == 0 && f.size() >= 2) {
      t->target.euid = uid_t(std::strtoul(f[1].c_str(), nullptr, 10));
      have_uid = true;
    } else if (line.rfind("Gid:", 0) == 0 && f.size() >= 2) {
      t->target.egid = gid_t(std::strtoul(f[1].c_str(), nullptr, 10));
    } else if (line.rfind("SigCgt:", 0) == 0) {
      t->sig_cgt = std::strtoull(f[0].c_str(), nullptr, 16);
    } else if (line.rfind("SigIgn:", 0) == 0) {
      t->sig_ign = std::strtoull(f[0].c_str(), nullptr, 16);
    } else if (line.rfind("State:", 0) == 0) {
      t->state = f[0][0];
    }
  }
  return have_uid;
}

char processState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("State:", 0) == 0) {
      const auto f = fields(line);
      return f.empty() || f[0].empty() ? '?' : f[0][0];
    }
  return '\0';
}

AttachOutcome findTarget(pid_t pid, TargetInfo* out, unsigned long long born) {
  const std::string proc = "/proc/" + std::to_string(pid);
  TargetInfo t;
  t.target.pid = pid;
  t.target.nspid = pid;
  t.target.root = proc + "/root";
  if (pid > 0) {
    const int fd = int(syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0 && errno == ESRCH) return fail(kNoSuchProcess, "no process " + std::to_string(pid));
    if (fd >= 0) {
      (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
      t.pidfd = std::shared_ptr<const int>(new int(fd), [](const int* p) {
        close(*p);
        delete p;
      });
    }
    // After the pidfd: a pid taken between the two reads gives a start time unlike born.
    t.target.start_ticks = processStartTicks(pid);
    if (born != 0 && t.target.start_ticks != 0 && t.target.start_ticks != born)
      return fail(kNoSuchProcess, "no process " + std::to_string(pid) +
                                      ": the one first seen there exited, and its pid names another process now");
  }
  {
    std::ifstream comm(proc + "/comm");
    std::getline(comm, t.comm);
  }
  std::ifstream status(proc + "/status");
  if (!status) {
    if (errno == ENOENT || errno == ESRCH || pid <= 0) return fail(kNoSuchProcess, "no process " + std::to_string(pid));
    return fail(kError, proc + "/status: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << status.rdbuf();
  const bool have_uid = parseProcStatus(text.str(), &t);
  if (!have_uid) return fail(kNoSuchProcess, "no process " + std::to_string(pid) + " (it exited)");
  if (t.state == 'Z' || t.state == 'X') return fail(kNoSuchProcess, describe(t) + " has exited (a zombie)");
  // /proc/TID exists for every thread too (not listed): a thread id is not a process, and
  // a signal sent to it would reach the whole process (a JVM's SIGQUIT: its thread dump).
  if (t.tgid > 0 && t.tgid != pid) {
    std::string process;
    std::ifstream pcomm("/proc/" + std::to_string(t.tgid) + "/comm");
    std::getline(pcomm, process);
    return fail(kNoSuchProcess, "no process " + std::to_string(pid) + ": it is thread " + std::to_string(pid) + " (" +
                                    t.comm + ") of process " + std::to_string(t.tgid) +
                                    (process.empty() ? "" : " (" + process + ")") + ": give that one");
  }
  if (t.target.euid != geteuid() && !havePtraceCapability())
    return fail(kPermission, describe(t) + " runs as uid " + std::to_string(t.target.euid) + ", not as ours (" +
                                 std::to_string(geteuid()) + "), and we lack CAP_SYS_PTRACE: run as its user or root");
  std::ifstream maps(proc + "/maps");
  if (!maps) {
    // ESRCH: it exited while it was read (its /proc entry still there).
    if (errno == ENOENT || errno == ESRCH)
      return fail(kNoSuchProcess, "no process " + std::to_string(pid) + " (it exited)");
    return fail(kPermission, proc + "/maps: " + std::strerror(errno) + ": may not inspect " + describe(t));
  }
  // The .NET host (dotnet, or its libhostfxr in an apphost): CoreCLR may follow. (java's
  // launcher maps libjvm.so in its first milliseconds: the second any process mapping no
  // runtime is given covers it.)
  bool launcher = false;
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    stripDeleted(path);  // the runtime's library replaced on disk (a package upgraded) since it was mapped
    const std::string base = baseName(path);
    if (base == "libjvm.so" && t.target.runtime == Runtime::kNone) {
      t.target.runtime = Runtime::kHotSpot;
      t.target.runtime_lib = path;
    } else if (base == "libcoreclr.so" && t.target.runtime == Runtime::kNone) {
      t.target.runtime = Runtime::kCoreClr;
      t.target.runtime_lib = path;
    } else if (base == "libjitprov.so.1" || base.rfind("libjitprov.so", 0) == 0) {
      t.target.jitprov_loaded = true;
    } else if (base == "jitprov_node.node") {
      t.node_client_loaded = true;
    } else if (base == "libhostfxr.so") {
      launcher = true;
    } else if (base.rfind("libnode.so", 0) == 0 && t.target.runtime == Runtime::kNone) {
      t.target.runtime = Runtime::kNode;
      t.target.runtime_lib = path;
    }
  }
  if (t.target.runtime == Runtime::kNone) {
    // A node linked statically (Debian's, the official builds): its executable.
    char exe[PATH_MAX];
    const ssize_t n = readlink((proc + "/exe").c_str(), exe, sizeof exe - 1);
    if (n > 0) {
      exe[n] = '\0';
      std::string path = exe;
      stripDeleted(path);
      const std::string b = baseName(path);
      if (b == "node" || b == "nodejs" || b.rfind("node-", 0) == 0 || b.rfind("node2", 0) == 0) {
        t.target.runtime = Runtime::kNode;
        t.target.runtime_lib = path;
      }
      if (b == "dotnet") launcher = true;  // before its host library is mapped
    }
  }
  // node cannot unload an addon: one whose start was refused (an attach's bad options)
  // stays mapped. A started client has its threads (jitprov-publish, and jitprov-rundown,
  // named from its creation).
  if (t.node_client_loaded) {
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(proc + "/task", ec)) {
      std::string name;
      std::ifstream comm(task.path() / "comm");
      std::getline(comm, name);
      if (name == hostagent::kRundownThread || name == hostagent::kPublishThread) {
        t.node_client_started = true;
        break;
      }
    }
  }
  if (t.target.runtime == Runtime::kNode) t.target.jitprov_loaded = t.node_client_started;
  if (t.target.runtime == Runtime::kNone) {
    AttachOutcome o = fail(kNotARuntime, describe(t) +
                                             " runs no runtime jitprov knows: neither libjvm.so nor libcoreclr.so "
                                             "is mapped, nor is it node" +
                                             (launcher ? " (a launcher that has not loaded its runtime yet)" : ""));
    if (launcher) o.not_yet = AttachOutcome::NotYet::kYoung;
    return o;
  }
  *out = std::move(t);
  return AttachOutcome{kAttached, {}, {}};
}

std::string besideInBuildTree(const std::string& subdir, const std::string& name) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  // In a build tree: <build>/tools/jitprov/jitprov beside <build>/tools/jvmti/.
  const std::string built = dirName(dirName(self)) + "/" + subdir + "/" + name;
  struct stat st {};
  return stat(built.c_str(), &st) == 0 ? built : std::string();
}

std::string defaultAgentPath(Runtime runtime) {
  if (runtime == Runtime::kNode) {
    const std::string built = besideInBuildTree("node", "jitprov_node.node");
    return built.empty() ? std::string(JITPROV_AGENT_DIR) + "/node/jitprov_node.node" : built;
  }
  const char* name = runtime == Runtime::kHotSpot ? "libjitprov-jvmti.so" : "libjitprov-dotnet.so";
  const std::string built = besideInBuildTree(runtime == Runtime::kHotSpot ? "jvmti" : "dotnet", name);
  return built.empty() ? std::string(JITPROV_AGENT_DIR) + "/" + name : built;
}

std::string preloadLibraryPath() {
  std::string path = besideInBuildTree("preload", "libjitprov-preload.so");
  if (path.empty()) path = std::string(JITPROV_AGENT_DIR) + "/libjitprov-preload.so";
  struct stat st {};
  // The loader splits LD_PRELOAD at blanks and colons and expands $ORIGIN, $LIB, $PLATFORM.
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || path.find_first_of(" \t:$") != std::string::npos)
    return {};
  return path;
}

const char* agentPackage(Runtime runtime) {
  return runtime == Runtime::kHotSpot ? "jitprov-jvm" : runtime == Runtime::kNode ? "jitprov-node" : "jitprov-dotnet";
}

AttachOutcome findAgent(const TargetInfo& t, const std::string& requested, std::string* path) {
  std::string p = requested.empty() ? defaultAgentPath(t.target.runtime) : requested;
  char real[PATH_MAX];
  if (realpath(p.c_str(), real) == nullptr)
    return fail(kNoAgent, "the agent " + p + ": " + std::strerror(errno) +
                              (requested.empty() ? std::string(" (not installed? the package ") +
                                                       agentPackage(t.target.runtime) + "; --agent PATH names one)"
                                                 : std::string()));
  p = real;
  struct stat ours {
  }, theirs{};
  if (stat(p.c_str(), &ours) != 0 || !S_ISREG(ours.st_mode))
    return fail(kNoAgent, "the agent " + p + " is not a regular file");
  const std::string inside = t.target.root + p;
  if (stat(inside.c_str(), &theirs) != 0 || theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino)
    return fail(kNoAgent, "the agent " + p + " is not visible inside the file system of " + describe(t) +
                              " (another mount namespace: install it there, or mount it at the same path)");
  *path = p;
  return AttachOutcome{kAttached, {}, {}};
}

std::string nodeVersion(const TargetInfo& t) {
  static std::map<std::pair<dev_t, ino_t>, std::string> cache;
  const int fd = open(("/proc/" + std::to_string(t.target.pid) + "/exe").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  std::string v;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const auto key = std::make_pair(st.st_dev, st.st_ino);
    if (auto it = cache.find(key); it != cache.end()) {
      close(fd);
      return it->second;
    }
    // A libnode.so's version is in the library, not in the executable.
    const int lib = t.target.runtime_lib.find("libnode.so") != std::string::npos
                        ? open((t.target.root + t.target.runtime_lib).c_str(), O_RDONLY | O_CLOEXEC)
                        : -1;
    const int src = lib >= 0 ? lib : fd;
    struct stat ss {};
    if (fstat(src, &ss) == 0 && S_ISREG(ss.st_mode) && ss.st_size > 0) {
      void* m = mmap(nullptr, size_t(ss.st_size), PROT_READ, MAP_PRIVATE, src, 0);
      if (m != MAP_FAILED) {
        static const char kNeedle[] = "nodejs.org/download/release/v";
        const char* base = static_cast<const char*>(m);
        const void* hit = memmem(base, size_t(ss.st_size), kNeedle, sizeof kNeedle - 1);
        if (hit != nullptr) {
          const char* p = static_cast<const char*>(hit) + sizeof kNeedle - 1;
          const char* end = base + ss.st_size;
          while (p < end && v.size() < 32 && (std::isdigit(static_cast<unsigned char>(*p)) || *p == '.'))
            v.push_back(*p++);
        }
        munmap(m, size_t(ss.st_size));
      }
    }
    if (lib >= 0) close(lib);
    cache[key] = v;
  }
  close(fd);
  return v;
}

}  // namespace jitprov::cli
