// SPDX-License-Identifier: MIT
// HotSpot's attach protocol (JDK 17, Linux), written from its description in
// docs/attach.md:
//   - the listener's socket is /tmp/.java_pid<NSPID> in the JVM's mount namespace
//     (reached as /proc/PID/root/tmp), owned by the JVM's euid, mode 0600;
//   - when it is absent, a file .attach_pid<NSPID> owned by the JVM's euid in its cwd (or
//     its /tmp) and one SIGQUIT make the JVM start the listener; a JVM that does not catch
//     SIGQUIT (-Xrs) dies of it, so it is never sent one;
//   - the request is five NUL-terminated strings, "1\0load\0PATH\0true\0OPTIONS\0"; the
//     JVM checks the peer's euid and egid (SO_PEERCRED: root, or its own) and answers
//     "STATUS\n" and the command's output, here "return code: N\n", then closes.
#include "hotspot_attach.h"

#include "attach_codes.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace jitprov::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned long long kSigQuitBit = 1ull << (SIGQUIT - 1);

AttachOutcome out(int status, std::string line, std::string version = {}) {
  return AttachOutcome{status, std::move(line), std::move(version)};
}

template <typename T>
T readAt(const std::string& b, size_t off, bool big) {
  T v{};
  std::memcpy(&v, b.data() + off, sizeof v);
  if (big) {
    if constexpr (sizeof(T) == 4) v = T(__builtin_bswap32(uint32_t(v)));
  }
  return v;
}

// hsperfdata: the JVM's performance counters (/tmp/hsperfdata_USER/NSPID), the file
// whose euid is the JVM's.
PerfData readPerfData(const TargetInfo& t) {
  PerfData pd;
  const std::string tmp = t.target.root + "/tmp";
  DIR* d = opendir(tmp.c_str());
  if (d == nullptr) return pd;
  std::string file;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "hsperfdata_", 11) != 0) continue;
    const std::string f = tmp + "/" + e->d_name + "/" + std::to_string(t.target.nspid);
    struct stat st {};
    if (stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == t.target.euid) {
      file = f;
      break;
    }
  }
  closedir(d);
  if (file.empty()) return pd;
  std::ifstream in(file, std::ios::binary);
  return parsePerfData(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
}

}  // namespace

PerfData parsePerfData(const std::string& b) {
  PerfData pd;
  if (b.size() < 32 || uint8_t(b[0]) != 0xca || uint8_t(b[1]) != 0xfe || uint8_t(b[2]) != 0xc0 || uint8_t(b[3]) != 0xc0)
    return pd;
  const bool big = b[4] == 0;
  const int32_t entry_offset = readAt<int32_t>(b, 24, big), entries = readAt<int32_t>(b, 28, big);
  size_t off = size_t(entry_offset);
  for (int32_t i = 0; i < entries && off + 20 <= b.size(); ++i) {
    const int32_t len = readAt<int32_t>(b, off, big), name_off = readAt<int32_t>(b, off + 4, big),
                  vlen = readAt<int32_t>(b, off + 8, big), data_off = readAt<int32_t>(b, off + 16, big);
    const char type = b[off + 12];
    if (len <= 0 || off + size_t(len) > b.size()) break;
    if (name_off > 0 && size_t(name_off) < size_t(len) && type == 'B' && vlen > 0 && data_off > 0 &&
        size_t(data_off) + size_t(vlen) <= size_t(len)) {
      const std::string name(b.c_str() + off + size_t(name_off));
      std::string value(b.data() + off + size_t(data_off), size_t(vlen));
      value = value.substr(0, value.find('\0'));
      if (name == "sun.rt.jvmCapabilities")
        pd.capabilities = value;
      else if (name == "java.property.java.vm.version")
        pd.vm_version = value;
      else if (name == "java.property.java.home")
        pd.java_home = value;
    }
    off += size_t(len);
  }
  pd.found = true;
  return pd;
}

// The JVM's version: JAVA_VERSION= of its java.home's release file (java.home: the
// directory above lib/server/libjvm.so, or hsperfdata's), else hsperfdata's
// java.vm.version up to its '+'.
static std::string javaVersion(const TargetInfo& t, const PerfData& pd) {
  std::vector<std::string> homes;
  if (!pd.java_home.empty()) homes.push_back(pd.java_home);
  std::string lib = t.target.runtime_lib;
  for (int up = 0; up < 3 && lib.rfind('/') != std::string::npos; ++up) lib = lib.substr(0, lib.rfind('/'));
  if (!lib.empty()) homes.push_back(lib);
  for (const std::string& h : homes) {
    std::ifstream rel(t.target.root + h + "/release");
    for (std::string line; std::getline(rel, line);)
      if (line.rfind("JAVA_VERSION=", 0) == 0) {
        std::string v = line.substr(13);
        if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
        if (!v.empty()) return v;
      }
  }
  return pd.vm_version.substr(0, pd.vm_version.find('+'));
}

std::string hotspotVersion(const TargetInfo& t) { return javaVersion(t, readPerfData(t)); }

namespace {

int majorOf(const std::string& v) {
  // "17.0.21", "11.0.2", "1.8.0_392" (8), "21"
  if (v.rfind("1.", 0) == 0) return std::atoi(v.c_str() + 2);
  return std::atoi(v.c_str());
}

bool isJvmSocket(const std::string& path, uid_t owner) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == owner;
}

bool alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// Waits while PID is stopped (State T: SIGSTOP, or t: a tracer holds it). False at the
// deadline. Nothing is sent to a stopped JVM: a request it reads late would load the
// agent after we reported a time-out.
bool waitRunning(pid_t pid, Clock::time_point deadline) {
  for (;;) {
    const char s = processState(pid);
    if (s != 'T' && s != 't') return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct Child {
  const TargetInfo& t;
  const AttachRequest& r;
  bool disabled;  // hsperfdata says -XX:+DisableAttachMechanism
  Clock::time_point deadline;

  std::string who() const { return describe(t); }
  std::string secs() const { return std::to_string(r.timeout.count() / 1000.0).substr(0, 4) + " s"; }

  AttachOutcome timedOut(const std::string& what) const {
    if (!alive(t.target.pid)) return out(kNoSuchProcess, who() + " exited during the attach");
    const char s = processState(t.target.pid);
    if (s == 'T' || s == 't')
      return out(kTimedOut, who() + " is stopped (state " + s + "): " + what + " within " + secs());
    return out(kTimedOut, who() + ": " + what + " within " + secs());
  }

  // The trigger: .attach_pid<NSPID> in the JVM's cwd, else in its /tmp; ours (we run with
  // its euid), so that the JVM accepts it. "" when neither could be made.
  std::string createTrigger() const {
    const std::string name = "/.attach_pid" + std::to_string(t.target.nspid);
    const std::string dirs[] = {"/proc/" + std::to_string(t.target.pid) + "/cwd", t.target.root + "/tmp"};
    for (const std::string& dir : dirs) {
      const std::string p = dir + name;
      const int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0660);
      if (fd < 0) continue;
      struct stat st {};
      const bool ours = fstat(fd, &st) == 0 && st.st_uid == geteuid();
      close(fd);
      if (ours) return p;
      unlink(p.c_str());
    }
    return {};
  }

  // Starts the attach listener: trigger file, one SIGQUIT, poll for the socket with
  // backoff (20 ms, +20 ms a round, at most 200 ms) until the deadline.
  AttachOutcome startListener(const std::string& sock) const {
    if (!waitRunning(t.target.pid, deadline)) return timedOut("no attach listener, and it did not run");
    const std::string trigger = createTrigger();
    if (trigger.empty())
      return out(kPermission, who() + ": could not create .attach_pid" + std::to_string(t.target.nspid) +
                                  " in its working directory nor in its /tmp as uid " + std::to_string(geteuid()));
    if (kill(t.target.pid, SIGQUIT) != 0) {
      const int err = errno;
      unlink(trigger.c_str());
      if (err == ESRCH) return out(kNoSuchProcess, who() + " exited during the attach");
      return out(kPermission, who() + ": SIGQUIT: " + std::strerror(err));
    }
    int step = 20;
    bool up = false;
    while (!(up = isJvmSocket(sock, t.target.euid)) && Clock::now() < deadline && alive(t.target.pid)) {
      std::this_thread::sleep_for(
          std::min(std::chrono::milliseconds(step),
                   std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()) +
                       std::chrono::milliseconds(1)));
      step = std::min(step + 20, 200);
    }
    unlink(trigger.c_str());
    if (up) return out(kAttached, {});
    if (!alive(t.target.pid)) return out(kNoSuchProcess, who() + " exited during the attach");
    if (disabled)
      return out(kAttachDisabled, who() + ": attach mechanism disabled (-XX:+DisableAttachMechanism): no listener");
    const char s = processState(t.target.pid);
    if (s == 'T' || s == 't') return timedOut("attach listener not started");
    return out(kTimedOut, who() + ": attach mechanism disabled or JVM not responding: no attach listener within " +
                              secs() + " of a SIGQUIT");
  }

  AttachOutcome run() const {
    const std::string sock = t.target.root + "/tmp/.java_pid" + std::to_string(t.target.nspid);
    if (!isJvmSocket(sock, t.target.euid)) {
      struct stat st {};
      if (lstat(sock.c_str(), &st) == 0)
        return out(kError, who() + ": " + sock + " is not a socket owned by its uid " + std::to_string(t.target.euid) +
                               ": not trusted");
      if (AttachOutcome o = startListener(sock); o.status != kAttached) return o;
    }
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (fd < 0 || sock.size() >= sizeof addr.sun_path)
      return out(kError, "socket: " + std::string(std::strerror(errno)));
    std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const int err = errno;
      close(fd);
      if (err == ECONNREFUSED)
        return out(disabled ? kAttachDisabled : kError,
                   who() + ": " + sock + " refuses connections (a stale socket: no listener)" +
                       (disabled ? ", and attach is disabled (-XX:+DisableAttachMechanism)" : ""));
      if (err == EACCES || err == EPERM)
        return out(kPermission, who() + ": connect " + sock + ": " + std::strerror(err));
      return out(kError, who() + ": connect " + sock + ": " + std::strerror(err));
    }
    if (!waitRunning(t.target.pid, deadline)) {
      close(fd);
      return timedOut("request not sent");
    }
    std::string req("1\0load\0", 7);
    req += r.agent;
    req.push_back('\0');
    req.append("true\0", 5);
    req += r.options;
    req.push_back('\0');
    for (size_t done = 0; done < req.size();) {
      const ssize_t n = send(fd, req.data() + done, req.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        close(fd);
        return out(
            err == EPIPE || err == ECONNRESET ? kPermission : kError,
            who() + ": send the request: " + std::strerror(err) +
                (err == EPIPE || err == ECONNRESET ? " (the JVM closed the connection: our uid/gid refused?)" : ""));
      }
      done += size_t(n);
    }
    std::string reply;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        close(fd);
        return timedOut("no reply to the load request (the agent may still be starting)");
      }
      pollfd p{fd, POLLIN, 0};
      const int pr = poll(&p, 1, int(left));
      if (pr < 0 && errno == EINTR) continue;
      if (pr <= 0) continue;
      char buf[1024];
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        close(fd);
        return out(kError, who() + ": read the reply: " + std::strerror(err));
      }
      if (n == 0) break;
      reply.append(buf, size_t(n));
    }
    close(fd);
    return parseLoadReply(reply, who());
  }
};

// Switches to the target's egid and euid (needs CAP_SETGID/CAP_SETUID when they are
// not ours already). "" or why not.
std::string becomeTarget(const Target& t) {
  if (getegid() != t.egid && setegid(t.egid) != 0)
    return "setegid(" + std::to_string(t.egid) + "): " + std::strerror(errno);
  if (geteuid() != t.euid && seteuid(t.euid) != 0)
    return "seteuid(" + std::to_string(t.euid) + "): " + std::strerror(errno);
  return {};
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

}  // namespace

AttachOutcome parseLoadReply(const std::string& reply, const std::string& who) {
  if (reply.empty())
    return out(kPermission, who +
                                " closed the attach connection without a reply: it refused our uid/gid "
                                "(it accepts root or its own euid and egid)");
  std::istringstream in(reply);
  std::string first, second, rest;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, rest, '\0');
  auto oneLine = [](std::string s) {
    for (char& c : s)
      if (c == '\n') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  if (first == "0") {
    // "return code: N" with N a whole number; anything else (a reply cut short) is not
    // read as code 0.
    char* end = nullptr;
    const long code_l =
        second.rfind("return code: ", 0) == 0 && second.size() > 13 ? std::strtol(second.c_str() + 13, &end, 10) : 0;
    if (end != nullptr && end != second.c_str() + 13 && *end == '\0' && code_l >= INT32_MIN && code_l <= INT32_MAX) {
      const int code = int(code_l);
      if (code == jvmti::kOnAttachOk) return out(kAttached, {});
      if (code == jvmti::kOnAttachAlreadyLoaded)
        return out(kAlreadyLoaded, "jitprov is already loaded in " + who + ": nothing registered twice");
      return out(kAgentFailed, "the agent refused to start in " + who + " (return code " + std::to_string(code) + ": " +
                                   jvmti::onAttachCodeName(code) + "); its reason is on the JVM's stderr");
    }
    return out(kAgentFailed, who + ": " + oneLine(second + "\n" + rest));
  }
  const std::string text = oneLine(second + "\n" + rest);
  if (first == "-1" && text.find("Dynamic agent loading is not enabled") != std::string::npos)
    return out(kAttachDisabled, who + ": " + text);
  if (first == "-1" &&
      (text.find("was not loaded") != std::string::npos || text.find("Agent_OnAttach") != std::string::npos))
    return out(kAgentFailed, who + ": " + text);
  return out(kError, who + ": unexpected reply \"" + oneLine(first) + "\": " + text);
}

AttachOutcome attachHotSpot(const TargetInfo& t, const AttachRequest& r) {
  const PerfData pd = readPerfData(t);
  const std::string version = javaVersion(t, pd);
  const std::string who = describe(t);
  if (version.empty()) return out(kError, who + ": its Java version is unknown (no release file, no hsperfdata)");
  if (majorOf(version) < kMinHotSpotMajor)
    return out(
        kRuntimeTooOld,
        who + " runs HotSpot " + version + ": jitprov attaches to " + std::to_string(kMinHotSpotMajor) + " and later",
        version);
  const bool disabled = pd.found && !pd.capabilities.empty() && pd.capabilities[0] == '0';
  const std::string sock = t.target.root + "/tmp/.java_pid" + std::to_string(t.target.nspid);
  struct stat st {};
  if (lstat(sock.c_str(), &st) != 0) {
    // The listener must be started with a SIGQUIT: only when that cannot harm the JVM.
    if (disabled)
      return out(kAttachDisabled, who + ": attach mechanism disabled (-XX:+DisableAttachMechanism): no SIGQUIT sent",
                 version);
    if ((t.sig_cgt & kSigQuitBit) == 0 || (t.sig_ign & kSigQuitBit) != 0)
      return out(kAttachDisabled,
                 who +
                     " has no attach listener and does not catch SIGQUIT (-Xrs, or not started yet): no SIGQUIT "
                     "sent, it would end the JVM",
                 version);
  }
  if (r.agent.size() > 1024 || r.options.size() > 1024)
    return out(kUsage, "the agent path and the options are at most 1024 bytes each (HotSpot's limit)", version);

  // A single-threaded child with the target's credentials: the trigger file owned by
  // them, the connection checked against them (SO_PEERCRED).
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return out(kError, std::string("pipe: ") + std::strerror(errno), version);
  const auto deadline = Clock::now() + r.timeout;
  const pid_t child = fork();
  if (child < 0) return out(kError, std::string("fork: ") + std::strerror(errno), version);
  if (child == 0) {
    close(pipefd[0]);
    AttachOutcome o;
    if (const std::string why = becomeTarget(t.target); !why.empty())
      o = out(kPermission, who + ": cannot take its credentials: " + why);
    else
      o = Child{t, r, disabled, deadline}.run();
    (void)writeAll(pipefd[1], std::to_string(o.status) + " " + o.line);
    _exit(0);
  }
  close(pipefd[1]);
  std::string msg;
  const auto hard = deadline + std::chrono::seconds(5);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(hard - Clock::now()).count();
    pollfd p{pipefd[0], POLLIN, 0};
    const int pr = left > 0 ? poll(&p, 1, int(left)) : 0;
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) {
      kill(child, SIGKILL);  // our own child, stuck past its deadline
      break;
    }
    char buf[512];
    const ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg.append(buf, size_t(n));
  }
  close(pipefd[0]);
  int ws = 0;
  while (waitpid(child, &ws, 0) < 0 && errno == EINTR) {
  }
  const size_t sp = msg.find(' ');
  if (sp == std::string::npos) return out(kError, who + ": the attach helper process failed", version);
  return out(std::atoi(msg.c_str()), msg.substr(sp + 1), version);
}

}  // namespace jitprov::cli
